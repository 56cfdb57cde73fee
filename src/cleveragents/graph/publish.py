"""Publishing a commit: the step that makes it visible, and recovery from a crash in it.

Everything a commit writes before this step sits in graphs the views ignore: its
additions in ``iv/<r>/open`` and ``inf/<r>/open``, the closed copies of the triples it
removes in ``iv/<f>/<r>`` (and ``inf/``), each above the head. What remains is to take
the removed triples out of their open graphs and to move the head. Oxigraph has no
multi-statement transaction and its SPARQL updates write about 10-15k quads/s, so
publication is a redo log instead:

1. atomically record the intent ``ca:publishingRevision r`` in META;
2. remove the closed triples from their open graphs and from the current-state mirror,
   and copy the new open graphs into the mirror (idempotent, not atomic);
3. atomically move the head to ``r``, clear the intent and describe the new graphs.

A writer or reader that finds the intent finishes steps 2-3 first (roll forward), so
a commit killed at any point is either entirely absent (before 1) or entirely present.
Readers never open a store while the intent is set (see GraphStore.open_read_only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.layout import HEAD, PUBLISHING
from cleveragents.graph.ntriples import load_ntriples
from cleveragents.graph.results import ntriples
from cleveragents.terms import CA, XSD

if TYPE_CHECKING:  # the store calls finish_publication when it opens: no import back at run time
    from cleveragents.graph.store import GraphStore


def publish(store: GraphStore, rev: int, *, loaded: tuple[bytes, list[ox.Quad]] | None = None) -> None:
    """``loaded``: the commit's additions as it wrote them (the N-Triples it loaded into
    its new graph and the few quads it added there after), so the mirror is filled from
    them instead of reading the new graph back. A redo after a crash reads it back."""
    head_literal = _integer(rev)
    store.raw.update(f"INSERT DATA {{ GRAPH {layout.META} {{ {layout.STORE_NODE} {PUBLISHING} {head_literal} }} }}")
    finish_publication(store, rev, loaded=loaded)


def finish_publication(store: GraphStore, rev: int, *, loaded: tuple[bytes, list[ox.Quad]] | None = None) -> None:
    raw = store.raw
    store.forget_graphs()
    graphs = store.interval_graphs()
    closed_now = [(node, iv) for node, iv in graphs.items() if iv.end == rev and iv.family != "stage"]
    for node, iv in closed_now:
        open_graph = layout.interval_graph(iv.family, iv.start)
        for quad in raw.quads_for_pattern(None, None, None, node):
            raw.remove(ox.Quad(quad.subject, quad.predicate, quad.object, open_graph))
            raw.remove(ox.Quad(quad.subject, quad.predicate, quad.object, iv.mirror))
    for family in ("iv", "inf"):
        opened = layout.interval_graph(family, rev)  # type: ignore[arg-type]
        if opened not in graphs:
            continue
        if family == "iv" and loaded is not None:
            # Input triples the commit dropped were live already: the mirror has them,
            # and loading them again changes nothing.
            body, extra = loaded
            load_ntriples(raw, body, layout.LIVE)
            raw.extend([ox.Quad(q.subject, q.predicate, q.object, layout.LIVE) for q in extra])
        else:
            _mirror(raw, opened, graphs[opened].mirror)
    described = [n for n, iv in graphs.items() if iv.start == rev or iv.end == rev]
    meta = layout.META
    store_node = layout.STORE_NODE
    raw.update(
        f"DELETE WHERE {{ GRAPH {meta} {{ {store_node} {HEAD} ?h }} }} ;\n"
        f"DELETE WHERE {{ GRAPH {meta} {{ {store_node} {PUBLISHING} ?p }} }} ;\n"
        f"INSERT DATA {{ GRAPH {meta} {{ {store_node} {HEAD} {_integer(rev)} . "
        f"{' '.join(_describe(n) for n in described if layout.parse_graph(n).family != 'stage')} }} }}"  # type: ignore[union-attr]
    )
    store.forget_graphs()


def _mirror(raw: ox.Store, graph: ox.NamedNode, target: ox.NamedNode | ox.DefaultGraph) -> None:
    """Copy a graph into a mirror inside Oxigraph (idempotent, so a redo may repeat it)."""
    query = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}"
    load_ntriples(raw, ntriples(raw.query(query)), target)


def _integer(value: int) -> str:
    return f'"{value}"^^<{XSD}integer>'


def _describe(graph: ox.NamedNode) -> str:
    """META triples that let plain SPARQL read a graph's interval (see queries/)."""
    iv = layout.parse_graph(graph)
    assert iv is not None
    family = "asserted" if iv.family == "iv" else "inferred"
    text = f'{graph} a <{CA}IntervalGraph> ; <{CA}intervalStart> {iv.start} ; <{CA}graphFamily> "{family}"'
    return text + (f" ; <{CA}intervalEnd> {iv.end} ." if iv.end is not None else " .")
