"""Writing triples as N-Triples text: the cheap way to put many triples into Oxigraph."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyoxigraph as ox


def ntriples(triples: Iterable[tuple[Any, Any, Any]]) -> bytes:
    """N-Triples text of pyoxigraph terms (their ``str`` is their N-Triples form).

    Loading text is the cheap way to write many triples: building a ``Quad`` per triple
    in Python costs several microseconds each (every term is converted)."""
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples).encode()


def load_ntriples(raw: ox.Store, body: bytes, graph: ox.NamedNode | ox.DefaultGraph) -> None:
    """Write N-Triples into one graph; a big body goes through ``bulk_load``, which is not
    atomic, so callers write only graphs no view reads yet or redo-able steps."""
    if not body:
        return
    if len(body) > 2_000_000:
        raw.bulk_load(body, ox.RdfFormat.N_TRIPLES, to_graph=graph)
    else:
        raw.load(body, ox.RdfFormat.N_TRIPLES, to_graph=graph)
