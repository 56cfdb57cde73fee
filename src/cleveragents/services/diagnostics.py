"""``agents diagnostics``: is this installation healthy, and if not, what to do.

Each check reads real state and says ok, warn or fail with the reason: the configuration
(readable, the global file private), the store (opens read-only, every quad readable,
no publication left half-done or unpublished graphs waiting), the content store (every
blob decompresses to bytes whose sha256 is its name), disk space, the language servers
registered and the model providers configured.
"""

from __future__ import annotations

import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cleveragents.config import Config
from cleveragents.errors import CleverAgentsError
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.content import content_store

LOW_DISK_BYTES = 1 << 30


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str

    def as_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


def run(ws: Workspace, config: Config) -> list[Check]:
    """Every check, each isolated: one failing never hides the others."""
    checks: list[Check] = []
    for name, check in (
        ("config", lambda: _config(config)),
        ("store", lambda: _store(ws)),
        ("publication", lambda: _publication(ws)),
        ("content store", lambda: _content(ws)),
        ("disk space", lambda: _disk(ws.data_dir)),
        ("language servers", lambda: _language_servers(ws)),
        ("providers", lambda: _providers(config)),
    ):
        checks.append(_guarded(name, check))
    return checks


def _guarded(name: str, check: Callable[[], tuple[str, str]]) -> Check:
    try:
        status, detail = check()
    except CleverAgentsError as exc:
        status, detail = "fail", exc.headline()
    except Exception as exc:  # a diagnostic reports what broke instead of stopping
        status, detail = "fail", f"{type(exc).__name__}: {exc}"
    return Check(name, status, detail)


def _config(config: Config) -> tuple[str, str]:
    config.list()  # every key resolves (files parsed and typed at construction)
    path = config.global_path
    if path.exists() and stat.S_IMODE(path.stat().st_mode) & 0o077:
        return "warn", f"{path} is readable by others; it may hold provider keys: chmod 600 {path}"
    return "ok", f"{path}" + ("" if path.exists() else " (absent: defaults)")


def _store(ws: Workspace) -> tuple[str, str]:
    ws.require()
    store = GraphStore.open_read_only(ws.store_dir)
    try:
        quads = sum(1 for _ in store.graph_quads())  # reads every block
        return "ok", f"opens read-only; head revision {store.head}; {quads} quads read back"
    finally:
        del store


def _publication(ws: Workspace) -> tuple[str, str]:
    store = GraphStore.open_read_only(ws.store_dir)
    try:
        head = store.head
        pending = store.publishing
        leftovers = [n for n, iv in store.interval_graphs().items() if not iv.published(head)]
    finally:
        del store
    if pending is not None:
        return "warn", f"revision {pending} is being published (the next writer finishes it)"
    if leftovers:
        return "warn", f"{len(leftovers)} graph(s) of an abandoned commit (the next writer discards them)"
    return "ok", f"every commit up to revision {head} fully published"


def _content(ws: Workspace) -> tuple[str, str]:
    content = content_store(ws)
    digests = content.blobs()
    bad = [d for d in digests if not content.verify(d)]
    if bad:
        return "fail", (
            f"{len(bad)} of {len(digests)} blob(s) do not match their hash, e.g. {content.path_of(bad[0])}; "
            "delete them and run agents index --full"
        )
    return "ok", f"{len(digests)} blob(s), every hash verified"


def _disk(path: Path) -> tuple[str, str]:
    usage = shutil.disk_usage(path if path.exists() else path.parent)
    free = f"{usage.free / (1 << 30):.1f} GiB free of {usage.total / (1 << 30):.1f} GiB"
    return ("warn", free + ": writes may fail") if usage.free < LOW_DISK_BYTES else ("ok", free)


def _language_servers(ws: Workspace) -> tuple[str, str]:
    from cleveragents.errors import LSPUnavailable
    from cleveragents.services import lsp_registry

    ready, missing = [], []
    for entry in lsp_registry.all(ws):
        try:
            entry.resolve_command()
            ready.append(entry.name)
        except LSPUnavailable as exc:
            missing.append(f"{entry.name} ({exc.reason})")
    detail = f"available: {', '.join(ready) or 'none'}" + (f"; unavailable: {', '.join(missing)}" if missing else "")
    return ("ok" if ready else "warn"), detail


def _providers(config: Config) -> tuple[str, str]:
    from cleveragents.services.providers import list_providers

    statuses = list_providers(config)
    usable = [p.name for p in statuses if p.available and p.configured]
    other = [f"{p.name} ({p.problem})" for p in statuses if not (p.available and p.configured) and p.problem]
    detail = f"configured: {', '.join(usable) or 'none'}" + (f"; not usable: {', '.join(other)}" if other else "")
    return ("ok" if usable else "warn"), detail
