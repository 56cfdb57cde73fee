"""temporal-archaeology: what changed in the focus area, how often, and in which commits.

The area is the files of the focus (IRIs, paths, names; else names found in the query;
else the whole scope). Entity change counts come from the named query context-changes, the
commit log from the named query ``commits``, change coupling from ``files-changed-together``;
all up to the backends' revision, so ``as_of`` (and TemporalScope.AS_OF) is honored.
Python writes one summary fragment per file, most changed first.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection
from typing import Any

import pyoxigraph as ox

from cleveragents.context import intent as intents
from cleveragents.context import toolkit
from cleveragents.context.model import (
    ContextFragment,
    ContextRequest,
    PlanContext,
    StrategyCapabilities,
    TemporalScope,
)
from cleveragents.context.protocols import BackendSet, GraphBackend

NAME = "temporal-archaeology"
HISTORY_WORDS = re.compile(
    r"\b(history|histor\w+|changed?|changes|commits?|blame|recent(ly)?|evolv\w*|regress\w*|churn|last time)\b",
    re.I,
)
MAX_ENTITIES_PER_FILE = 25


def head_revision(graph: GraphBackend, backends: BackendSet) -> int:
    """The revision the backends read at, else the store's latest commit."""
    revision = toolkit.revision_of(backends)
    if revision is not None:
        return revision
    rows = toolkit.run(graph, "commits", None)
    return max((int(r["revision"]) for r in rows), default=0)


def change_counts(
    graph: GraphBackend, scope: frozenset[str] | None, paths: list[str] | None, to: int
) -> list[dict[str, Any]]:
    """context-changes rows for the files (None: every file in scope), in scope only."""
    bind: dict[str, list[ox.Literal]] = {"to": [ox.Literal(to)]}
    if paths is not None:
        if not paths:
            return []
        bind = {"path": [ox.Literal(p) for p in paths], "to": [ox.Literal(to)] * len(paths)}
    rows = toolkit.run(graph, "context-changes", scope, bind)
    return [r for r in rows if toolkit.in_scope(r["entity"], scope)]


class TemporalArchaeology(toolkit.StrategyBase):
    """History of the focus area from the store's commits."""

    strategy_name = NAME
    strategy_capabilities = StrategyCapabilities(
        uses_graph=True, uses_temporal=True, supports_temporal=True, uko_levels=["0"], quality_score=0.5
    )
    description = "Change history of the focus area from the store's commits (counts, revisions, git shas, coupling)."

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        if backends.graph is None:
            return 0.0
        if request.temporal == TemporalScope.HISTORY:
            return 0.9
        if HISTORY_WORDS.search(request.query or "") or HISTORY_WORDS.search(request.purpose or ""):
            return 0.6
        return 0.1  # history rarely hurts, but seldom answers a plain question

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self._notes = []
        if (readable := toolkit.graph_and_scope(request, backends, budget, self._notes)) is None:
            return []
        graph, scope = readable
        to = head_revision(graph, backends)
        focus_nodes, paths = self._area(graph, scope, request)
        rows = change_counts(graph, scope, paths, to)
        asked = request.temporal == TemporalScope.HISTORY or bool(
            HISTORY_WORDS.search(request.query or "") or HISTORY_WORDS.search(request.purpose or "")
        )
        if not asked:  # history to tell: what was edited after it was added, not a list of what exists
            edited = {(r["path"], toolkit.resource_of(r["entity"])) for r in rows if int(r["changes"]) > 1}
            rows = [r for r in rows if (r["path"], toolkit.resource_of(r["entity"])) in edited]
        if not rows:
            self._notes.append(f"no entity in the area changed after it was added (up to revision {to})")
            return []
        commits = {int(r["revision"]): r for r in toolkit.run(graph, "commits", None) if int(r["revision"]) <= to}
        coupled = self._coupling(graph, scope, {r["path"] for r in rows}, to) if paths else {}
        by_file: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_file[(toolkit.resource_of(row["entity"]) or "", row["path"])].append(row)
        # Files touched by the most commits first, then by how many edits (beyond creation) they saw.
        ranked = sorted(by_file.items(), key=lambda kv: (-_commits(kv[1]), -_edits(kv[1]), kv[0]))
        most = max(_commits(entries) for _, entries in ranked) or 1
        budget_left = toolkit.Budget(budget, backends.encoding)
        fragments: list[ContextFragment] = []
        for (resource, path), entries in ranked:
            if budget_left.left < toolkit.MIN_FRAGMENT_TOKENS:
                break
            text = self._summary(path, entries, commits, coupled.get(path, []), focus_nodes)
            file_node = f"{toolkit.SOURCE_BASE}{resource}/{path}"
            total = _edits(entries)
            named = max((focus_nodes.get(r["entity"], 0.0) for r in entries), default=0.0)
            relevance = max(named, 0.3 + 0.6 * _commits(entries) / most)
            frag = toolkit.text_fragment(
                NAME, file_node, text, budget_left, relevance, edits=total, up_to_revision=to, history=True
            )
            if frag is not None:
                frag.provenance.path = path
                frag.provenance.revision = to
                fragments.append(frag)
        self._notes.append(f"{len(rows)} entity histories in {len(by_file)} file(s) up to revision {to}")
        return fragments

    def _area(
        self, graph: GraphBackend, scope: frozenset[str] | None, request: ContextRequest
    ) -> tuple[dict[str, float], list[str] | None]:
        """The focus nodes (how surely the request names each) and the files they are in;
        None when the area is the whole scope."""
        given = list(dict.fromkeys([*request.focus, *request.entities]))
        if given:
            resolved = toolkit.resolve_focus(graph, scope, given)
            nodes = {n: 1.0 for found in resolved.values() for n in found}
        else:
            nodes = toolkit.named_nodes(graph, scope, request, intents.analyze(request))
        if not nodes:
            if given or request.query:
                self._notes.append("the focus matched nothing: the whole scope's history instead")
            return {}, None
        infos = toolkit.node_infos(graph, scope, nodes)
        return nodes, sorted({i.path for i in infos.values() if i.path})

    @staticmethod
    def _coupling(graph: GraphBackend, scope: frozenset[str] | None, paths: set[str], to: int) -> dict[str, list[str]]:
        """For each file of the area, the files most often changed in the same commits."""
        out: dict[str, list[str]] = defaultdict(list)
        ordered = sorted(paths)[:20]  # the area's top files; coupling of a whole tree is a report, not context
        bind = {"path": [ox.Literal(p) for p in ordered], "to": [ox.Literal(to)] * len(ordered)}
        for row in toolkit.run(graph, "context-co-changes", scope, bind):
            out[row["path"]].append(f"{row['other']} ({row['together']})")
        return out

    @staticmethod
    def _summary(
        path: str,
        entries: list[dict[str, Any]],
        commits: dict[int, dict[str, Any]],
        coupled: list[str],
        focus_nodes: Collection[str],
    ) -> str:
        # The last revision that touched the file, not the head: commits elsewhere (a recorded
        # assembly, another resource) leave this text, and the context's hash, unchanged.
        last_change = max(int(r["last"]) for r in entries)
        lines = [f"# History of {path}: {_commits(entries)} commit(s) touched it, the last r{last_change}"]
        if coupled:
            lines.append("changed together with: " + ", ".join(coupled[:5]))
        # The focus first, then the most changed entities; what was only ever added is no history.
        ordered = sorted(entries, key=lambda r: (r["entity"] not in focus_nodes, -r["changes"], r["entity"]))
        listed = [r for r in ordered if r["changes"] > 1][:MAX_ENTITIES_PER_FILE]
        for row in listed:
            label = _label(row, path)
            last = commits.get(int(row["last"]), {})
            when = str(last.get("time", ""))[:19]
            message = str(last.get("message") or "").splitlines()[0][:80] if last.get("message") else ""
            shas = " ".join(s[:10] for s in str(row.get("shas") or "").split()[:3])
            detail = f"; git {shas}" if shas else ""
            lines.append(
                f"- {label}: {row['changes']} revision(s) (r{row['revisions'].replace(' ', ', r')}{detail}); "
                f"last r{row['last']} {when} {message}".rstrip()
            )
        if not listed:  # asked about change, and nothing here changed after it was added
            first = min(int(n) for r in entries for n in str(r["revisions"]).split())
            lines.append(f"- not changed since it was added at r{first}")
        return "\n".join(lines)


def _commits(entries: list[dict[str, Any]]) -> int:
    """How many commits touched any of these entities."""
    return len({n for r in entries for n in str(r["revisions"]).split()})


def _edits(entries: list[dict[str, Any]]) -> int:
    """Revisions beyond each entity's first: how much the entities were edited."""
    return sum(int(r["changes"]) - 1 for r in entries)


def _label(row: dict[str, Any], path: str) -> str:
    return row["entity"].split("#", 1)[1] if "#" in row["entity"] else (row.get("name") or path)


STRATEGIES = [TemporalArchaeology]
