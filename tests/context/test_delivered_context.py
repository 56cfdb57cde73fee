"""What an assembly delivers, on requests 2.32.3's whole package indexed into a real store:
code by default (the most relevant in full, dependencies as signatures), the budget kept on
the markdown and on the JSON fragments with the configured tokenizer, the budget spent, no
code sent twice, no bare names, and readable markdown grouped by file.

The strategies are those that need no embedding model (config ``[context.strategies]``),
so the module runs in seconds; the packer and the rendering are the defaults."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.context.model import AssembledContext, ContextRequest
from cleveragents.context.pipeline.packing import first_docstring_lines, ladder
from cleveragents.context.tokens import counter_for
from cleveragents.graph.workspace import Workspace
from cleveragents.services import context

from .strategy_support import build_requests_store

ENABLED = ["breadth-depth-navigator", "simple-keyword", "temporal-archaeology"]
CONFIG = f"[context.strategies]\nenabled = {ENABLED!r}\n".replace("'", '"')
REDIRECTS = "how are redirects handled when a session sends a request"
QUERIES = [
    REDIRECTS,
    "where are cookies merged into the request",
    "proxy environment variables and no_proxy bypass",
    "Session.send",
    "basic and digest authentication headers",
    "chunked transfer encoding of a streamed body",
]
PY_FUNCTION = "https://cleveragents.ai/ontology/uko/py#Function"
PY_CLASS = "https://cleveragents.ai/ontology/uko/py#Class"


@dataclass
class Store:
    ws: Workspace
    tree: Path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    ws, info = build_requests_store(tmp_path_factory.mktemp("delivered"))
    (ws.data_dir / "config.toml").write_text(CONFIG)
    yield Store(ws, Path(info.location))


def assemble(store: Store, query: str, budget: int, **fields: object) -> AssembledContext:
    request = ContextRequest(query=query, max_tokens=budget, **fields)  # type: ignore[arg-type]
    return context.assemble(store.ws, request, record=False)


def source_of(store: Store, path: str, qualname: str) -> str:
    """A function's complete source, decorators excluded, from the indexed tree."""
    text = (store.tree / path).read_text()
    parts = qualname.split(".")
    nodes: list[ast.AST] = list(ast.parse(text).body)
    found: ast.AST | None = None
    for part in parts:
        found = next(n for n in nodes if getattr(n, "name", None) == part)
        nodes = list(getattr(found, "body", []))
    assert isinstance(found, ast.FunctionDef)
    lines = text.splitlines()
    return "\n".join(lines[found.lineno - 1 : found.end_lineno])


def json_text(ctx: AssembledContext) -> str:
    """What the JSON form carries as text: the preamble and every fragment's content."""
    return "\n\n".join([ctx.preamble or "", *(f.content for f in ctx.fragments)])


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.sampled_from(QUERIES),
    budget=st.sampled_from([120, 700, 2000, 4000, 8000, 16000, 32000]),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_the_budget_is_kept_on_what_is_delivered(store: Store, query: str, budget: int, encoding: str) -> None:
    config = store.ws.data_dir / "config.toml"
    config.write_text(CONFIG + f'\n[context]\nencoding = "{encoding}"\n')
    try:
        ctx = assemble(store, query, budget)
    finally:
        config.write_text(CONFIG)
    counter = counter_for(encoding)
    delivered = context.markdown(ctx)
    assert ctx.encoding == encoding
    assert counter.count(delivered) <= budget, "the markdown, headers, fences and preamble included"
    assert counter.count(json_text(ctx)) <= budget, "the JSON fragments and preamble"
    assert ctx.total_tokens == counter.count(ctx.render()) <= budget


@pytest.mark.parametrize("budget", [8000, 16000])
def test_the_default_assembly_carries_the_code_and_fills_the_budget(store: Store, budget: int) -> None:
    ctx = assemble(store, REDIRECTS, budget)
    text = context.markdown(ctx)
    # The function that answers the question, and the one that calls it, in full.
    for qualname in ("SessionRedirectMixin.resolve_redirects", "Session.send"):
        body = source_of(store, "requests/sessions.py", qualname)
        assert body in text, f"{qualname} is not in full"
    assert ctx.total_tokens >= 0.9 * budget, f"{ctx.total_tokens} of {budget}"
    # A single-revision index has no history to tell.
    assert "History of" not in text and "unchanged since added" not in text


def test_dependencies_get_signatures_and_nothing_is_a_bare_name(store: Store) -> None:
    ctx = assemble(store, "", 4000, focus=["requests.sessions.Session.send"])
    send = next(f for f in ctx.fragments if f.uko_node.endswith("#Session.send"))
    assert send.metadata["level"] == "FULL_SOURCE" and "full source" in send.metadata["depth_reason"]
    signatures = [f for f in ctx.fragments if f.metadata.get("level") in ("SIGNATURES_WITH_DOCS", "SIGNATURES")]
    assert signatures, "the dependencies of the focus as signatures"
    for fragment in ctx.fragments:
        if fragment.metadata.get("uko_type") in (PY_FUNCTION, "https://cleveragents.ai/ontology/uko/py#Method"):
            assert "(" in fragment.content.splitlines()[0], f"a bare name: {fragment.content!r}"
    # The first docstring line only, in a signature.
    for fragment in signatures:
        for docstring in re.findall(r'"""(.*?)"""', fragment.content, re.S):
            assert "\n" not in docstring


@pytest.mark.parametrize("query", QUERIES[:4])
def test_the_same_code_is_never_sent_twice(store: Store, query: str) -> None:
    ctx = assemble(store, query, 16000)
    full = [f for f in ctx.fragments if f.metadata.get("level") in ("FULL_SOURCE", "FULL_CONTENT")]
    for outer in full:
        for inner in ctx.fragments:
            if inner is outer or inner.provenance.path != outer.provenance.path:
                continue
            a, b = outer.provenance.line_range or (1, 10**9), inner.provenance.line_range or (0, 0)
            assert not (a[0] <= b[0] and b[1] <= a[1]), f"{inner.uko_node} is inside {outer.uko_node}, shown in full"
    assert len({f.uko_node for f in ctx.fragments}) == len(ctx.fragments)


def test_markdown_is_grouped_by_file_in_source_order_with_elisions(store: Store) -> None:
    ctx = assemble(store, REDIRECTS, 8000)
    text = context.markdown(ctx)
    headers = re.findall(r"^### (\S+)", text, re.M)
    assert len(headers) == len(set(headers)), "one block per file"
    assert re.search(r"^⋮ \d+ lines?$", text, re.M), "elided lines are marked"
    block = text.split("### requests/sessions.py · ", 1)[1].split("\n```\n", 1)[0]
    ranges = [int(a) for a in re.findall(r"L(\d+)", block.splitlines()[0])]
    assert ranges == sorted(ranges), "fragments in source order"
    redirect = block.index("def resolve_redirects(")
    assert block.index("def send(") > redirect  # SessionRedirectMixin comes before Session
    assert "    def resolve_redirects(" in block, "a method keeps its indentation under its class"


def test_explain_says_why_each_fragment_got_its_depth(store: Store) -> None:
    request = ContextRequest(query=REDIRECTS, max_tokens=4000)
    ctx = context.assemble(store.ws, request, record=False, explain=True)
    for fragment in ctx.fragments:
        assert fragment.provenance.strategy and fragment.provenance.path
        assert isinstance(fragment.metadata.get("score"), float)
        if fragment.metadata.get("level"):
            assert fragment.metadata.get("depth_reason")
    assert ctx.explanation["timings_ms"]["phase2"] < 2000


def test_first_docstring_lines_and_ladders() -> None:
    text = 'def f(a: int) -> str:\n    """Say it.\n\n    More words.\n    """\n    ...'
    assert first_docstring_lines(text) == 'def f(a: int) -> str:\n    """Say it."""\n    ...'
    steps = [(s.level, s.kind) for s in ladder(PY_FUNCTION, "FULL_SOURCE")]
    assert steps == [("FULL_SOURCE", "full"), ("SIGNATURES_WITH_DOCS", "signature"), ("SIGNATURES", "signature")]
    assert [s.level for s in ladder(PY_FUNCTION, "SIGNATURES")] == ["SIGNATURES"]  # never above the request
    assert ladder(PY_FUNCTION, 3) == []  # below any signature: the strategy's own text, as is
    assert ("MEMBER_SUMMARY", "outline") in [(s.level, s.kind) for s in ladder(PY_CLASS, "FULL_SOURCE")]
    section = ladder("https://cleveragents.ai/ontology/uko/doc#Section", "FULL_SOURCE")
    assert section[0].level == "FULL_CONTENT"  # a document's whole text, whatever its map calls it
