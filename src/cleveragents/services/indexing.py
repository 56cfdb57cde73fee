"""Indexing resources into the graph: which resources, which files, which analyzers."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.config import Config
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.history import log
from cleveragents.graph.workspace import Workspace, WriteSession
from cleveragents.indexing.content import content_store
from cleveragents.indexing.git_history import GitCommit, commits_to_replay, replay
from cleveragents.indexing.indexer import (
    DEFAULT_OPTIONS,
    CommitInfo,
    Indexer,
    IndexOptions,
    IndexSummary,
    Progress,
    Target,
)
from cleveragents.indexing.limits import FileLimits
from cleveragents.indexing.plugins import AnalyzerSet, load_analyzers
from cleveragents.indexing.sources import DirectorySnapshot, GitWorkTreeSnapshot, Snapshot
from cleveragents.indexing.watch import watch as watch_roots
from cleveragents.services import entities
from cleveragents.services.projects import LINKS
from cleveragents.services.resources import ResourceInfo, describe


def analyzer_set(path_setting: str = "") -> AnalyzerSet:
    """Built-ins plus the user's analyzer directories (config key ``analyzers.path``)."""
    return load_analyzers([Path(p).expanduser() for p in path_setting.split(os.pathsep) if p])


def options_from(config: Config) -> IndexOptions:
    return IndexOptions(
        max_file_bytes=int(config.value("index.max_file_bytes")),
        batch_files=int(config.value("index.commit_batch_files")),
        limits=FileLimits(
            seconds=float(config.value("index.file_time_limit")),
            memory_mb=int(config.value("index.file_memory_limit")),
        ),
    )


def target_of(info: ResourceInfo) -> Target:
    return Target(iri=info.iri, ulid=info.ulid, name=info.name)


def snapshot_of(info: ResourceInfo) -> Snapshot:
    root = Path(info.location)
    if not root.is_dir():
        raise NotFoundError(
            f"resource {info.name}: its location {root} is not a directory any more",
            suggestions=[f"agents resource remove {info.name}"],
        )
    return GitWorkTreeSnapshot(root) if info.type == "git-checkout" else DirectorySnapshot(root)


def resources_to_index(ws: Workspace, refs: list[str], project: str | None) -> list[ResourceInfo]:
    with ws.reader() as store:
        if project:
            node = entities.find(store, "Project", project, kind="project")
            linked = [q.object for q in store.live_quads(node, LINKS) if isinstance(q.object, ox.NamedNode)]
            if not linked:
                raise ValidationError(
                    f"project '{project}' links no resources", suggestions=["agents project link-resource"]
                )
            found = [describe(store, resource) for resource in linked]
            return sorted(found, key=lambda r: r.name)
        if refs:
            return [describe(store, entities.find(store, "Resource", ref, kind="resource")) for ref in refs]
        return [describe(store, node) for node in entities.named(store, "Resource")]


def index(
    ws: Workspace,
    resources: list[ResourceInfo],
    *,
    full: bool = False,
    agent: str = "cleveragents",
    analyzers: AnalyzerSet | None = None,
    options: IndexOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
    lsp: bool = False,
    lsp_timeout: float = 10.0,
) -> list[IndexSummary]:
    """Index each resource in its own commit (an unchanged resource writes none). With
    ``lsp``, the language servers registered for the resource's languages resolve its
    references after the tree-sitter pass (see lsp/enrich.py); a server that can't be used
    is reported in the summary and the name-match edges stay."""
    summaries: list[IndexSummary] = []
    enrich: Callable[[Path, Iterable[str]], tuple[list[Any], list[Any]]] | None = None
    close_runtime: Callable[[], None] | None = None
    if lsp:  # imported here: pygls and lsprotocol take a while to import, and most runs don't need them
        from cleveragents.lsp.runtime import close_shared_runtime, shared_runtime
        from cleveragents.services import lsp_registry
        from cleveragents.services.lsp_enrichment import enrichers_for

        registry = lsp_registry.list_entries(ws)  # before the writer: see enrichers_for
        enrich = functools.partial(enrichers_for, registry, runtime=shared_runtime(), timeout=lsp_timeout)
        close_runtime = close_shared_runtime
    try:
        with ws.writer() as session:
            indexer = _indexer(ws, session, analyzers, options, progress)
            for info in resources:
                snapshot = snapshot_of(info)
                reports: list[Any] = []
                indexer.resolvers = ()
                if enrich is not None:
                    paths, _ = snapshot.listing()
                    enrichers, reports = enrich(Path(info.location), paths)
                    indexer.resolvers = tuple(enrichers)
                message = f"index {info.name}" + (" (full)" if full else "") + (" with LSP" if lsp else "")
                summary = indexer.run(target_of(info), snapshot, CommitInfo(message, agent=agent), full=full)
                reports += [r.report for r in indexer.resolvers]
                summary.enrichment = [r.as_dict() for r in reports]
                summaries.append(summary)
    finally:
        if close_runtime is not None:
            close_runtime()
    return summaries


def import_history(
    ws: Workspace,
    info: ResourceInfo,
    *,
    max_commits: int | None = None,
    since: str | None = None,
    analyzers: AnalyzerSet | None = None,
    options: IndexOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
    on_commit: Callable[[GitCommit, IndexSummary | None], None] | None = None,
) -> list[IndexSummary]:
    """Replay a git resource's history, one graph commit per git commit (already imported ones are skipped)."""
    if info.type != "git-checkout":
        raise ValidationError(
            f"resource {info.name} is a {info.type}; --history needs a git-checkout resource",
            suggestions=["agents resource add PATH --type git-checkout"],
        )
    commits = commits_to_replay(Path(info.location), max_commits=max_commits, since=since)
    with ws.writer() as session:
        imported = {c.external_id for c in log(session.store) if c.external_id}
        indexer = _indexer(ws, session, analyzers, options, progress)
        return replay(indexer, target_of(info), Path(info.location), commits, imported, on_commit)


def _indexer(
    ws: Workspace,
    session: WriteSession,
    analyzers: AnalyzerSet | None,
    options: IndexOptions,
    progress: Progress | None,
) -> Indexer:
    return Indexer(
        session,
        analyzers or analyzer_set(),
        content_store(ws),
        ws.data_dir / "index-cache",
        options=options,
        progress=progress,
    )


def watch(
    ws: Workspace,
    resources: list[ResourceInfo],
    on_run: Callable[[IndexSummary], None],
    *,
    agent: str = "cleveragents",
    analyzers: AnalyzerSet | None = None,
    options: IndexOptions = DEFAULT_OPTIONS,
) -> None:
    """Keep the graph current while files change (until interrupted). The store is held
    only while a run writes, so other commands can write in between."""
    analyzers = analyzers or analyzer_set()
    by_ulid = {info.ulid: info for info in resources}

    def reindex(ulid: str) -> None:
        on_run(*index(ws, [by_ulid[ulid]], agent=agent, analyzers=analyzers, options=options))

    watch_roots(((info.ulid, Path(info.location)) for info in resources), reindex)
