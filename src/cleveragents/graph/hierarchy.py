"""The ontology's class and property hierarchy, as the commit engine needs it.

The reflexive-transitive rdfs:subClassOf / rdfs:subPropertyOf pairs live in the
TBOX_CLOSURE graph (so queries can use them too); this keeps them in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.tbox.closure import tbox_closure
from cleveragents.tbox.modules import replace_graph
from cleveragents.terms import RDFS_SUBCLASSOF, RDFS_SUBPROPERTYOF

SUBCLASS = ox.NamedNode(RDFS_SUBCLASSOF)
SUBPROPERTY = ox.NamedNode(RDFS_SUBPROPERTYOF)


@dataclass
class TBox:
    """Strict super-classes and super-properties of every term that has any."""

    superclasses: dict[ox.NamedNode, frozenset[ox.NamedNode]] = field(default_factory=dict)
    superproperties: dict[ox.NamedNode, frozenset[ox.NamedNode]] = field(default_factory=dict)

    @classmethod
    def from_store(cls, raw: ox.Store) -> TBox:
        classes: dict[ox.NamedNode, set[ox.NamedNode]] = {}
        props: dict[ox.NamedNode, set[ox.NamedNode]] = {}
        for quad in raw.quads_for_pattern(None, None, None, layout.TBOX_CLOSURE):
            if quad.subject == quad.object or not isinstance(quad.object, ox.NamedNode):
                continue
            target = classes if quad.predicate == SUBCLASS else props
            target.setdefault(quad.subject, set()).add(quad.object)  # type: ignore[arg-type]
        return cls(
            {k: frozenset(v) for k, v in classes.items()},
            {k: frozenset(v) for k, v in props.items()},
        )

    @property
    def related_predicates(self) -> frozenset[ox.NamedNode]:
        """Properties that entail, or are entailed by, another property."""
        out = set(self.superproperties)
        for supers in self.superproperties.values():
            out |= supers
        return frozenset(out)

    def entailed_types(self, asserted: set[ox.NamedNode]) -> set[ox.NamedNode]:
        """Every class implied by a set of asserted classes (excluding the asserted)."""
        out: set[ox.NamedNode] = set()
        for cls in asserted:
            out |= self.superclasses.get(cls, frozenset())
        return out - asserted

    def entailed_predicates(self, asserted: set[ox.NamedNode]) -> set[ox.NamedNode]:
        out: set[ox.NamedNode] = set()
        for prop in asserted:
            out |= self.superproperties.get(prop, frozenset())
        return out - asserted


def rebuild_closure(raw: ox.Store) -> int:
    """Recompute TBOX_CLOSURE from the ontology graph (atomically); returns the pair count."""
    ontology = [q.triple for q in raw.quads_for_pattern(None, None, None, layout.ONTOLOGY)]
    return replace_graph(raw, layout.TBOX_CLOSURE, tbox_closure(ontology))
