"""UKO classification of one node: its layer (0-3), primary type, source resource and
relationships, at the head or as of an earlier revision.

The layer is the ``uko:layer`` the UKO inference engine stored (graph/uko_inference.py);
the primary type is the class that gives it. Relationships are the node's edges to and
from other nodes: asserted ones and the engine's implicit ones, each with the
confidence and method its reifier records. Entailments of the RDFS closure (the
``uko:dependsOn`` beside a ``uko-code:calls``) repeat an edge that is listed and are left
out, as are revision bookkeeping and the provenance link to the source resource.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, UsageError, ValidationError
from cleveragents.graph import history as hist
from cleveragents.graph.store import GraphStore, View
from cleveragents.graph.uko_inference import IMPLICIT_EDGES, INFORMATION_UNIT, LAYER, Vocabulary, reifier_of
from cleveragents.graph.workspace import Workspace
from cleveragents.iris import parse_iri
from cleveragents.terms import CA, RDF_TYPE
from cleveragents.vocabulary import ca, uko

SOURCE_RESOURCE = ox.NamedNode(uko.sourceResource)


@dataclass(frozen=True)
class Relationship:
    """One edge of the classified node: ``direction`` "out" (the node is the subject) or
    "in" (the node is the object), to or from ``node``."""

    direction: str
    predicate: str
    node: str
    inferred: bool
    confidence: float | None = None
    resolved_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "predicate": self.predicate,
            "node": self.node,
            "inferred": self.inferred,
            "confidence": self.confidence,
            "resolved_by": self.resolved_by,
        }


@dataclass(frozen=True)
class ClassificationResult:
    iri: str
    revision: int
    layer: int | None
    primary_type: str | None
    types: tuple[str, ...]  # asserted classes, sorted
    source_resource: str | None
    relationships: tuple[Relationship, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri,
            "revision": self.revision,
            "layer": self.layer,
            "primary_type": self.primary_type,
            "types": list(self.types),
            "source_resource": self.source_resource,
            "relationships": [r.as_dict() for r in self.relationships],
        }


def classify(ws: Workspace, iri: str, *, as_of: str | None = None) -> ClassificationResult:
    """Classify the UKO node ``iri`` ('<...>', full or prefixed) at the head, or as of a
    revision, time or external id."""
    try:
        node = parse_iri(iri)
    except ValidationError as exc:
        raise UsageError(exc.message) from None
    with ws.reader() as store:
        revision = hist.resolve_revision(store, as_of)
        view, asserted = store.view(revision), store.view(revision, inferred=False)
        if not _ask(store, view, f"{{ {node} ?p ?o }} UNION {{ ?s ?p {node} }}"):
            raise NotFoundError(
                f"{node.value} is not in the graph at revision {revision}",
                suggestions=["agents graph query 'SELECT ?s WHERE { ?s a uko:InformationUnit } LIMIT 10'"],
            )
        if not _ask(store, view, f"{node} a {INFORMATION_UNIT}"):
            raise ValidationError(
                f"{node.value} is not a UKO node (it has no uko:InformationUnit type) at revision {revision}"
            )
        types = sorted(
            (r["t"] for r in store.query(f"SELECT ?t WHERE {{ {node} a ?t FILTER(isIRI(?t)) }}", view=asserted)),
            key=lambda t: t.value,
        )
        found = Vocabulary.for_store(store).classify(types)
        stored = [r["l"] for r in store.query(f"SELECT ?l WHERE {{ {node} {LAYER} ?l }}", view=view)]
        layer = int(stored[0].value) if stored else (found[0] if found else None)
        resources = [r["r"].value for r in store.query(f"SELECT ?r WHERE {{ {node} {SOURCE_RESOURCE} ?r }}", view=view)]
        return ClassificationResult(
            iri=node.value,
            revision=revision,
            layer=layer,
            primary_type=found[1].value if found else None,
            types=tuple(t.value for t in types),
            source_resource=min(resources) if resources else None,
            relationships=tuple(_relationships(store, view, asserted, node)),
        )


def _ask(store: GraphStore, view: View, pattern: str) -> bool:
    return bool(store.query(f"ASK {{ {pattern} }}", view=view))


_SKIPPED = frozenset({RDF_TYPE, uko.sourceResource, ca.revisionOf})


def _relationships(store: GraphStore, view: View, asserted: View, node: ox.NamedNode) -> list[Relationship]:
    """Asserted and implicit edges of the node, sorted, with their reifiers' metadata."""

    def edges(pattern: str, which: View) -> set[tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode]]:
        rows = store.query(f"SELECT ?s ?p ?o WHERE {{ {pattern} FILTER(isIRI(?s) && isIRI(?o)) }}", view=which)
        return {
            (r["s"], r["p"], r["o"])
            for r in rows
            if r["p"].value not in _SKIPPED and not hist.is_bookkeeping((r["s"], r["p"], r["o"]))
        }

    patterns = [f"BIND({node} AS ?s) {node} ?p ?o", f"BIND({node} AS ?o) ?s ?p {node}"]
    everything: set = set()
    stated: set = set()
    for pattern in patterns:
        everything |= edges(pattern, view)
        stated |= edges(pattern, asserted)
    kept = sorted(
        (t for t in everything if t in stated or t[1] in IMPLICIT_EDGES),
        key=lambda t: (t[0] != node, t[1].value, t[2].value if t[0] == node else t[0].value),
    )
    meta: dict[ox.NamedNode, dict[str, Any]] = {}
    if kept:
        reifiers = " ".join(str(reifier_of(*t)) for t in kept)
        rows = store.query(
            f"SELECT ?r ?c ?b WHERE {{ VALUES ?r {{ {reifiers} }} "
            f"OPTIONAL {{ ?r <{CA}confidence> ?c }} OPTIONAL {{ ?r <{CA}resolvedBy> ?b }} }}",
            view=view,
        )
        meta = {r["r"]: {"c": r["c"], "b": r["b"]} for r in rows}
    out = []
    for s, p, o in kept:
        found = meta.get(reifier_of(s, p, o), {})
        confidence, method = found.get("c"), found.get("b")
        out.append(
            Relationship(
                direction="out" if s == node else "in",
                predicate=p.value,
                node=(o if s == node else s).value,
                inferred=(s, p, o) not in stated,
                confidence=float(confidence.value) if confidence is not None else None,
                resolved_by=method.value if method is not None else None,
            )
        )
    return out
