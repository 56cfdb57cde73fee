"""Shared plumbing for named graph entities (resources, projects): IRIs, lookup, time."""

from __future__ import annotations

from datetime import UTC, datetime

import pyoxigraph as ox
from ulid import ULID

from cleveragents.errors import NotFoundError
from cleveragents.graph.store import GraphStore
from cleveragents.terms import CA, ID, RDF_TYPE, XSD
from cleveragents.vocabulary import ca

TYPE = ox.NamedNode(RDF_TYPE)
NAME = ox.NamedNode(ca.name)
CREATED = ox.NamedNode(ca.createdAt)


def new_iri(kind: str) -> tuple[ox.NamedNode, str]:
    ulid = str(ULID())
    return ox.NamedNode(f"{ID}{kind}/{ulid}"), ulid


def now_literal() -> ox.Literal:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return ox.Literal(stamp, datatype=ox.NamedNode(XSD + "dateTime"))


def find(store: GraphStore, cls: str, ref: str, *, kind: str) -> ox.NamedNode:
    """The current entity of class ``cls`` named ``ref`` (a bare name means ``local/ref``,
    as when it was created), or with that ULID or IRI."""
    literal = ox.Literal(ref)
    names = ", ".join(str(ox.Literal(n)) for n in {ref, f"local/{ref}" if "/" not in ref else ref})
    query = (
        f"SELECT ?e WHERE {{ ?e a <{CA}{cls}> ; ca:name ?n . "
        f"FILTER(?n IN ({names}) || STRENDS(STR(?e), CONCAT('/', {literal})) || STR(?e) = {literal}) }}"
    )
    for row in store.query(query):
        return row["e"]
    raise NotFoundError(f"{kind} '{ref}' not found", suggestions=[f"agents {kind} list"])


def named(store: GraphStore, cls: str) -> list[ox.NamedNode]:
    """Current entities of class ``cls``, ordered by name."""
    return [row["e"] for row in store.query(f"SELECT ?e WHERE {{ ?e a <{CA}{cls}> ; ca:name ?n }} ORDER BY ?n")]


def name_taken(store: GraphStore, cls: str, name: str) -> bool:
    return bool(store.query(f"ASK {{ ?e a <{CA}{cls}> ; ca:name {ox.Literal(name)} }}"))


def properties(store: GraphStore, node: ox.NamedNode) -> dict[str, list[ox.NamedNode | ox.Literal]]:
    """Current asserted values of a node, keyed by predicate IRI."""
    out: dict[str, list] = {}
    for quad in store.live_quads(node):
        out.setdefault(quad.predicate.value, []).append(quad.object)
    return out


def single(props: dict[str, list], predicate: str) -> str | None:
    values = props.get(predicate)
    return values[0].value if values else None
