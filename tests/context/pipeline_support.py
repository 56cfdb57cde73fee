"""Support for the pipeline and assembler tests: a small real store (three files of
requests 2.32.3), fragments rendered from it at real depths with real token counts, and
tiny in-test strategies named for what they do."""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cleveragents.context.backends.documents import head_revision
from cleveragents.context.backends.graph import StoreGraphBackend
from cleveragents.context.model import (
    ContextFragment,
    ContextRequest,
    FragmentProvenance,
    PlanContext,
    StrategyCapabilities,
)
from cleveragents.context.protocols import BackendSet
from cleveragents.context.tokens import counter_for
from cleveragents.graph.workspace import Workspace
from cleveragents.services import indexing, resources
from corpora.fetch import corpus_dir

FILES = ("sessions.py", "auth.py", "structures.py")


@dataclass
class Corpus:
    ws: Workspace
    resource: str  # ULID
    graph: StoreGraphBackend
    nodes: list[tuple[str, str, tuple[int, int]]]  # (IRI, path, line range) of classes and functions

    def backends(self) -> BackendSet:
        return BackendSet(graph=CachingGraph(self.graph), resources=frozenset({self.resource}))

    def fragment(
        self, iri: str, depth: int, relevance: float, strategy: str | None = None, **meta: object
    ) -> ContextFragment:
        rendered = self.graph.render(iri, depth)
        assert rendered is not None, iri
        text, used = rendered
        path, lines = next((p, r) for n, p, r in self.nodes if n == iri)
        return ContextFragment(
            uko_node=iri,
            content=text,
            detail_depth=used,
            token_count=counter_for().count(text),
            relevance_score=relevance,
            provenance=FragmentProvenance(resource=self.resource, path=path, line_range=lines, strategy=strategy),
            metadata=dict(meta),
        )


def build_corpus(root: Path) -> Corpus:
    tree = root / "tree"
    tree.mkdir(parents=True)
    for name in FILES:
        shutil.copy(corpus_dir("requests-2.32.3") / "src" / "requests" / name, tree / name)
    ws = Workspace(root / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="local/pipeline-test")
    indexing.index(ws, [info])
    graph = StoreGraphBackend(ws, head_revision(ws, None))
    rows = graph.query_sparql(
        """SELECT ?n ?path ?range WHERE {
             ?n a ?t ; uko:sourcePath ?path ; uko:sourceRange ?range .
             VALUES ?t { uko-py:Class uko-py:Function uko-py:Method }
           } ORDER BY ?n""",
        resource_filter=set(),
    )
    nodes = []
    for row in rows:
        start, end = str(row["range"]).split("-")
        nodes.append((str(row["n"]), str(row["path"]), (int(start.split(":")[0]), int(end.split(":")[0]))))
    return Corpus(ws, info.ulid, graph, nodes)


class CachingGraph:
    """The real graph backend with renders memoized: the store does not change during a test
    module, and a render reads it (~60 ms), which property tests would repeat many times."""

    _renders: ClassVar[dict[tuple[str, int | str], tuple[str, int] | None]] = {}

    def __init__(self, graph: StoreGraphBackend) -> None:
        self.graph = graph

    def query_sparql(self, sparql: str, *, resource_filter: set[str]) -> list[dict[str, Any]]:
        return self.graph.query_sparql(sparql, resource_filter=resource_filter)

    def render(self, uko_node: str, depth: int | str) -> tuple[str, int] | None:
        key = (uko_node, depth)
        if key not in self._renders:
            self._renders[key] = self.graph.render(uko_node, depth)
        return self._renders[key]


class FixedFragmentsStrategy:
    """Returns the fragments it was given, within its budget (most relevant first)."""

    def __init__(
        self, name: str, fragments: list[ContextFragment], quality: float = 0.5, confidence: float = 0.8, **uses: bool
    ) -> None:
        self._name = name
        self._fragments = [
            f.model_copy(update={"provenance": f.provenance.model_copy(update={"strategy": name})}) for f in fragments
        ]
        self._caps = StrategyCapabilities(quality_score=quality, **uses)
        self.confidence = confidence
        self.budgets: list[int] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> StrategyCapabilities:
        return self._caps

    def can_handle(self, request: ContextRequest, backends: BackendSet) -> float:
        return self.confidence

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self.budgets.append(budget)
        out, used = [], 0
        for fragment in sorted(self._fragments, key=lambda f: -f.relevance_score):
            if used + fragment.token_count <= budget:
                out.append(fragment)
                used += fragment.token_count
        return out

    def explain(self) -> str:
        return f"{self._name}: {len(self._fragments)} fixed fragments"


class RaisingStrategy(FixedFragmentsStrategy):
    """A deliberately failing strategy: assemble always raises."""

    def __init__(self, name: str = "raising", **kwargs: object) -> None:
        super().__init__(name, [], **kwargs)  # type: ignore[arg-type]
        self.calls = 0

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self.calls += 1
        raise RuntimeError("deliberate failure")


class SlowStrategy(FixedFragmentsStrategy):
    """A deliberately slow strategy: sleeps ``delay`` seconds (interruptibly) before answering."""

    def __init__(self, name: str = "slow", delay: float = 2.0, **kwargs: object) -> None:
        super().__init__(name, [], **kwargs)  # type: ignore[arg-type]
        self.delay = delay
        self.release = threading.Event()

    def assemble(
        self, request: ContextRequest, backends: BackendSet, budget: int, plan_context: PlanContext
    ) -> list[ContextFragment]:
        self.release.wait(self.delay)
        return []


@dataclass
class FakeClock:
    """A settable clock for the circuit breaker's cool-down."""

    now: float = 0.0
    calls: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        self.calls.append(self.now)
        return self.now
