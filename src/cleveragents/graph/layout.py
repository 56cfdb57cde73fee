"""Named-graph layout of the store: which graph holds what.

Every asserted triple is stored once, in the graph of its validity interval
``iv/<from>/<to>`` (``to`` is ``open`` while the triple is live). The RDFS closure
the universal view needs is kept apart in ``inf/<from>/<to>`` graphs with the same
interval semantics. A triple is valid at revision r when ``from <= r < to``.

The current state is also mirrored, as a temporal database keeps current rows apart
from history rows: live asserted triples in the default graph, live inferences in
LIVE_INFERRED. Current-state queries read those two graphs, so their cost does not
grow with the number of commits; as-of queries read the interval graphs.

Graphs whose ``from`` or ``to`` is above the published head are invisible: a commit
writes its additions and the closed copies of its removals there with fast
non-atomic loads, and becomes visible when the head moves (see graph/commit.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pyoxigraph import DefaultGraph, NamedNode

from cleveragents.terms import ID
from cleveragents.vocabulary import ca

GRAPH_BASE: Final = "https://cleveragents.ai/graph/"
OPEN: Final = "open"

LIVE = DefaultGraph()
LIVE_INFERRED = NamedNode(GRAPH_BASE + "live-inferred")
ONTOLOGY = NamedNode(GRAPH_BASE + "ontology")
# Transitive-reflexive rdfs:subClassOf / rdfs:subPropertyOf pairs of the ontology.
TBOX_CLOSURE = NamedNode(GRAPH_BASE + "tbox-closure")
SHAPES = NamedNode(GRAPH_BASE + "shapes")
META = NamedNode(GRAPH_BASE + "meta")
STORE_NODE = NamedNode(ID + "store")
# META predicates of the store node: the last published revision, and the revision whose
# publication was started and not finished (the redo record, see graph/publish.py).
HEAD = NamedNode(ca.headRevision)
PUBLISHING = NamedNode(ca.publishingRevision)

Family = Literal["iv", "inf", "stage"]


@dataclass(frozen=True)
class IntervalGraph:
    """A parsed interval graph name."""

    start: int
    end: int | None  # None while open
    family: Family

    @property
    def node(self) -> NamedNode:
        return interval_graph(self.family, self.start, self.end)

    @property
    def mirror(self) -> NamedNode | DefaultGraph:
        """Where this family's live triples are mirrored."""
        return LIVE if self.family == "iv" else LIVE_INFERRED

    def valid_at(self, revision: int) -> bool:
        return self.start <= revision and (self.end is None or revision < self.end)

    def published(self, head: int) -> bool:
        """Written by a commit at or below the head (else it belongs to one in flight)."""
        return self.family != "stage" and self.start <= head and (self.end is None or self.end <= head)

    @property
    def sort_key(self) -> tuple[int, float, str]:
        return (self.start, float("inf") if self.end is None else self.end, self.family)

    @property
    def is_open(self) -> bool:
        return self.end is None


def interval_graph(family: Family, start: int, end: int | None = None) -> NamedNode:
    return NamedNode(f"{GRAPH_BASE}{family}/{start}/{OPEN if end is None else end}")


def stage_graph(revision: int, purpose: str) -> NamedNode:
    """Scratch graph for a commit in progress; never part of any view."""
    return NamedNode(f"{GRAPH_BASE}stage/{revision}/{purpose}")


def parse_graph(node: NamedNode) -> IntervalGraph | None:
    """The interval of an interval or stage graph, or None for any other graph."""
    value = node.value
    if not value.startswith(GRAPH_BASE):
        return None
    parts = value[len(GRAPH_BASE) :].split("/")
    if len(parts) != 3 or parts[0] not in ("iv", "inf", "stage"):
        return None
    family: Family = parts[0]  # type: ignore[assignment]
    if family == "stage":
        return IntervalGraph(int(parts[1]), None, "stage")
    end = None if parts[2] == OPEN else int(parts[2])
    return IntervalGraph(int(parts[1]), end, family)
