"""The audit trail is append-only: no commit request may write or remove it.

The audit trail is what the commit engine itself records: commit activities (their
IRIs, ``a ca:Commit``, ``ca:revision``), the agents they name, revision nodes and the
temporal metadata (``uko:validFrom`` ...). A request whose additions or removals touch
any of it is refused before anything is published, so ``DELETE WHERE { ?s ?p ?o }``
cannot erase ``graph log`` and ``INSERT DATA`` cannot forge a commit. The ontology and
the shapes are out of reach already: requests write interval graphs only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import ForbiddenError
from cleveragents.graph import layout
from cleveragents.graph.results import solutions
from cleveragents.graph.revisions import REVISION_SUFFIX, TEMPORAL_PREDICATES
from cleveragents.graph.store import GraphStore
from cleveragents.iris import AGENT_BASE, COMMIT_BASE
from cleveragents.terms import RDF_TYPE
from cleveragents.vocabulary import ca

COMMIT_CLASS = ca.Commit
_REVISION = ca.revision
_PROTECTED_PREDICATES = TEMPORAL_PREDICATES | {_REVISION}


def is_audit_record(triple: tuple[Any, Any, Any]) -> bool:
    """A triple only the commit engine may write."""
    subject, predicate, obj = triple
    value = getattr(subject, "value", "")
    return (
        value.startswith((COMMIT_BASE, AGENT_BASE))
        or bool(REVISION_SUFFIX.search(value))
        or predicate.value in _PROTECTED_PREDICATES
        or (predicate.value == RDF_TYPE and getattr(obj, "value", None) == COMMIT_CLASS)
    )


def audit_records_in(raw: ox.Store, graph: ox.NamedNode, limit: int = 3) -> list[ox.Triple]:
    """Audit-trail triples in one graph, found by one scan inside Oxigraph."""
    temporal = ", ".join(f"<{p}>" for p in sorted(_PROTECTED_PREDICATES))
    query = (
        f"SELECT ?s ?p ?o WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} "
        f'FILTER(STRSTARTS(STR(?s), "{COMMIT_BASE}") || STRSTARTS(STR(?s), "{AGENT_BASE}") '
        f'|| (CONTAINS(STR(?s), "@r") && REGEX(STR(?s), "{REVISION_SUFFIX.pattern}")) || ?p IN ({temporal}) '
        f"|| (?p = <{RDF_TYPE}> && ?o = <{COMMIT_CLASS}>)) }} LIMIT {limit}"
    )
    return [ox.Triple(row["s"], row["p"], row["o"]) for row in solutions(raw.query(query))]


def refuse(touched: Iterable[Any], action: str) -> None:
    """Raise ForbiddenError naming the first audit-trail triples a request would
    ``action`` ('add' or 'remove'); nothing when ``touched`` is empty."""
    sample = [tuple(t) for t in touched][:3]
    if not sample:
        return
    shown = "; ".join(" ".join(str(term) for term in t) for t in sample)
    raise ForbiddenError(
        f"the audit trail is append-only: this change would {action} commit records or revision "
        f"metadata (e.g. {shown}); nothing was written",
        detail="Commit records, agents, revision nodes and validFrom/validUntil/isCurrent/isRevisionOf "
        "are written by the commit engine only.",
        suggestions=[
            f'restrict the pattern to your own data, e.g. FILTER(!STRSTARTS(STR(?s), "{COMMIT_BASE}"))',
            "to remove all content (keeping history): agents graph clear",
        ],
    )


def content_subjects(store: GraphStore) -> tuple[list[ox.NamedNode], int]:
    """The subjects of the current asserted state outside the audit trail, and how many
    triples they hold (what ``agents graph clear`` removes)."""
    subjects: set[ox.NamedNode] = set()
    triples = 0
    for quad in store.raw.quads_for_pattern(None, None, None, layout.LIVE):
        triple = (quad.subject, quad.predicate, quad.object)
        if isinstance(quad.subject, ox.NamedNode) and not is_audit_record(triple):
            subjects.add(quad.subject)
            triples += 1
    return sorted(subjects, key=lambda n: n.value), triples
