"""Which language servers enrich an index run of a resource, and how they are launched."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from cleveragents.errors import LSPUnavailable
from cleveragents.lsp.client import ServerLaunch
from cleveragents.lsp.enrich import EnrichmentReport, LSPEnricher
from cleveragents.lsp.languages import resource_languages
from cleveragents.lsp.registry import LSPServerEntry
from cleveragents.lsp.runtime import LSPRuntime
from cleveragents.services import lsp_registry

DEFAULT_REQUEST_TIMEOUT = 10.0


def launch_of(entry: LSPServerEntry, *, request_timeout: float = DEFAULT_REQUEST_TIMEOUT) -> ServerLaunch:
    """How to start ``entry``; raises ``LSPUnavailable`` (with the reason) when it can't be."""
    return ServerLaunch(
        name=entry.name,
        command=tuple(entry.resolve_command()),
        transport=entry.transport,
        host=entry.host,
        port=entry.port,
        initialization_options=entry.interpolated_initialization() or None,
        workspace_settings=entry.workspace_settings or None,
        request_timeout=request_timeout,
    )


def enrichers_for(
    registry: Sequence[LSPServerEntry],
    root: Path,
    paths: Iterable[str],
    runtime: LSPRuntime,
    *,
    timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> tuple[list[LSPEnricher], list[EnrichmentReport]]:
    """One enricher per language server of ``registry`` (lsp_registry.list_entries, read
    before the index takes the writer: a reader opened beside a compacting writer can
    lose its files) that covers languages present under ``root`` (the first registered
    for a language wins), and a report for each server that is registered for them but
    can't be used, with the reason."""
    enrichers: list[LSPEnricher] = []
    unusable: list[EnrichmentReport] = []
    chosen: set[str] = set()
    covered: set[str] = set()
    for language in sorted(resource_languages(paths)):
        if language in covered:
            continue
        for entry in lsp_registry.covering(registry, language):
            if entry.name in chosen:
                break
            try:
                launch = launch_of(entry, request_timeout=timeout)
            except LSPUnavailable as exc:
                unusable.append(EnrichmentReport(entry.name, unavailable=str(exc)))
                continue
            chosen.add(entry.name)
            covered.update(entry.languages)
            enrichers.append(LSPEnricher(runtime, launch, entry.languages, root))
            break
    return enrichers, unusable
