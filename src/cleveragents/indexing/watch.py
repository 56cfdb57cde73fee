"""Watching resource directories (watchdog) and re-indexing when files settle."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from .sources import IGNORED_DIRS

# Editors write in bursts (temp file, rename, chmod): wait for this much quiet.
SETTLE_SECONDS = 0.3


class _Dirty(FileSystemEventHandler):
    def __init__(self) -> None:
        self.changed_at: float | None = None
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = str(event.src_path)
        if event.event_type in ("opened", "closed_no_write") or any(f"/{d}/" in path for d in IGNORED_DIRS):
            return
        with self.lock:
            self.changed_at = time.monotonic()

    def take_if_settled(self) -> bool:
        with self.lock:
            if self.changed_at is None or time.monotonic() - self.changed_at < SETTLE_SECONDS:
                return False
            self.changed_at = None
            return True


def watch(roots: Iterable[tuple[str, Path]], on_change: Callable[[str], None], *, poll: float = 0.1) -> None:
    """Call ``on_change(key)`` each time files under a root change and settle; runs until interrupted."""
    observer = Observer()
    handlers: dict[str, _Dirty] = {}
    for key, root in roots:
        handlers[key] = _Dirty()
        observer.schedule(handlers[key], str(root), recursive=True)
    observer.start()
    try:
        while observer.is_alive():
            for key, handler in handlers.items():
                if handler.take_if_settled():
                    on_change(key)
            time.sleep(poll)
    finally:
        observer.stop()
        observer.join(timeout=5)
