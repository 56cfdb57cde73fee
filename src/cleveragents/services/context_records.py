"""Context assemblies recorded in the graph (``ca:ContextAssembly``), so that decisions can
cite the exact context an actor saw and ``agents context show HASH`` can re-render it.

An assembly's IRI is derived from its hash: recording the same payload twice finds the
node and writes nothing. Each fragment keeps its node, depth, tokens, score, strategy and
provenance, and a digest of its content; the text itself is kept only when rendering the
node at that depth does not reproduce it (a truncated fragment, a history summary...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox

from cleveragents.context.model import AssembledContext, ContextFragment, ContextRequest, FragmentProvenance
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.iris import resource_iri
from cleveragents.services import entities
from cleveragents.terms import CA, ID, XSD
from cleveragents.vocabulary import ca

ASSEMBLY = ox.NamedNode(ca.ContextAssembly)
FRAGMENT = ox.NamedNode(ca.ContextAssemblyFragment)
HASH_PREFIX = "sha256:"
MIN_PREFIX = 6  # shortest hash prefix `context show` accepts


def _p(name: str) -> ox.NamedNode:
    return ox.NamedNode(CA + name)


def _int(value: int) -> ox.Literal:
    return ox.Literal(str(int(value)), datatype=ox.NamedNode(XSD + "integer"))


def digest(text: str) -> str:
    """``sha256:<hex>`` of a text, as the pipeline hashes a payload."""
    from cleveragents.context.pipeline.finalization import payload_hash  # the pipeline loads token encodings

    return payload_hash(text)


def assembly_iri(context_hash: str) -> ox.NamedNode:
    return ox.NamedNode(f"{ID}context/{context_hash.removeprefix(HASH_PREFIX)}")


@dataclass
class RecordedAssembly:
    """A stored assembly: what was asked, at which revision, and its fragments (their
    content re-rendered by ``services.context.show``)."""

    iri: str
    context_hash: str
    request: ContextRequest
    budget: int
    total_tokens: int
    encoding: str
    revision: int
    strategies: list[str]
    preamble: str | None
    fragments: list[ContextFragment]
    stored_text: list[bool]  # per fragment: kept verbatim rather than re-rendered
    project: str | None = None
    resources: list[str] = field(default_factory=list)
    created: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "iri": self.iri,
            "context_hash": self.context_hash,
            "request": self.request.model_dump(mode="json"),
            "budget": self.budget,
            "total_tokens": self.total_tokens,
            "encoding": self.encoding,
            "revision": self.revision,
            "strategies": self.strategies,
            "project": self.project,
            "resources": self.resources,
            "created": self.created,
        }


Renderer = Callable[[str, int], str | None]


def record(
    ws: Workspace,
    context: AssembledContext,
    request: ContextRequest,
    *,
    revision: int,
    project: str | None = None,
    resources: Sequence[str] = (),
    renderer: Renderer | None = None,
    agent: str = "cleveragents",
) -> CommitResult | None:
    """Commit ``context`` as a ``ca:ContextAssembly``; None when that hash is recorded
    already. ``renderer(node, depth)`` tells which fragments re-render to the same text."""
    node = assembly_iri(context.context_hash)
    ask = f"ASK {{ {node} a {ASSEMBLY} }}"
    with ws.reader() as store:
        if store.query(ask):
            return None
    triples = _triples(node, context, request, revision, project, resources, renderer)  # renders: before locking
    with ws.writer() as session:
        if session.store.query(ask):  # recorded meanwhile by another process
            return None
        return session.commit(
            CommitRequest(
                add=triples,
                message=f"context assemble {context.context_hash[:19]} ({len(context.fragments)} fragments)",
                cause="context-assembly",
                agent=agent,
                new_subjects=True,
            )
        )


def _triples(
    node: ox.NamedNode,
    context: AssembledContext,
    request: ContextRequest,
    revision: int,
    project: str | None,
    resources: Sequence[str],
    renderer: Renderer | None,
) -> list[tuple[Any, Any, Any]]:
    triples: list[tuple[Any, Any, Any]] = [
        (node, entities.TYPE, ASSEMBLY),
        (node, _p("contextHash"), ox.Literal(context.context_hash)),
        (node, _p("contextRequest"), ox.Literal(request.model_dump_json())),
        (node, _p("tokenBudget"), _int(context.budget)),
        (node, _p("totalTokens"), _int(context.total_tokens)),
        (node, _p("tokenEncoding"), ox.Literal(context.encoding)),
        (node, _p("assembledAtRevision"), _int(revision)),
        (node, entities.CREATED, entities.now_literal()),
    ]
    triples += [(node, _p("strategyUsed"), ox.Literal(name)) for name in context.strategies_used]
    if context.preamble:
        triples.append((node, _p("preamble"), ox.Literal(context.preamble)))
    if project:
        triples.append((node, _p("scopeProject"), ox.NamedNode(project)))
    triples += [(node, _p("scopeResource"), ox.NamedNode(resource_iri(ulid))) for ulid in resources]
    for index, fragment in enumerate(context.fragments):
        entry = ox.NamedNode(f"{node.value}/fragment/{index}")
        triples += [(node, _p("hasFragment"), entry), *_fragment_triples(entry, index, fragment, renderer)]
    return triples


def _fragment_triples(
    entry: ox.NamedNode, index: int, fragment: ContextFragment, renderer: Renderer | None
) -> list[tuple[Any, Any, Any]]:
    prov = fragment.provenance
    score = min(max(fragment.relevance_score, 0.0), 1.0)
    triples: list[tuple[Any, Any, Any]] = [
        (entry, entities.TYPE, FRAGMENT),
        (entry, _p("fragmentIndex"), _int(index)),
        (entry, _p("fragmentNode"), ox.NamedNode(fragment.uko_node)),
        (entry, _p("detailDepth"), _int(fragment.detail_depth)),
        (entry, _p("tokenCount"), _int(fragment.token_count)),
        (entry, _p("relevanceScore"), ox.Literal(f"{score:.6f}", datatype=ox.NamedNode(XSD + "decimal"))),
        (entry, _p("fragmentDigest"), ox.Literal(digest(fragment.content))),
        (entry, _p("fragmentResource"), ox.Literal(prov.resource)),
    ]
    if prov.strategy:
        triples.append((entry, _p("producedByStrategy"), ox.Literal(prov.strategy)))
    if prov.path:
        triples.append((entry, _p("fragmentPath"), ox.Literal(prov.path)))
    if prov.line_range:
        triples.append((entry, _p("fragmentLines"), ox.Literal(f"{prov.line_range[0]}-{prov.line_range[1]}")))
    if prov.revision is not None:
        triples.append((entry, _p("fragmentRevision"), _int(prov.revision)))
    if fragment.metadata.get("history"):
        triples.append((entry, _p("fragmentView"), ox.Literal("history")))
    if not _reproducible(fragment, renderer):
        triples.append((entry, _p("fragmentText"), ox.Literal(fragment.content)))
    return triples


def _reproducible(fragment: ContextFragment, renderer: Renderer | None) -> bool:
    if renderer is None:
        return False
    try:
        return renderer(fragment.uko_node, fragment.detail_depth) == fragment.content
    except Exception:  # any failure to render means: keep the text
        return False


# --- reading ---------------------------------------------------------------------------------


def find(store: GraphStore, ref: str) -> ox.NamedNode:
    """The recorded assembly with hash ``ref``: ``sha256:<hex>``, the bare hex, or a
    unique prefix of at least MIN_PREFIX hex digits."""
    text = ref.strip().lower().removeprefix(HASH_PREFIX)
    if len(text) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in text):
        raise ValidationError(
            f"'{ref}' is not a context hash: expected 'sha256:<hex>' or at least {MIN_PREFIX} hex digits",
            suggestions=["agents context assemble ... (prints the hash)"],
        )
    wanted = ox.Literal(HASH_PREFIX + text)
    rows = list(
        store.query(
            f"SELECT ?a WHERE {{ ?a a {ASSEMBLY} ; ca:contextHash ?h . FILTER(STRSTARTS(?h, {wanted})) }} LIMIT 2"
        )
    )
    if not rows:
        raise NotFoundError(
            f"no recorded context assembly has hash {ref}",
            suggestions=["agents graph query 'SELECT ?h WHERE { ?a a ca:ContextAssembly ; ca:contextHash ?h }'"],
        )
    if len(rows) > 1:
        raise ValidationError(f"ambiguous context hash prefix '{ref}': more than one assembly matches")
    return rows[0]["a"]


def load(ws: Workspace, ref: str) -> tuple[RecordedAssembly, list[str | None]]:
    """The recorded assembly and, per fragment, its stored text (None: re-render it)."""
    with ws.reader() as store:
        node = find(store, ref)
        props = entities.properties(store, node)
        rows = list(
            store.query(
                f"""SELECT ?e ?i ?n ?d ?t ?s ?by ?res ?path ?lines ?rev ?dig ?text ?view WHERE {{
                  {node} ca:hasFragment ?e . ?e ca:fragmentIndex ?i ; ca:fragmentNode ?n ; ca:detailDepth ?d ;
                     ca:tokenCount ?t ; ca:fragmentDigest ?dig ; ca:fragmentResource ?res .
                  OPTIONAL {{ ?e ca:relevanceScore ?s }} OPTIONAL {{ ?e ca:producedByStrategy ?by }}
                  OPTIONAL {{ ?e ca:fragmentPath ?path }} OPTIONAL {{ ?e ca:fragmentLines ?lines }}
                  OPTIONAL {{ ?e ca:fragmentRevision ?rev }} OPTIONAL {{ ?e ca:fragmentText ?text }}
                  OPTIONAL {{ ?e ca:fragmentView ?view }}
                }} ORDER BY ?i"""
            )
        )
    value = lambda row, name: row[name].value if row[name] is not None else None  # noqa: E731
    fragments: list[ContextFragment] = []
    texts: list[str | None] = []
    for row in rows:
        lines = value(row, "lines")
        start, _, end = (lines or "").partition("-")
        rev = value(row, "rev")
        provenance = FragmentProvenance(
            resource=value(row, "res") or "",
            path=value(row, "path"),
            line_range=(int(start), int(end)) if lines else None,
            revision=int(rev) if rev is not None else None,
            uko_node=row["n"].value,
            strategy=value(row, "by"),
        )
        text = value(row, "text")
        texts.append(text)
        fragments.append(
            ContextFragment(
                uko_node=row["n"].value,
                content=text or "",
                detail_depth=int(row["d"].value),
                token_count=int(row["t"].value),
                relevance_score=float(value(row, "s") or 0.0),
                provenance=provenance,
                metadata={"digest": row["dig"].value, **({"history": True} if value(row, "view") else {})},
            )
        )
    one = lambda name: entities.single(props, CA + name)  # noqa: E731
    recorded = RecordedAssembly(
        iri=node.value,
        context_hash=one("contextHash") or "",
        request=ContextRequest.model_validate(json.loads(one("contextRequest") or "{}")),
        budget=int(one("tokenBudget") or 0),
        total_tokens=int(one("totalTokens") or 0),
        encoding=one("tokenEncoding") or "",
        revision=int(one("assembledAtRevision") or 0),
        strategies=sorted(v.value for v in props.get(ca.strategyUsed, [])),
        preamble=one("preamble"),
        fragments=fragments,
        stored_text=[text is not None for text in texts],
        project=one("scopeProject"),
        resources=sorted(v.value.rsplit("/", 1)[-1] for v in props.get(ca.scopeResource, [])),
        created=one("createdAt") or "",
    )
    return recorded, texts
