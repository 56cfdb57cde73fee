"""Incremental indexing of one resource: analyze what changed, link, commit the difference.

One run:

1. list the snapshot's files and read them; files no analyzer takes, binary files,
   undecodable text and vanished files are skipped with a reason;
2. compare content hashes (and analyzer versions) with the file nodes in the graph:
   unchanged files are not analyzed; an unchanged tree ends here, with no commit;
3. analyze the changed files, in worker processes when there are many;
4. link references by name over the symbols of every file of the resource (the link
   data of unchanged files comes from a cache beside the store, rebuilt from the files
   when it is missing or stale); files whose references could resolve differently
   because definitions appeared or vanished are re-linked too;
5. diff the desired triples of the affected files against their live triples and make
   one commit (a changed entity keeps its IRI and gets a new revision; deleted files and
   entities get their intervals closed).

The commit is all or nothing, so an interrupted run leaves the store as it was and the
next run starts from what is committed.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

import pyoxigraph as ox

from cleveragents import iris
from cleveragents.graph.commit import CommitRequest, CommitResult, Triple
from cleveragents.graph.ntriples import ntriples
from cleveragents.graph.revisions import TEMPORAL_PREDICATES
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import WriteSession
from cleveragents.processes import die_with_parent
from cleveragents.terms import CA, RDF_TYPE, UKO, UKO_CODE, UKO_PY
from cleveragents.vocabulary import ca, uko_code

from . import emit
from .content import ContentStore
from .limits import DEFAULT_LIMITS, OUT_OF_MEMORY, FileLimits, LimitExceeded, run_guarded, time_limit
from .link import SymbolTable, referenced_names, simple_part
from .model import Analyzer, FileAnalysis, Reference, SourceFile, Span
from .plugins import AnalyzerSet, load_analyzers
from .reading import SourceFiles, load_fingerprints, read_files, save_fingerprints
from .secrets import SecretFinding
from .sources import Skipped, Snapshot

INDEXED_BY = ca.indexedBy
ENRICHED_BY = ca.enrichedBy
# Below this many files the process pool costs more than it saves...
PARALLEL_THRESHOLD = 64
# ... unless a file is this big: it gets a worker, for the hard per-file limits.
ISOLATE_BYTES = 200_000
# "The subject belongs to resource {0}", written as a filter: with the resource as a
# constant in the pattern, Oxigraph starts from it and walks every node of the resource.
_OF_RESOURCE = "<" + UKO + "sourceResource> ?resource . FILTER(?resource = <{0}>)"

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class IndexOptions:
    """Settings of a run (config keys index.max_file_bytes, index.commit_batch_files)."""

    max_file_bytes: int = 1_000_000  # larger files get a file node only
    batch_files: int = 200  # a first index commits this many files at a time
    limits: FileLimits = DEFAULT_LIMITS  # time and memory per file (see limits.py)


DEFAULT_OPTIONS = IndexOptions()


@dataclass(frozen=True)
class FileError:
    path: str
    message: str


@dataclass
class LinkData:
    """What linking needs from an unchanged file, cached so it is not re-parsed: the names
    it defines, and the names its references could resolve through (to find the files
    whose edges may change when definitions appear or vanish). Plain tuples: the cache of
    a big resource is loaded on every incremental run."""

    content_hash: str
    analyzer: str  # 'name@version'
    symbols: tuple[tuple[str, str, str], ...]  # (namespace, name, entity key)
    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """Where an entity of a file is: what a resolver needs to map a definition site back
    to an entity. Lines 1-based, inclusive."""

    key: str
    name: str
    start_line: int
    end_line: int
    untyped_callable: bool = False  # a function or method the syntax gave no return type
    untyped_parameters: tuple[str, ...] = ()  # its parameters declared without a type (self/cls aside)


@dataclass
class FileResult:
    path: str
    link: LinkData
    references: tuple[Reference, ...]
    ntriples: str  # the file's own triples (no cross-file edges)
    entities: int
    problems: int
    hidden: tuple[str, ...] = ()
    data: bytes = b""
    outline: tuple[OutlineEntry, ...] = ()
    cut_off: str | None = None  # why a limit stopped its analysis ("[CODE] reason")


@dataclass
class ResolvedFile:
    """A resolver's answers for one file: for each reference it resolved (by its index in
    the file's references), the targets as (IRI, confidence, resolvedBy), possibly none
    (it resolved to something that is no entity: a local); plus triples of its own
    (diagnostics, inferred types, external symbols) and the file's enrichment mark."""

    marker: str
    references: dict[int, tuple[tuple[str, float, str], ...]] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


class EdgeResolver(Protocol):
    """Resolves references better than names can (a language server: lsp/enrich.py)."""

    marker: str  # 'lsp:<server>': written on each file it enriched, as ca:enrichedBy

    def handles(self, path: str) -> bool: ...

    def resolve(
        self,
        target: Target,
        files: Mapping[str, bytes],
        batch: Mapping[str, Sequence[Reference]],
        outline: Callable[[str], Sequence[OutlineEntry]],
    ) -> dict[str, ResolvedFile]: ...


@dataclass
class ResolutionStats:
    """How a resolver's answers compare with name matching, per edge predicate."""

    confirmed: int = 0  # same targets as the name match
    corrected: int = 0  # different targets (or none: a local)
    added: int = 0  # the name match found nothing
    unresolved: int = 0  # the resolver had no answer; name-match edges kept

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class IndexSummary:
    resource: str
    files_seen: int = 0
    analyzed: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    parse_problems: dict[str, int] = field(default_factory=dict)  # path -> error count
    hidden_entities: dict[str, tuple[str, ...]] = field(default_factory=dict)
    cut_off: dict[str, str] = field(default_factory=dict)  # path -> "[CODE] why": file node only
    entities_added: int = 0
    entities_changed: int = 0
    entities_removed: int = 0
    triples_added: int = 0
    triples_closed: int = 0
    edges: int = 0
    unresolved: int = 0
    revision: int | None = None
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    resolution: dict[str, ResolutionStats] = field(default_factory=dict)  # predicate -> stats
    enrichment: list[dict[str, object]] = field(default_factory=list)  # each resolver's report

    def as_dict(self) -> dict[str, object]:
        return {
            "resource": self.resource,
            "files_seen": self.files_seen,
            "analyzed": self.analyzed,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "errors": [{"path": e.path, "message": e.message} for e in self.errors],
            "parse_problems": dict(sorted(self.parse_problems.items())),
            "hidden_entities": {k: list(v) for k, v in sorted(self.hidden_entities.items())},
            "cut_off": [
                {"path": path, "code": reason[1:].split("]", 1)[0], "reason": reason}
                for path, reason in sorted(self.cut_off.items())
            ],
            "entities_added": self.entities_added,
            "entities_changed": self.entities_changed,
            "entities_removed": self.entities_removed,
            "triples_added": self.triples_added,
            "triples_closed": self.triples_closed,
            "edges": self.edges,
            "unresolved_references": self.unresolved,
            "revision": self.revision,
            "seconds": round(self.seconds, 3),
            "resolution": {p: st.as_dict() for p, st in sorted(self.resolution.items())},
            "enrichment": self.enrichment,
        }


@dataclass(frozen=True)
class Target:
    """The resource being indexed and how to commit to it."""

    iri: str
    ulid: str
    name: str


@dataclass(frozen=True)
class CommitInfo:
    message: str
    cause: str = "index"
    agent: str = "cleveragents"
    external_id: str | None = None
    timestamp: datetime | None = None
    # Facts about the resource node replaced by this run (predicate IRI -> value), e.g.
    # the git commit a history replay indexed; a change here alone still makes a commit.
    resource_state: tuple[tuple[str, str], ...] = ()


def analyzer_id(analyzer: Analyzer) -> str:
    return f"{analyzer.name}@{analyzer.version}"


# -- analysis (runs in worker processes) -------------------------------------------------

_worker_analyzers: AnalyzerSet | None = None
_worker_target: Target | None = None
_worker_max_bytes = IndexOptions.max_file_bytes


def _analyze(job: tuple[str, bytes], cut_off: str | None = None) -> FileResult | FileError:
    """One file's triples and link data; with ``cut_off`` (why its analysis was stopped),
    its file node only."""
    path, data = job
    assert _worker_analyzers is not None and _worker_target is not None
    analyzer = _worker_analyzers.for_path(path)
    if analyzer is None:
        return FileError(path, "no analyzer")
    source = SourceFile(path, data, emit.content_hash(data))
    too_big = f"larger than the analysis limit ({len(data)} bytes)" if len(data) > _worker_max_bytes else None
    reason = cut_off or too_big
    try:
        analysis = _file_node_only(analyzer, source, reason) if reason else analyzer.analyze(source)
        if not analysis.entities or analysis.entities[0].key != "":
            return FileError(path, f"analyzer {analyzer.name} returned no file node")
        lines = emit.entity_lines(analysis, source, _worker_target.ulid, _worker_target.iri)
    except MemoryError:
        raise  # past the memory limit: the worker reports it (limits.py)
    except Exception as exc:  # one bad file never aborts a run; it is reported
        return FileError(path, f"{analyzer.name} analyzer failed: {type(exc).__name__}: {exc}")
    file_node = iris.file_iri(_worker_target.ulid, path)
    lines.append(f"<{file_node}> <{INDEXED_BY}> {emit.literal(analyzer_id(analyzer))} .")
    symbols = tuple((ns, name, e.key) for e in analysis.entities for ns, name in e.symbols)
    hidden = tuple(name for problem in analysis.problems for name in problem.hidden)
    return FileResult(
        path,
        LinkData(source.content_hash, analyzer_id(analyzer), symbols, frozenset(referenced_names(analysis.references))),
        tuple(analysis.references),
        "\n".join(lines),
        len(analysis.entities),
        len(analysis.problems),
        hidden,
        outline=_outline(analysis),
        cut_off=cut_off,
    )


def _cut_off(job: tuple[str, bytes], reason: str) -> FileResult | FileError:
    return _analyze(job, reason)


def _is_callable(types: Iterable[str]) -> bool:
    # By local name: workers have no TBox to ask for subclasses of uko-code:Callable.
    return any(t.rsplit("#", 1)[-1].endswith(("Function", "Method", "Constructor")) for t in types)


def _outline(analysis: FileAnalysis) -> tuple[OutlineEntry, ...]:
    return tuple(
        OutlineEntry(
            e.key,
            e.name,
            e.span.start_line,
            e.span.end_line,
            _is_callable(e.types) and not e.values.get(uko_code.hasReturnType),
            _untyped_parameters(e.values.get(uko_code.hasParameters)),
        )
        for e in analysis.entities
        if e.span is not None and e.key
    )


def _untyped_parameters(encoded: Sequence[object] | None) -> tuple[str, ...]:
    """The names of the parameters in an analyzer's ``hasParameters`` JSON that declare no
    type; the receiver (``self``, ``cls``) is the language's business, not a gap."""
    if not encoded:
        return ()
    try:
        parameters = json.loads(str(encoded[0]))
    except ValueError:
        return ()
    return tuple(
        p["name"]
        for i, p in enumerate(parameters)
        if isinstance(p, dict) and p.get("name") and not p.get("type") and not (i == 0 and p["name"] in ("self", "cls"))
    )


def _file_node_only(analyzer: Analyzer, source: SourceFile, reason: str) -> FileAnalysis:
    from .model import Entity

    node = Entity("", analyzer.file_types(source.path), PurePosixPath(source.path).name)
    node.add(ca.skippedReason, reason)
    return FileAnalysis([node])


def _init_worker(directories: tuple[Path, ...], builtins: bool, target: Target, max_bytes: int) -> None:
    """A worker loads the analyzers the way the parent did (they are not all picklable),
    and dies with its parent (the forkserver, which exits with the command), so a killed
    ``agents index`` leaves no worker behind."""
    global _worker_analyzers, _worker_target, _worker_max_bytes
    die_with_parent()
    _worker_analyzers, _worker_target, _worker_max_bytes = (
        load_analyzers(directories, builtins=builtins),
        target,
        max_bytes,
    )


def analyze_files(
    jobs: list[tuple[str, bytes]],
    analyzers: AnalyzerSet,
    target: Target,
    max_bytes: int,
    progress: Progress | None,
    limits: FileLimits = DEFAULT_LIMITS,
) -> list[FileResult | FileError]:
    """Each job's analysis, in order. Many files, or a big one, go to worker processes
    where the per-file limits are hard; a few small files are analyzed here, under the
    time limit only (limits.py)."""
    global _worker_analyzers, _worker_target, _worker_max_bytes
    _worker_analyzers, _worker_target, _worker_max_bytes = analyzers, target, max_bytes
    workers = min(os.cpu_count() or 1, 4)
    isolate = any(len(data) > ISOLATE_BYTES for _, data in jobs)
    if (len(jobs) >= PARALLEL_THRESHOLD and workers > 1) or isolate:
        return run_guarded(
            jobs,
            workers=workers,
            limits=limits,
            initializer=_init_worker,
            initargs=(analyzers.directories, analyzers.builtins, target, max_bytes),
            work=_analyze,
            cut_off=_cut_off,
            progress=(lambda done: progress("analyze", done, len(jobs))) if progress else None,
        )
    results: list[FileResult | FileError] = []
    for job in jobs:
        try:
            with time_limit(limits):
                result = _analyze(job)
        except LimitExceeded as exc:
            result = _analyze(job, exc.reason)
        except MemoryError:
            result = _analyze(job, OUT_OF_MEMORY)
        results.append(result)
        if progress:
            progress("analyze", len(results), len(jobs))
    return results


# -- the run -----------------------------------------------------------------------------


class Indexer:
    def __init__(
        self,
        session: WriteSession,
        analyzers: AnalyzerSet,
        content: ContentStore,
        cache_dir: Path,
        *,
        options: IndexOptions = DEFAULT_OPTIONS,
        progress: Progress | None = None,
        resolvers: Sequence[EdgeResolver] = (),
    ) -> None:
        self.session = session
        self.resolvers = tuple(resolvers)
        self.store: GraphStore = session.store
        self.analyzers = analyzers
        self.content = content
        self.cache_dir = cache_dir
        self.options = options
        self.progress = progress
        # Link data per resource, kept between runs of one process (history replay, --watch).
        self._link_cache: dict[str, dict[str, LinkData]] = {}

    def run(self, target: Target, snapshot: Snapshot, info: CommitInfo, *, full: bool = False) -> IndexSummary:
        started = time.perf_counter()
        summary = IndexSummary(target.name)
        laps: dict[str, float] = {}

        def lap(name: str, since: list[float] = [started]) -> None:  # noqa: B006 - a stopwatch
            now = time.perf_counter()
            laps[name] = round(now - since[0], 3)
            since[0] = now

        paths, skipped = snapshot.listing()
        summary.skipped += skipped
        known = {} if full else load_fingerprints(self._fingerprint_file(target))
        files = read_files(snapshot, paths, self.analyzers, known, summary.skipped)
        summary.files_seen = len(paths)
        lap("read")

        live = self._live_files(target)
        changed = {p for p in files if full or live.get(p) != (files.hash(p), analyzer_id(files.analyzer(p)))}
        # Files a resolver handles but has not enriched yet are analyzed again for it.
        unenriched = self._unenriched(target, files) - changed
        deleted = set(live) - set(files)
        summary.unchanged = len(files) - len(changed)
        summary.deleted = len(deleted)
        state_add, state_remove = self._resource_state(target, info)
        lap("compare")
        if files.fingerprints != known:
            save_fingerprints(self._fingerprint_file(target), files.fingerprints)
        if not changed and not deleted and not state_add and not unenriched:
            summary.seconds = time.perf_counter() - started
            summary.timings = laps
            return summary

        cache = self._load_cache(target)
        # Unchanged files whose cached link data is missing or stale are re-analyzed too.
        stale = {p for p in files if p not in changed and _cached(cache, p) != live.get(p)}
        to_analyze = changed | stale | unenriched
        results = self._analyze(target, files, to_analyze, summary)
        lap("analyze")

        # Files a killed run analyzed but never committed, and that are gone now: edges the
        # run did commit may point at their entities (see _commit_new_files).
        present = set(files)  # not `p in files`: a Mapping's `in` reads the file
        vanished = {p for p in cache if p not in present and p not in live}
        links = {p: cache[p] for p in files if p not in results and p in cache}
        links.update({p: r.link for p, r in results.items()})
        relink = self._relink_set(cache, results, deleted | vanished, links) - set(results)
        if relink:
            results.update(self._analyze(target, files, relink, summary))
        # Linking a few files of many needs only the names they use.
        few = len(results) * 4 < len(links)
        wanted = set().union(*(r.link.names for r in results.values())) if few else None
        table = symbol_table(target, links, wanted)
        lap("link")

        resolved = self._resolve(target, files, results)
        lap("resolve")
        desired: dict[str, str] = {}
        for p, r in results.items():
            own = resolved.get(p)
            edges = self._edge_text(target, p, r.references, table, summary, own)
            found = secret_finding_lines(target, p, files.findings.get(p, ()))
            desired[p] = "\n".join([r.ntriples, edges, *(own.lines if own else ()), *found])
            r.ntriples = ""  # one copy of the text at a time: big resources hold a lot of it
        # Nothing of this resource is live (not even a directory node left by a run that
        # deleted every file): every IRI the run writes is new.
        first_index = not live and not self.store.query(
            f"ASK {{ ?s <{UKO}sourceResource> <{target.iri}> }}", view=self.store.asserted_view()
        )
        # A directory node only changes when a file appears in it or leaves it (the root
        # also carries the resource's name); a full run rewrites them all.
        # A run killed between batches of new files left no directory nodes: those join in.
        scope = (
            None
            if first_index or full
            else _ancestors((set(files) - set(live)) | deleted) | {""} | self._missing_directories(target, files)
        )
        directories = _directory_text(target, files, scope)
        batched = self._batched(target, desired, live, deleted, first_index, info)
        if first_index or batched:  # every file of the run is new
            summary.entities_added = sum(r.entities for r in results.values())
        for r in results.values():
            self.content.put(r.link.content_hash, files[r.path])
        lap("emit")

        if batched:
            self._commit_new_files(target, desired, cache, results, info, summary)
        request = self._request(target, desired, directories, scope, deleted, first_index, info, summary)
        if state_add:
            request = request or CommitRequest(**_commit_fields(info))
            if request.add_ntriples is not None:  # the bulk path reads only the N-Triples
                request.add_ntriples = request.add_ntriples + b"\n" + ntriples(state_add)
                request.new_subjects = False  # the resource node has live triples
            else:
                request.add = [*request.add, *state_add]
            request.remove = [*request.remove, *state_remove]
        lap("diff")
        if request is not None:
            result: CommitResult = self.session.commit(request)
            summary.revision = result.revision
            summary.triples_added += result.added
            summary.triples_closed += result.removed
        lap("commit")
        for p, r in results.items():
            cache[p] = r.link
        for p in deleted | vanished:
            cache.pop(p, None)
        self._save_cache(target, cache)
        summary.analyzed = len(results)
        summary.seconds = time.perf_counter() - started
        summary.timings = laps
        return summary

    def _batched(
        self,
        target: Target,
        desired: dict[str, str],
        live: dict[str, tuple[str, str]],
        deleted: set[str],
        first_index: bool,
        info: CommitInfo,
    ) -> bool:
        """Whether this run commits its files in batches: when every file it writes is new
        to the graph (a first index, or the rest of one that was killed) and there are
        many. A history replay keeps one commit per source commit."""
        if info.external_id is not None or deleted or len(desired) <= self.options.batch_files:
            return False
        if any(p in live for p in desired):
            return False
        # A file deleted earlier keeps live end-of-life flags: its return is no new subject.
        return first_index or not self._any_live_node(target, desired)

    def _commit_new_files(
        self,
        target: Target,
        desired: dict[str, str],
        cache: dict[str, LinkData],
        results: dict[str, FileResult],
        info: CommitInfo,
        summary: IndexSummary,
    ) -> None:
        """Commit new files' triples several files at a time (removing them from
        ``desired``): memory stays bounded, and a run that is killed resumes from the
        batches already committed. The directory nodes come last, with the run's final
        commit.

        The link data of every file of the run is saved first: the edges of the first
        batch were resolved against all of them, so a resumed run must treat them as
        known (and re-link if one changes or vanishes), without analyzing again what is
        already committed."""
        self._save_cache(target, {**cache, **{p: r.link for p, r in results.items()}})
        paths = sorted(desired)
        size = self.options.batch_files
        batches = range(0, len(paths), size)
        for number, start in enumerate(batches, 1):
            chunk = paths[start : start + size]
            text = "\n".join(desired.pop(p) for p in chunk)
            fields = _commit_fields(info)
            fields["message"] = f"{info.message} (part {number} of {len(batches)})"
            request = CommitRequest(add_ntriples=text.encode("utf-8", errors="replace"), new_subjects=True, **fields)
            result = self.session.commit(request)
            summary.revision = result.revision
            summary.triples_added += result.added
            if self.progress:
                self.progress("commit", min(start + size, len(paths)), len(paths))

    def _any_live_node(self, target: Target, paths: Iterable[str]) -> bool:
        """Whether any of these files' nodes has a live triple (a deleted file keeps its
        isCurrent false and validUntil)."""
        ordered = sorted(paths)
        for start in range(0, len(ordered), 500):
            values = " ".join(f"<{iris.file_iri(target.ulid, p)}>" for p in ordered[start : start + 500])
            if self.store.query(f"ASK {{ VALUES ?f {{ {values} }} ?f ?p ?o }}", view=self.store.asserted_view()):
                return True
        return False

    def _missing_directories(self, target: Target, files: Iterable[str]) -> set[str]:
        """Directories holding indexed files that have no live node."""
        rows = self.store.query(
            f"SELECT ?d WHERE {{ ?d a <{UKO_CODE}Package> ; {_OF_RESOURCE.format(target.iri)} }}",
            view=self.store.asserted_view(),
        )
        present = {row["d"].value for row in rows}
        return {d for d in _ancestors(files) if iris.directory_iri(target.ulid, d) not in present}

    # -- steps -------------------------------------------------------------------------

    def _live_files(self, target: Target) -> dict[str, tuple[str, str]]:
        """path -> (content hash, analyzer id) of the file nodes currently in the graph."""
        rows = self.store.query(
            f"SELECT ?path ?hash ?by WHERE {{ ?f <{INDEXED_BY}> ?by ; <{UKO}sourcePath> ?path ; "
            f"<{UKO}contentHash> ?hash ; {_OF_RESOURCE.format(target.iri)} }}",
            view=self.store.asserted_view(),
        )
        return {row["path"].value: (row["hash"].value, row["by"].value) for row in rows}

    def _analyze(
        self, target: Target, files: SourceFiles, paths: Iterable[str], summary: IndexSummary
    ) -> dict[str, FileResult]:
        jobs: list[tuple[str, bytes]] = []
        for path in sorted(paths):
            try:
                jobs.append((path, files[path]))
            except OSError as exc:  # a file trusted by its fingerprint, read only now, and gone or unreadable
                summary.errors.append(FileError(path, f"unreadable: {exc.strerror or exc}"))
        out: dict[str, FileResult] = {}
        analyzed = analyze_files(
            jobs, self.analyzers, target, self.options.max_file_bytes, self.progress, self.options.limits
        )
        for result in analyzed:
            if isinstance(result, FileError):
                summary.errors.append(result)
                continue
            out[result.path] = result
            if result.cut_off:
                summary.cut_off[result.path] = result.cut_off
            if result.problems:
                summary.parse_problems[result.path] = result.problems
            if result.hidden:
                summary.hidden_entities[result.path] = result.hidden
        return out

    def _relink_set(
        self,
        cache: dict[str, LinkData],
        results: dict[str, FileResult],
        deleted: set[str],
        links: dict[str, LinkData],
    ) -> set[str]:
        """Unchanged files whose references may now resolve differently."""
        touched: set[str] = set()
        for path, result in results.items():
            before = {(ns, name) for ns, name, _ in cache[path].symbols} if path in cache else set()
            after = {(ns, name) for ns, name, _ in result.link.symbols}
            touched.update(name for _, name in before ^ after)
        for path in deleted:
            if path in cache:
                touched.update(name for _, name, _ in cache[path].symbols)
        if not touched:
            return set()
        touched |= {name.rsplit(".", 1)[-1] for name in touched}
        return {p for p, link in links.items() if p not in results and link.names & touched}

    def _edge_text(
        self,
        target: Target,
        path: str,
        references: tuple[Reference, ...],
        table: SymbolTable,
        summary: IndexSummary,
        resolved: ResolvedFile | None = None,
    ) -> str:
        best: dict[tuple[str, str, str], tuple[float, str]] = {}
        answers = resolved.references if resolved is not None else {}
        for number, reference in enumerate(references):
            source = iris.file_iri(target.ulid, path, reference.source)
            hits = [(iri, confidence, "name-match") for iri, confidence in table.resolve(reference)]
            better = answers.get(number)
            if resolved is not None and reference.position is not None:
                _compare(summary, reference.predicate, hits, better)
            if better is not None:
                hits = list(better)
            if not hits:
                summary.unresolved += 1
            for iri, confidence, by in hits:
                if iri == source and reference.predicate != uko_code.calls:
                    continue
                key = (source, reference.predicate, iri)
                if key not in best or confidence > best[key][0]:
                    best[key] = (confidence, by)
        summary.edges += len(best)
        lines: list[str] = []
        for (s, p, o), (confidence, by) in best.items():
            lines += emit.edge_lines(s, p, o, confidence, by)
        return "\n".join(lines)

    def _resolve(self, target: Target, files: SourceFiles, results: dict[str, FileResult]) -> dict[str, ResolvedFile]:
        """Every resolver's answers for the files of this run that it handles."""
        out: dict[str, ResolvedFile] = {}
        if not self.resolvers or not results:
            return out
        outlines: dict[str, tuple[OutlineEntry, ...]] = {p: r.outline for p, r in results.items()}

        def outline(path: str) -> tuple[OutlineEntry, ...]:
            if path not in outlines:
                outlines[path] = self._graph_outline(target, path)
            return outlines[path]

        for resolver in self.resolvers:
            batch = {p: r.references for p, r in results.items() if p not in out and resolver.handles(p)}
            if batch:
                out.update(resolver.resolve(target, files, batch, outline))
        return out

    def _graph_outline(self, target: Target, path: str) -> tuple[OutlineEntry, ...]:
        """The outline of a file this run did not analyze, from its live entities."""
        rows = self.store.query(
            f"SELECT ?e ?name ?range WHERE {{ ?e <{UKO}sourcePath> {emit.literal(path)} ; "
            f"<{UKO}sourceRange> ?range ; <{UKO}name> ?name ; {_OF_RESOURCE.format(target.iri)} }}",
            view=self.store.asserted_view(),
        )
        out: list[OutlineEntry] = []
        for row in rows:
            parts = iris.split_iri(row["e"].value)
            if parts is None or not parts[2]:
                continue
            start, _, end, _ = Span.parse(row["range"].value)
            out.append(OutlineEntry(parts[2], row["name"].value, start, end))
        return tuple(out)

    def _unenriched(self, target: Target, files: SourceFiles) -> set[str]:
        if not self.resolvers:
            return set()
        rows = self.store.query(
            f"SELECT ?path ?by WHERE {{ ?f <{ENRICHED_BY}> ?by ; <{UKO}sourcePath> ?path ; "
            f"{_OF_RESOURCE.format(target.iri)} }}",
            view=self.store.asserted_view(),
        )
        marks: dict[str, set[str]] = {}
        for row in rows:
            marks.setdefault(row["path"].value, set()).add(row["by"].value)
        return {p for p in files for r in self.resolvers if r.handles(p) and r.marker not in marks.get(p, set())}

    def _request(
        self,
        target: Target,
        desired: dict[str, str],
        directories: str,
        scope: set[str] | None,
        deleted: set[str],
        first_index: bool,
        info: CommitInfo,
        summary: IndexSummary,
    ) -> CommitRequest | None:
        common = _commit_fields(info)
        text = "\n".join([*desired.values(), directories])
        if first_index:
            # Every IRI of a first index is new: entity IRIs carry the resource's ULID.
            return CommitRequest(add_ntriples=text.encode("utf-8", errors="replace"), new_subjects=True, **common)
        # Both sides as Oxigraph's canonical N-Triples lines, so the diff is a set difference.
        new = _canonical_lines(text.encode("utf-8", errors="replace"))
        old = self._live_lines(target, set(desired) | deleted, scope)
        add = new - old
        remove = old - new
        if not add and not remove:
            return None
        removed = list(ox.parse(_ntriples(remove), format=ox.RdfFormat.N_TRIPLES)) if remove else []
        _count_entity_changes(add, removed, summary)
        return CommitRequest(
            add_ntriples=_ntriples(add) if add else None,
            remove=[(t.subject, t.predicate, t.object) for t in removed],
            **common,
        )

    def _resource_state(self, target: Target, info: CommitInfo) -> tuple[list[Triple], list[Triple]]:
        """Triples to add and remove so the resource node carries ``info.resource_state``."""
        add: list[Triple] = []
        remove: list[Triple] = []
        node = ox.NamedNode(target.iri)
        for predicate, value in info.resource_state:
            current = [q.object for q in self.store.live_quads(node, ox.NamedNode(predicate))]
            if [iris.term_text(o) for o in current] != [value]:
                add.append((node, ox.NamedNode(predicate), ox.Literal(value)))
                remove += [(node, ox.NamedNode(predicate), o) for o in current]
        return add, remove

    def _live_lines(self, target: Target, paths: set[str], directories: set[str] | None) -> set[str]:
        """The asserted, current triples of these files' nodes, of their edges' reifiers, and
        of these directory nodes of the resource (None: all of them), as canonical N-Triples
        lines.

        Reifier IRIs are derived from the edges (``iris.edge_iri``), so they are fetched by
        IRI; matching ``rdf:reifies <<( ?s ?p ?o )>>`` would scan every reifier instead.
        """
        not_temporal = ", ".join(f"<{p}>" for p in sorted(TEMPORAL_PREDICATES))
        lines: set[str] = set()
        ordered = sorted(paths)
        for start in range(0, len(ordered), 500):
            values = " ".join(emit.literal(p) for p in ordered[start : start + 500])
            lines |= self._construct(
                f"VALUES ?path {{ {values} }} ?s <{UKO}sourcePath> ?path ; {_OF_RESOURCE.format(target.iri)} "
                f"?s ?p ?o . FILTER(?p NOT IN ({not_temporal}))"
            )
        if directories is None:
            lines |= self._construct(
                f"?s a <{UKO_CODE}Package> ; {_OF_RESOURCE.format(target.iri)} "
                f"?s ?p ?o . FILTER(?p NOT IN ({not_temporal}))"
            )
        else:
            values = " ".join(f"<{iris.directory_iri(target.ulid, d)}>" for d in sorted(directories))
            lines |= self._construct(
                f"VALUES ?s {{ {values} }} ?s a <{UKO_CODE}Package> ; ?p ?o . FILTER(?p NOT IN ({not_temporal}))"
            )
        edges = [iris.edge_iri(*_iris(line)) for line in lines if line.endswith(">") and " <<(" not in line]
        for start in range(0, len(edges), 1000):
            values = " ".join(f"<{iri}>" for iri in edges[start : start + 1000])
            lines |= self._construct(f"VALUES ?s {{ {values} }} ?s ?p ?o")
        return lines

    def _construct(self, pattern: str) -> set[str]:
        result = self.store.query(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {pattern} }}", view=self.store.asserted_view())
        return _lines(ox.serialize(result, format=ox.RdfFormat.N_TRIPLES))

    # -- link-data cache -----------------------------------------------------------------

    def _cache_file(self, target: Target) -> Path:
        return self.cache_dir / f"{target.ulid}.pickle"

    def _fingerprint_file(self, target: Target) -> Path:
        return self.cache_dir / f"{target.ulid}.files.pickle"

    def _load_cache(self, target: Target) -> dict[str, LinkData]:
        if target.ulid in self._link_cache:
            return self._link_cache[target.ulid]
        try:
            with self._cache_file(target).open("rb") as handle:
                fingerprint, files = pickle.load(handle)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
            return {}
        return files if fingerprint == self.analyzers.fingerprint() else {}

    def _save_cache(self, target: Target, files: dict[str, LinkData]) -> None:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump((self.analyzers.fingerprint(), files), handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self._cache_file(target))
        self._link_cache[target.ulid] = files


def symbol_table(target: Target, links: dict[str, LinkData], wanted: set[str] | None = None) -> SymbolTable:
    """Every name the resource's files define, for resolving references by name; with
    ``wanted`` (the names some files' references use: ``LinkData.names``), only the
    definitions those references can reach. An incremental run links a few files, and
    building the whole table of a big resource would cost more than everything else."""
    table = SymbolTable()
    for path, link in links.items():
        node = ""
        for namespace, name, key in link.symbols:
            if wanted is None or name in wanted or simple_part(name) in wanted:
                node = node or iris.file_iri(target.ulid, path)
                table.define(namespace, name, iris.entity_iri(node, key))
            else:
                table.add_root(namespace, name)
    return table


def _commit_fields(info: CommitInfo) -> dict[str, Any]:
    return {
        "message": info.message,
        "cause": info.cause,
        "agent": info.agent,
        "external_id": info.external_id,
        "timestamp": info.timestamp,
    }


def _compare(
    summary: IndexSummary,
    predicate: str,
    guessed: list[tuple[str, float, str]],
    resolved: tuple[tuple[str, float, str], ...] | None,
) -> None:
    stats = summary.resolution.setdefault(predicate, ResolutionStats())
    if resolved is None:
        stats.unresolved += 1
    elif not guessed:
        stats.added += 1
    elif {iri for iri, _, _ in guessed} == {iri for iri, _, _ in resolved}:
        stats.confirmed += 1
    else:
        stats.corrected += 1


def _cached(cache: dict[str, LinkData], path: str) -> tuple[str, str] | None:
    link = cache.get(path)
    return (link.content_hash, link.analyzer) if link else None


def _ancestors(paths: Iterable[str]) -> set[str]:
    """The directories holding these paths, up to the root (``""``)."""
    out: set[str] = set()
    for path in paths:
        parts = path.split("/")
        out.update("/".join(parts[:depth]) for depth in range(len(parts)))
    return out


def _directory_text(target: Target, files: Iterable[str], scope: set[str] | None = None) -> str:
    """Package nodes for every directory holding an indexed file (or only for the
    directories in ``scope``), with uko:contains."""
    children: dict[str, set[str]] = {"": set()}
    python_packages: set[str] = set()
    for path in files:
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth])
            child = "/".join(parts[: depth + 1])
            children.setdefault(parent, set()).add(iris.directory_iri(target.ulid, child))
            children.setdefault(child, set())
        parent = "/".join(parts[:-1])
        children.setdefault(parent, set()).add(iris.file_iri(target.ulid, path))
        if parts[-1] == "__init__.py":
            python_packages.add(parent)
    lines: list[str] = []
    for directory, members in children.items():
        if scope is not None and directory not in scope:
            continue
        node = iris.directory_iri(target.ulid, directory)
        lines.append(f"<{node}> <{RDF_TYPE}> <{UKO_CODE}Package> .")
        if directory in python_packages:
            lines.append(f"<{node}> <{RDF_TYPE}> <{UKO_PY}Package> .")
        name = directory.rsplit("/", 1)[-1] if directory else target.name
        lines.append(f"<{node}> <{UKO}name> {emit.literal(name)} .")
        lines += emit.provenance_lines(node, target.iri, directory or ".")
        lines += [f"<{node}> <{emit.CONTAINS}> <{member}> ." for member in sorted(members)]
    return "\n".join(lines)


def _lines(data: bytes | None) -> set[str]:
    return set(filter(None, (data or b"").decode().split(" .\n")))


def _ntriples(lines: Iterable[str]) -> bytes:
    return "".join(f"{line} .\n" for line in lines).encode()


def _canonical_lines(data: bytes) -> set[str]:
    """Parse through a scratch store so literals take the form Oxigraph stores them in."""
    scratch = ox.Store()
    scratch.bulk_load(data, format=ox.RdfFormat.N_TRIPLES)
    return _lines(scratch.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph()))


def _iris(line: str) -> tuple[str, str, str]:
    """(subject, predicate, object) IRIs of an N-Triples line whose terms are all IRIs."""
    s, p, o = line.split(" ", 2)
    return s[1:-1], p[1:-1], o[1:-1]


def _count_entity_changes(add: set[str], remove: list[ox.Triple], summary: IndexSummary) -> None:
    type_marker = f" <{RDF_TYPE}> "
    typed_added = {line.split(" ", 1)[0][1:-1] for line in add if type_marker in line}
    typed_removed = {iris.term_text(t.subject) for t in remove if t.predicate.value == RDF_TYPE}
    touched = {line.split(" ", 1)[0][1:-1] for line in add} | {iris.term_text(t.subject) for t in remove}
    summary.entities_added += len(typed_added - typed_removed)
    summary.entities_removed += len(typed_removed - typed_added)
    summary.entities_changed += len(
        {s for s in touched - typed_added - typed_removed if not s.startswith(iris.EDGE_BASE)}
    )


def secret_finding_lines(target: Target, path: str, findings: Iterable[SecretFinding]) -> list[str]:
    """N-Triples recording the secrets masked in a file: kind and line, never the value.
    Each finding is a node of the file (``uko:sourcePath``), so it follows the file's edits."""
    file_node = iris.file_iri(target.ulid, path)
    out: list[str] = []
    for finding in findings:
        slug = "".join(ch if ch.isalnum() else "-" for ch in finding.kind.lower())
        node = iris.file_iri(target.ulid, path, f"secret/{finding.line}/{slug}")
        out += [
            f"<{file_node}> <{CA}hasSecretFinding> <{node}> .",
            f"<{node}> <{RDF_TYPE}> <{CA}SecretFinding> .",
            f"<{node}> <{CA}secretKind> {emit.literal(finding.kind)} .",
            f'<{node}> <{CA}secretLine> "{finding.line}"^^<http://www.w3.org/2001/XMLSchema#integer> .',
            f"<{node}> <{UKO}sourcePath> {emit.literal(path)} .",
            f"<{node}> <{UKO}sourceResource> <{target.iri}> .",
        ]
    return out
