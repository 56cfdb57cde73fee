"""What --explain shows: components note what they decided (failures, duplicates,
downgrades) into the assembly that is running, without changing the spec's signatures.

The assembler opens a collector per assembly in a ContextVar, so concurrent assemblies in
different threads keep their notes apart; a custom component may note too, or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_NOTES: ContextVar[dict[str, list[dict[str, Any]]] | None] = ContextVar("cleveragents_context_notes", default=None)


def note(kind: str, /, **data: Any) -> None:
    """Record one decision of kind ``kind`` (e.g. "failures", "deduplicated")."""
    notes = _NOTES.get()
    if notes is not None:
        notes.setdefault(kind, []).append(data)


@contextmanager
def collecting() -> Iterator[dict[str, list[dict[str, Any]]]]:
    notes: dict[str, list[dict[str, Any]]] = {}
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)
