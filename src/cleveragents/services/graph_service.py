"""Application service for the graph: query, update, import, export, audit, history."""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, QueryTimeoutError, ValidationError
from cleveragents.graph import audit, layout
from cleveragents.graph import backup as backups
from cleveragents.graph import history as hist
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.sparql_guard import refuse_services
from cleveragents.graph.store import syntax_error
from cleveragents.graph.workspace import Workspace, validate_current
from cleveragents.indexing.content import content_store
from cleveragents.iris import parse_iri
from cleveragents.plans import provenance
from cleveragents.services.query_runner import QueryOutcome, run_with_timeout
from cleveragents.services.sparql_update import parse_update
from cleveragents.terms import GENID, PREFIXES

RDF_FORMATS: dict[str, ox.RdfFormat] = {
    "ttl": ox.RdfFormat.TURTLE,
    "turtle": ox.RdfFormat.TURTLE,
    "nt": ox.RdfFormat.N_TRIPLES,
    "nq": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "rdf": ox.RdfFormat.RDF_XML,
    "xml": ox.RdfFormat.RDF_XML,
    "jsonld": ox.RdfFormat.JSON_LD,
    "n3": ox.RdfFormat.N3,
}


def query(ws: Workspace, sparql: str, *, as_of: str | None = None, timeout: float = 30.0) -> QueryOutcome:
    ws.require()
    return run_with_timeout(ws.store_dir, sparql, as_of, timeout, allowed_services=ws.service_allowlist)


def update(
    ws: Workspace,
    text: str,
    *,
    message: str = "",
    agent: str = "cleveragents",
    timeout: float | None = None,
    extra: Iterable[tuple] = (),
) -> CommitResult:
    """Apply a SPARQL Update as one validated commit; ``extra`` triples (an audit event)
    join the same commit.

    The WHERE clauses are evaluated like queries, in a killable child beside the writer
    (``timeout`` seconds for all of them together; None: no limit), so a runaway WHERE
    or Ctrl+C stops the update before anything is written; DATA blocks are read here."""
    parsed = parse_update(text)
    refuse_services(text, ws.service_allowlist, PREFIXES)
    deadline = time.monotonic() + timeout if timeout and timeout > 0 else None
    with ws.writer() as session:
        remove: set[tuple] = set()
        add: set[tuple] = set()
        for kind, construct, has_where in parsed.constructs():
            try:
                if has_where:
                    left = None if deadline is None else max(0.001, deadline - time.monotonic())
                    triples: Any = run_with_timeout(
                        ws.store_dir, construct, None, left, allowed_services=ws.service_allowlist
                    ).triples
                else:
                    triples = session.store.query(construct)
            except QueryTimeoutError:
                raise QueryTimeoutError(
                    f"update cancelled after {timeout:g} s while evaluating its WHERE; nothing was written",
                    suggestions=["narrow the WHERE patterns", "raise it: --timeout or config query.timeout"],
                ) from None
            except ValidationError as exc:
                raise ValidationError(f"in SPARQL update: {exc.message}") from None
            (remove if kind == "delete" else add).update((t.subject, t.predicate, t.object) for t in triples)
        add.update(extra)
        return session.commit(
            CommitRequest(
                add=add,
                remove=remove,
                message=message or "graph update",
                cause="sparql-update",
                agent=agent,
            )
        )


def import_file(
    ws: Workspace,
    path: Path,
    *,
    fmt: str | None = None,
    message: str = "",
    agent: str = "cleveragents",
) -> CommitResult:
    """Load an RDF file as one validated commit (triples only; graph names are ignored).

    Blank nodes get IRIs derived from the file's canonical form (RDF canonicalization),
    so importing the same content twice names them the same and adds nothing. The
    commit records the content's digest: re-importing content whose import no later
    commit has removed anything from is a no-op found without loading it again."""
    rdf_format = _format_for(path, fmt)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NotFoundError(f"cannot read {path}: {exc.strerror}") from None
    try:
        triples = [q.triple for q in ox.parse(data, rdf_format, base_iri=path.resolve().as_uri())]
    except SyntaxError as exc:
        raise syntax_error(exc, f"{rdf_format.name} in {path}") from None
    ntriples, digest = _canonical_import(triples)
    del triples
    external_id = f"import:{digest}"
    with ws.writer() as session:
        if _still_imported(session.store, external_id):
            return CommitResult(session.store.head, None)
        return session.commit(
            CommitRequest(
                add_ntriples=ntriples,
                message=message or f"import {path.name}",
                cause="import",
                agent=agent,
                external_id=external_id,
            )
        )


def _canonical_import(triples: list[ox.Triple]) -> tuple[bytes, str]:
    """The triples as N-Triples without blank nodes (skolemized by canonical label under
    a digest of the content), and that digest ('sha256:HEX' of the sorted lines)."""
    blank = any(isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode) for t in triples)
    if blank:
        dataset = ox.Dataset(ox.Quad(t.subject, t.predicate, t.object) for t in triples)
        dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
        triples = [q.triple for q in dataset]
    lines = sorted(set((ox.serialize(triples, format=ox.RdfFormat.N_TRIPLES) or b"").splitlines()))
    digest = hashlib.sha256(b"\n".join(lines)).hexdigest()
    if blank:
        prefix = f"{GENID}import-{digest[:32]}-"

        def named(term: Any) -> Any:
            return ox.NamedNode(prefix + term.value) if isinstance(term, ox.BlankNode) else term

        skolem = [ox.Triple(named(t.subject), t.predicate, named(t.object)) for t in triples]
        return ox.serialize(skolem, format=ox.RdfFormat.N_TRIPLES) or b"", f"sha256:{digest}"
    return b"\n".join(lines) + b"\n", f"sha256:{digest}"


def _still_imported(store: Any, external_id: str) -> bool:
    """Whether content with this digest was imported and no commit since removed a
    triple (so every triple of it is still live)."""
    for commit in hist.log(store):  # newest first
        if commit.external_id == external_id:
            return True
        if commit.removed:
            return False
    return False


def clear_preview(ws: Workspace) -> tuple[int, int]:
    """(nodes, triples) that ``clear`` would remove from the current state."""
    with ws.reader() as store:
        subjects, triples = audit.content_subjects(store)
        return len(subjects), triples


def clear(ws: Workspace, *, message: str = "", agent: str = "cleveragents") -> CommitResult:
    """Remove every content triple from the current state, as one commit in the log.
    History (earlier revisions stay queryable with --as-of), the commit log, the
    ontology and the shapes are kept."""
    with ws.writer() as session:
        subjects, _ = audit.content_subjects(session.store)
        return session.commit(
            CommitRequest(
                retract_subjects=subjects,
                message=message or "clear: remove all content from the current state",
                cause="clear",
                agent=agent,
            )
        )


def backup(ws: Workspace, target: Path) -> backups.BackupInfo:
    """Back the store and its stored contents up into the new directory ``target``."""
    ws.require()
    return backups.backup(ws.store_dir, content_store(ws).root, target)


def inspect_backup(source: Path) -> backups.BackupInfo:
    return backups.inspect(source)


def restore(ws: Workspace, source: Path) -> backups.BackupInfo:
    """Replace the store with a backup. The index cache goes too: its records describe
    files as the replaced graph knew them, so the next index re-checks every file."""
    ws.require()
    info = backups.restore(source, ws.store_dir, content_store(ws).root, wait=ws.writer_wait)
    shutil.rmtree(ws.data_dir / "index-cache", ignore_errors=True)
    return info


def _format_for(path: Path, fmt: str | None) -> ox.RdfFormat:
    key = (fmt or path.suffix.lstrip(".")).lower()
    if key not in RDF_FORMATS:
        raise ValidationError(
            f"unknown RDF format '{key}' for {path}",
            suggestions=[f"--rdf-format {k}" for k in ("ttl", "nt", "nq", "trig")],
        )
    return RDF_FORMATS[key]


def export(ws: Workspace, out: Any, *, fmt: str = "nq", as_of: str | None = None) -> int:
    """Serialize to ``out`` (a binary file). nq/trig without --as-of is a full-fidelity
    dump of every graph (history included); otherwise the content at one revision,
    without this store's commit records and revision metadata."""
    rdf_format = RDF_FORMATS.get(fmt)
    if rdf_format is None:
        raise ValidationError(
            f"unknown export format '{fmt}'",
            suggestions=["--format nq", "--format trig", "--format ttl"],
        )
    with ws.reader() as store:
        if as_of is None and rdf_format in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
            quads = list(store.published_quads())
            ox.serialize(quads, out, rdf_format)
            return len(quads)
        revision = hist.resolve_revision(store, as_of)
        # A state export is content: commit records and revision metadata belong to this
        # store's history (the nq/trig dump keeps them), and would clash on re-import.
        content = (t for t in hist.state(store, revision) if not hist.is_bookkeeping(t))
        triples = sorted(content, key=lambda t: (str(t[0]), str(t[1]), str(t[2])))
        body = [ox.Triple(*t) for t in triples]
        if rdf_format in (ox.RdfFormat.N_QUADS, ox.RdfFormat.TRIG):
            ox.serialize([ox.Quad(*t) for t in triples], out, rdf_format)
        else:
            ox.serialize(
                body,
                out,
                rdf_format,
                prefixes=PREFIXES if rdf_format == ox.RdfFormat.TURTLE else None,
            )
        return len(triples)


def validate_all(ws: Workspace) -> list[Any]:
    """Audit the whole current state against the shapes."""
    with ws.reader() as store:
        return validate_current(store)


@dataclass(frozen=True)
class Stats:
    head: int
    asserted: int
    inferred: int
    historical: int
    graphs: int
    ontology: int
    shapes: int
    disk_bytes: int

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def stats(ws: Workspace) -> Stats:
    with ws.reader() as store:
        counts = {"asserted": 0, "inferred": 0, "historical": 0}
        for node, iv in store.interval_graphs().items():
            if iv.family == "stage" or iv.start > store.head:
                continue
            n = store.count(node)
            key = "historical" if not iv.is_open else ("asserted" if iv.family == "iv" else "inferred")
            counts[key] += n
        return Stats(
            head=store.head,
            graphs=len(store.interval_graphs()),
            ontology=store.count(layout.ONTOLOGY),
            shapes=store.count(layout.SHAPES),
            disk_bytes=store.disk_bytes(),
            **counts,
        )


def log(ws: Workspace, limit: int | None = None) -> list[hist.CommitInfo]:
    with ws.reader() as store:
        return hist.log(store, limit=limit)


def diff(
    ws: Workspace, old: str, new: str, *, inferred: bool = False, bookkeeping: bool = True
) -> tuple[int, int, set[tuple], set[tuple]]:
    """Triples added and removed from ``old`` to ``new``; ``bookkeeping=False`` leaves out
    commit records and revision metadata."""
    with ws.reader() as store:
        a, b = hist.resolve_revision(store, old), hist.resolve_revision(store, new)
        added, removed = hist.diff(store, a, b, inferred=inferred, bookkeeping=bookkeeping)
        return a, b, added, removed


def node_history(
    ws: Workspace, iri: str, *, incoming: bool = False
) -> tuple[list[hist.TripleSpan], dict[int, hist.CommitInfo]]:
    node = parse_iri(iri)
    with ws.reader() as store:
        hist.require_known(store, node)
        return hist.history(store, node, as_object=incoming), hist.commit_times(store)


@dataclass(frozen=True)
class BlameLine:
    span: hist.TripleSpan
    asserted_by: hist.CommitInfo | None
    retracted_by: hist.CommitInfo | None
    # The applied plan and its decision (ULIDs) that produced the revision asserting the triple.
    plan: str | None = None
    decision: str | None = None


def blame(ws: Workspace, iri: str, *, include_retracted: bool = False) -> list[BlameLine]:
    """For each triple of the node: the commit that asserted it (and retracted it), and the
    plan and decision behind that commit where a plan produced it."""
    spans, commits = node_history(ws, iri)
    with ws.reader() as store:
        deciding = provenance.deciding_decisions(store, parse_iri(iri).value)
    lines = [
        BlameLine(
            s,
            commits.get(s.start),
            commits.get(s.end) if s.end is not None else None,
            *deciding.get(s.start, (None, None)),
        )
        for s in spans
        if not s.inferred and (include_retracted or s.end is None)
    ]
    return lines


def commit_summary(result: CommitResult) -> dict[str, Any]:
    return {
        "revision": result.revision,
        "commit": result.commit.value if result.commit else None,
        "added": result.added,
        "removed": result.removed,
        "inferred_added": result.inferred_added,
        "inferred_removed": result.inferred_removed,
        "changed": not result.empty,
    }
