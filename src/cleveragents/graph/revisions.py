"""Revision nodes: the spec's node-level temporal contract on top of triple intervals.

Entities keep one stable IRI, so edges always point at the logical entity. Each
commit that changes a UKO entity also records a revision node ``<entity>@r<N>``:

    <e@r3> a ca:EntityRevision ; ca:revisionOf <e> ; ca:revision 3 ;
           uko:validFrom "..." ; uko:isCurrent true ; uko:isRevisionOf <e@r1> .

and closes the predecessor (``uko:isCurrent false``, ``uko:validUntil``). The entity
itself carries ``uko:validFrom`` / ``uko:isCurrent`` for its current incarnation.
These are ordinary temporal triples, so as-of queries see them as they were.

Revisions follow content, not position. An entity with a ``uko:contentHash`` gets a new
revision only when that hash changes (its own text), not when lines above it move or an
edge it carries is re-resolved: those changes stay in the temporal triples (every
revision's ``uko:sourceRange`` is queryable as of any commit) without counting as a
revision. Each revision says why it exists in ``ca:revisionKind``: ``added`` (new, or back
from deletion), ``formatting`` (the text changed but its ``ca:syntaxFingerprint``, the
tokens without whitespace and comments, did not) or ``content``. Entities without a
content hash (directories, plans) get a revision on any change, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.results import solutions
from cleveragents.graph.store import GraphStore
from cleveragents.iris import commit_iri
from cleveragents.terms import PROV, RDF_TYPE, UKO, XSD
from cleveragents.vocabulary import ca, uko

TYPE = ox.NamedNode(RDF_TYPE)
CONTENT_HASH = ox.NamedNode(uko.contentHash)
SYNTAX_FINGERPRINT = ox.NamedNode(ca.syntaxFingerprint)
REVISION_KIND = ox.NamedNode(ca.revisionKind)
IS_CURRENT = ox.NamedNode(uko.isCurrent)
VALID_FROM = ox.NamedNode(uko.validFrom)
VALID_UNTIL = ox.NamedNode(uko.validUntil)
IS_REVISION_OF = ox.NamedNode(uko.isRevisionOf)
REVISION_OF = ox.NamedNode(ca.revisionOf)
TRUE = ox.Literal("true", datatype=ox.NamedNode(XSD + "boolean"))
FALSE = ox.Literal("false", datatype=ox.NamedNode(XSD + "boolean"))
INFORMATION_UNIT = ox.NamedNode(uko.InformationUnit)
# The node-level temporal metadata revisions maintain; not content.
TEMPORAL_PREDICATES = frozenset(UKO + n for n in ("validFrom", "validUntil", "isCurrent", "isRevisionOf"))

Triple = tuple[object, object, object]


# The IRI suffix of a revision node (no backslash: the pattern is also used in SPARQL).
REVISION_SUFFIX = re.compile(r"@r[0-9]+$")


def revision_node(entity: ox.NamedNode, revision: int) -> ox.NamedNode:
    return ox.NamedNode(f"{entity.value}@r{revision}")


def derive_revisions(
    store: GraphStore,
    rev: int,
    when: datetime,
    added_g: ox.NamedNode,
    inferred_g: ox.NamedNode,
    removals: dict[tuple, ox.Quad],
    *,
    fresh: bool = False,
) -> tuple[list[Triple], list[ox.Quad]]:
    """Revision triples to add and live quads to close for the entities a commit touches.

    ``fresh``: the commit's subjects have no live triples (CommitRequest.new_subjects), so
    they have no flags or revisions yet and their state is not read."""
    raw = store.raw
    head = store.head
    graphs = store.interval_graphs()
    live = {g for g, iv in graphs.items() if iv.is_open and iv.start <= head}
    touched = _touched_by_additions(raw, added_g, inferred_g)
    # Entities are IRIs: a removed triple about a blank node changes no entity's revision.
    removed_subjects = {
        q.subject
        for q in removals.values()
        if isinstance(q.subject, ox.NamedNode) and graphs[q.graph_name].family == "iv"  # type: ignore[index]
    }
    # A subject that only loses triples counts if it was a UKO entity before the commit.
    touched |= {e for e in removed_subjects - touched if _was_unit(raw, e)}
    if not touched:
        return [], []
    state = (
        _EntityState()
        if fresh and not removed_subjects
        else _state_of(store, rev, touched, removed_subjects & touched, live | {added_g, inferred_g})
    )
    removed_keys = set(removals)
    text_changes = _text_changes(raw, added_g, removals.values())
    stamp = ox.Literal(when.isoformat().replace("+00:00", "Z"), datatype=ox.NamedNode(XSD + "dateTime"))
    commit = ox.NamedNode(commit_iri(rev))
    adds: list[Triple] = []
    closes: list[ox.Quad] = []
    for entity in sorted(touched, key=lambda n: n.value):
        own = state.quads.get(entity, [])
        prev = state.current_revision.get(entity)
        exists = entity not in removed_subjects or bool(state.types_after(entity, removed_keys, asserted_only=True))
        kind = "content"
        if prev is not None and exists:
            hash_changed, fingerprint_changed = text_changes.get(entity, (False, False))
            if not hash_changed and _has(raw, entity, CONTENT_HASH):
                continue  # same text: moved, or an edge re-resolved; the triples record it, no revision
            if hash_changed and not fingerprint_changed and _has(raw, entity, SYNTAX_FINGERPRINT):
                kind = "formatting"
        if prev is not None:
            closes.append(prev)
            adds += [(prev.subject, IS_CURRENT, FALSE), (prev.subject, VALID_UNTIL, stamp)]
        current_flags = [q for q in own if q.predicate == IS_CURRENT and q.graph_name in live]
        if not exists:
            closes += current_flags
            adds += [(entity, IS_CURRENT, FALSE), (entity, VALID_UNTIL, stamp)]
            continue
        if not any(q.object == TRUE for q in current_flags):  # new, or back from deletion
            closes += [q for q in own if q.graph_name in live and q.predicate in (IS_CURRENT, VALID_UNTIL, VALID_FROM)]
            adds += [(entity, IS_CURRENT, TRUE), (entity, VALID_FROM, stamp)]
            kind = "added"
        node = revision_node(entity, rev)
        adds += [
            (node, TYPE, ox.NamedNode(ca.EntityRevision)),
            (node, REVISION_OF, entity),
            (node, REVISION_KIND, ox.Literal(kind)),
            (node, VALID_FROM, stamp),
            (node, IS_CURRENT, TRUE),
            (node, ox.NamedNode(PROV + "wasGeneratedBy"), commit),
        ]
        if prev is not None:
            adds.append((node, IS_REVISION_OF, prev.subject))
    return adds, [q for q in closes if (q.subject, q.predicate, q.object) not in removed_keys]


@dataclass
class _EntityState:
    """What revision bookkeeping needs of each entity, read in two joins."""

    quads: dict[ox.NamedNode, list[ox.Quad]] = field(default_factory=dict)
    # entity -> the live quad ``<revision> uko:isCurrent true`` of its current revision
    current_revision: dict[ox.NamedNode, ox.Quad] = field(default_factory=dict)

    def types_after(
        self, entity: ox.NamedNode, removed: set[tuple], *, asserted_only: bool = False
    ) -> set[ox.NamedNode]:
        """Classes of the entity after the commit (live minus removed, plus added)."""
        out = set()
        for q in self.quads.get(entity, []):
            if q.predicate != TYPE or (q.subject, q.predicate, q.object) in removed:
                continue
            family = layout.parse_graph(q.graph_name).family  # type: ignore[arg-type, union-attr]
            if asserted_only and family != "iv":
                continue
            out.add(q.object)
        return out  # type: ignore[return-value]


def _state_of(
    store: GraphStore, rev: int, entities: set[ox.NamedNode], typed: set[ox.NamedNode], visible: set[ox.NamedNode]
) -> _EntityState:
    """The entities' temporal flags and current revisions (and the types of ``typed``).

    The entities go into a scratch graph so that a few joins inside Oxigraph replace a
    seek per entity; each pattern has a constant predicate so only needed rows return.
    """
    raw = store.raw
    scratch = layout.stage_graph(rev, "touched")
    marks = [ox.Quad(e, IS_CURRENT, TRUE, scratch) for e in entities]
    marks += [ox.Quad(e, TYPE, TRUE, scratch) for e in typed]
    raw.extend(marks)

    def wanted(mark: ox.NamedNode, predicate: ox.NamedNode) -> str:
        return f"{{ GRAPH {scratch} {{ ?e {mark} true }} GRAPH ?g {{ ?e {predicate} ?o }} BIND({predicate} AS ?p) }}"

    branches = [wanted(IS_CURRENT, p) for p in (IS_CURRENT, VALID_FROM, VALID_UNTIL)] + [wanted(TYPE, TYPE)]
    state = _EntityState()
    try:
        for row in solutions(raw.query(f"SELECT ?e ?p ?o ?g WHERE {{ {' UNION '.join(branches)} }}")):
            if row["g"] in visible:
                state.quads.setdefault(row["e"], []).append(ox.Quad(row["e"], row["p"], row["o"], row["g"]))
        for row in solutions(
            raw.query(
                f"SELECT ?e ?r ?g WHERE {{ GRAPH {scratch} {{ ?e {IS_CURRENT} true }} "
                f"GRAPH ?h {{ ?r {REVISION_OF} ?e }} "
                f"GRAPH ?g {{ ?r {IS_CURRENT} true }} }}"
            )
        ):
            if row["g"] in visible:
                state.current_revision[row["e"]] = ox.Quad(row["r"], IS_CURRENT, TRUE, row["g"])
    finally:
        raw.remove_graph(scratch)
    return state


# Up to this many added subjects, each is checked with direct lookups; a join plan costs
# more than that on a small commit to a big store.
_LOOKUP_SUBJECTS = 2000


def _touched_by_additions(raw: ox.Store, added_g: ox.NamedNode, inferred_g: ox.NamedNode) -> set[ox.NamedNode]:
    """Subjects of the additions that are UKO entities after the commit (read from the
    current-state mirror and the commit's own graphs: a fixed number of seeks each)."""
    graphs = (layout.LIVE, layout.LIVE_INFERRED, added_g, inferred_g)
    subjects: set[ox.NamedNode] = set()
    for quad in raw.quads_for_pattern(None, None, None, added_g):
        if isinstance(quad.subject, ox.NamedNode):
            subjects.add(quad.subject)
            if len(subjects) > _LOOKUP_SUBJECTS:
                break
    else:
        return {
            s
            for s in subjects
            if any(True for g in graphs for _ in raw.quads_for_pattern(s, TYPE, INFORMATION_UNIT, g))
        }
    rows = solutions(
        raw.query(
            f"SELECT ?s WHERE {{ {{ SELECT DISTINCT ?s WHERE {{ GRAPH {added_g} {{ ?s ?p ?o }} }} }} "
            f"?s a {INFORMATION_UNIT} }}",
            default_graph=[layout.LIVE, layout.LIVE_INFERRED, added_g, inferred_g],
        )
    )
    return {row["s"] for row in rows if isinstance(row["s"], ox.NamedNode)}


def _text_changes(
    raw: ox.Store, added_g: ox.NamedNode, removals: Iterable[ox.Quad]
) -> dict[ox.NamedNode, tuple[bool, bool]]:
    """Entities whose content hash or syntax fingerprint this commit changes: entity ->
    (hash changed, fingerprint changed), from the commit's additions and removals."""
    changes: dict[ox.NamedNode, tuple[bool, bool]] = {}

    def mark(subject: object, predicate: ox.NamedNode) -> None:
        if isinstance(subject, ox.NamedNode):
            hashed, printed = changes.get(subject, (False, False))
            changes[subject] = (hashed or predicate == CONTENT_HASH, printed or predicate == SYNTAX_FINGERPRINT)

    for predicate in (CONTENT_HASH, SYNTAX_FINGERPRINT):
        for quad in raw.quads_for_pattern(None, predicate, None, added_g):
            mark(quad.subject, predicate)
    for quad in removals:
        if quad.predicate in (CONTENT_HASH, SYNTAX_FINGERPRINT):
            mark(quad.subject, quad.predicate)  # type: ignore[arg-type]
    return changes


def _has(raw: ox.Store, subject: ox.NamedNode, predicate: ox.NamedNode) -> bool:
    """Whether the entity has the predicate in the current state (before this commit)."""
    return any(True for _ in raw.quads_for_pattern(subject, predicate, None, layout.LIVE))


def _was_unit(raw: ox.Store, subject: ox.NamedNode) -> bool:
    graphs = (layout.LIVE_INFERRED, layout.LIVE)
    return any(True for g in graphs for _ in raw.quads_for_pattern(subject, TYPE, INFORMATION_UNIT, g))
