"""Recorded context assemblies, scope and focus resolution, and request validation of
``services.context``, on a real store indexed from requests' sources (tmp_path).

The assemblies here are built from real renderings of indexed nodes (not by the pipeline),
so that recording and re-rendering are tested on their own."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cleveragents.context.model import AssembledContext, ContextFragment, ContextRequest, FragmentProvenance
from cleveragents.context.tokens import counter_for
from cleveragents.errors import NotFoundError, ShapeViolationError, UsageError, ValidationError
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing import renderings
from cleveragents.iris import directory_iri, file_iri
from cleveragents.services import context, context_records, indexing, projects, resources
from corpora.fetch import corpus_dir

FILES = ("sessions.py", "hooks.py", "structures.py", "status_codes.py", "__version__.py")
SESSIONS_EDIT = "\n\ndef added_later():\n    return 42\n"


@dataclass
class Store:
    ws: Workspace
    tree: Path
    ulid: str
    other_ulid: str
    context: AssembledContext
    request: ContextRequest
    revision: int  # the revision the assembly read
    head_after_record: int


def fragment(ws: Workspace, ulid: str, path: str, key: str, depth: str, score: float) -> ContextFragment:
    iri = file_iri(ulid, path, key)
    rendering = renderings.render(ws, iri, depth, indexing.analyzer_set(""))
    start, end = (rendering.range or "1:0-1:0").split("-")
    return ContextFragment(
        uko_node=iri,
        content=rendering.text,
        detail_depth=rendering.depth,
        token_count=counter_for().count(rendering.text),
        relevance_score=score,
        provenance=FragmentProvenance(
            resource=ulid,
            path=path,
            line_range=(int(start.split(":")[0]), int(end.split(":")[0])),
            revision=rendering.revision,
            uko_node=iri,
            strategy="breadth-depth-navigator",
        ),
    )


def assembled(fragments: list[ContextFragment], preamble: str, budget: int = 4000) -> AssembledContext:
    draft = AssembledContext(
        fragments=fragments,
        total_tokens=0,
        budget=budget,
        budget_used=0.0,
        strategies_used=sorted({f.provenance.strategy or "" for f in fragments}),
        context_hash="",
        preamble=preamble,
    )
    total = counter_for().count(draft.render())
    return draft.model_copy(
        update={
            "total_tokens": total,
            "budget_used": total / budget,
            "context_hash": context_records.digest(draft.render()),
        }
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("context-records")
    tree = root / "tree" / "requests"
    tree.mkdir(parents=True)
    for name in FILES:
        shutil.copy(corpus_dir("requests-2.32.3") / "src" / "requests" / name, tree / name)
    other = root / "other"
    other.mkdir()
    (other / "helpers.py").write_text("def merge_setting(a, b):\n    return a or b\n")
    ws = Workspace(root / "data")
    ws.initialize()
    info, _ = resources.add(ws, root / "tree", type_name="fs-directory", name="local/requests")
    other_info, _ = resources.add(ws, other, type_name="fs-directory", name="local/other")
    indexing.index(ws, [info, other_info])
    projects.create(ws, "local/web")
    projects.link(ws, "local/web", "local/requests")
    projects.create(ws, "local/empty")
    with ws.reader() as reader:
        revision = reader.head
    fragments = [
        fragment(ws, info.ulid, "requests/sessions.py", "Session.request", "FULL_SOURCE", 0.9),
        fragment(ws, info.ulid, "requests/sessions.py", "Session.send", "SIGNATURES", 0.7),
        fragment(ws, info.ulid, "requests/hooks.py", "dispatch_hook", "FULL_SOURCE", 0.5),
    ]
    # A truncated fragment: rendering its node does not reproduce it, so its text is kept.
    truncated = fragments[2].content[:40]
    fragments.append(
        fragments[2].model_copy(update={"content": truncated, "token_count": counter_for().count(truncated)})
    )
    request = ContextRequest(query="how does a session send a request", focus=["Session.request"], max_tokens=4000)
    ctx = assembled(fragments, "# Context\nresource local/requests: 2 files\n")
    result = context_records.record(
        ws, ctx, request, revision=revision, resources=[info.ulid], renderer=renderer(ws), agent="tester"
    )
    assert result is not None and not result.empty
    # The code changes after the assembly: `show` must still give what the actor saw.
    (tree / "sessions.py").write_text(
        (tree / "sessions.py").read_text().replace("def request(", "def request_v2(") + SESSIONS_EDIT
    )
    indexing.index(ws, [info])
    with ws.reader() as reader:
        head = reader.head
    yield Store(ws, tree, info.ulid, other_info.ulid, ctx, request, revision, head)


def renderer(ws: Workspace) -> context_records.Renderer:
    def render(node: str, depth: int) -> str | None:
        return renderings.render(ws, node, str(depth), indexing.analyzer_set("")).text

    return render


# --- recording and showing -------------------------------------------------------------------


def test_show_rerenders_the_recorded_assembly_at_its_revision(store: Store) -> None:
    shown = context.show(store.ws, store.context.context_hash)
    assert shown.verified, shown.problems
    assert shown.problems == []
    assert [f.content for f in shown.context.fragments] == [f.content for f in store.context.fragments]
    assert "def request(" in shown.context.fragments[0].content  # as it was, not request_v2
    assert shown.context.render() == store.context.render()
    assert shown.recorded.revision == store.revision
    assert shown.recorded.request == store.request
    assert shown.recorded.total_tokens == store.context.total_tokens <= shown.recorded.budget == 4000
    assert shown.recorded.resources == [store.ulid]


def test_only_unreproducible_fragments_keep_their_text(store: Store) -> None:
    shown = context.show(store.ws, store.context.context_hash)
    assert shown.recorded.stored_text == [False, False, False, True]


def test_same_hash_twice_writes_nothing(store: Store) -> None:
    again = context_records.record(store.ws, store.context, store.request, revision=store.revision)
    assert again is None
    with store.ws.reader() as reader:
        assert reader.head == store.head_after_record


def test_show_accepts_bare_hex_and_unique_prefix(store: Store) -> None:
    hex_digest = store.context.context_hash.removeprefix("sha256:")
    assert context.show(store.ws, hex_digest).recorded.context_hash == store.context.context_hash
    assert context.show(store.ws, hex_digest[:10].upper()).verified


def test_unknown_or_malformed_hash_is_a_clear_error(store: Store) -> None:
    with pytest.raises(NotFoundError, match="no recorded context assembly has hash"):
        context.show(store.ws, "sha256:" + "0" * 64)
    with pytest.raises(ValidationError, match="is not a context hash"):
        context.show(store.ws, "xyz")
    with pytest.raises(ValidationError, match="is not a context hash"):
        context.show(store.ws, "abc")  # too short to be a prefix


def test_recorded_assembly_is_queryable_graph_data(store: Store) -> None:
    with store.ws.reader() as reader:
        rows = list(
            reader.query(
                "SELECT ?budget ?total ?enc (COUNT(?f) AS ?n) WHERE { ?a a ca:ContextAssembly ;"
                " ca:tokenBudget ?budget ; ca:totalTokens ?total ; ca:tokenEncoding ?enc ; ca:hasFragment ?f }"
                " GROUP BY ?budget ?total ?enc"
            )
        )
    assert [(int(r["budget"].value), int(r["total"].value), r["enc"].value, int(r["n"].value)) for r in rows] == [
        (4000, store.context.total_tokens, "o200k_base", 4)
    ]


def test_markdown_names_path_and_lines(store: Store) -> None:
    text = context.markdown(store.context)
    assert text.startswith("# Context")
    # One block per file: its path and the line ranges shown, then its fragments in one fence.
    fragments = store.context.fragments
    files = list(dict.fromkeys(f.provenance.path for f in fragments))
    assert text.count("```python") == len(files) < len(fragments)
    for path in files:
        spans = sorted(f.provenance.line_range for f in fragments if f.provenance.path == path)
        header = f"### {path} · " + ", ".join(f"L{a}-{b}" for a, b in spans)
        assert f"{header}\n```python\n" in text
        assert all(f.content.rstrip() in text for f in fragments)


# --- scope and focus -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("requests/sessions.py", ["requests/sessions.py"]),  # exact path: the file node
        ("sessions.py", ["requests/sessions.py"]),  # path suffix
        ("requests.sessions.Session.send", ["requests/sessions.py#Session.send"]),  # qualified name
        ("Session.send", ["requests/sessions.py#Session.send"]),  # qualified-name suffix
        ("dispatch_hook", ["requests/hooks.py#dispatch_hook"]),
    ],
)
def test_focus_resolves_paths_and_symbols(store: Store, item: str, expected: list[str]) -> None:
    scope = context.resolve_scope(store.ws, ContextRequest(focus=[item]), project="local/web")
    assert scope.focus == [file_iri(store.ulid, *e.split("#")) for e in expected]


def test_focus_directory_is_its_directory_node(store: Store) -> None:
    scope = context.resolve_scope(store.ws, ContextRequest(focus=["requests/"]))
    assert scope.focus == [directory_iri(store.ulid, "requests")]


def test_focus_iri_is_kept_when_it_exists(store: Store) -> None:
    iri = file_iri(store.ulid, "requests/hooks.py", "dispatch_hook")
    assert context.resolve_scope(store.ws, ContextRequest(focus=[f"<{iri}>"])).focus == [iri]


def test_focus_matching_nothing_lists_close_matches(store: Store) -> None:
    with pytest.raises(NotFoundError, match=r"focus 'Sesion\.send' matches no indexed") as caught:
        context.resolve_scope(store.ws, ContextRequest(focus=["Sesion.send"]))
    assert "requests.sessions.Session.send" in caught.value.data["close_matches"]


def test_focus_outside_the_project_is_not_found(store: Store) -> None:
    # merge_setting exists in both resources; only the project's one is in scope.
    scope = context.resolve_scope(store.ws, ContextRequest(focus=["merge_setting"]), project="local/web")
    assert all(store.ulid in iri for iri in scope.focus) and scope.focus
    with pytest.raises(NotFoundError, match="in project 'local/web'"):
        context.resolve_scope(store.ws, ContextRequest(focus=["helpers.py"]), project="local/web")


def test_project_scope(store: Store) -> None:
    scope = context.resolve_scope(store.ws, ContextRequest(), project="local/web")
    assert scope.resources == [store.ulid] and scope.project and scope.project.endswith(scope.project.rsplit("/")[-1])
    assert context.resolve_scope(store.ws, ContextRequest()).resources == []  # everything
    with pytest.raises(NotFoundError, match="project 'nope' not found"):
        context.resolve_scope(store.ws, ContextRequest(), project="nope")
    with pytest.raises(UsageError, match="has no linked resources"):
        context.resolve_scope(store.ws, ContextRequest(), project="local/empty")
    with pytest.raises(UsageError, match="not linked to project"):
        context.resolve_scope(store.ws, ContextRequest(resources=[store.other_ulid]), project="local/web")


def test_as_of_resolves_a_past_revision_and_rejects_unknown_ones(store: Store) -> None:
    past = context.resolve_scope(store.ws, ContextRequest(focus=["Session.request"]), as_of=store.revision)
    assert past.revision == store.revision and past.focus
    with pytest.raises(NotFoundError, match=r"focus 'Session\.request' matches no"):
        context.resolve_scope(store.ws, ContextRequest(focus=["Session.request"]))  # renamed since
    with pytest.raises(NotFoundError, match="unknown --as-of 'yesterday-ish'"):
        context.resolve_scope(store.ws, ContextRequest(), as_of="yesterday-ish")


def test_prepare_rejects_bad_budget_and_depth(store: Store) -> None:
    with pytest.raises(UsageError, match="positive number of tokens, got 0"):
        context.prepare(store.ws, ContextRequest(max_tokens=0))
    with pytest.raises(UsageError, match="unknown detail level 'SIGNATURE'"):
        context.prepare(store.ws, ContextRequest(depth="SIGNATURE"))
    request, scope, _ = context.prepare(store.ws, ContextRequest(depth="7", focus=["hooks.py"]), as_of=store.revision)
    assert request.depth == 7 and request.max_tokens == 8000 and request.temporal == "as_of"
    assert request.as_of == str(store.revision) and request.focus == scope.focus


def test_shape_rejects_an_assembly_over_its_budget(store: Store) -> None:
    over = store.context.model_copy(
        update={"context_hash": "sha256:" + "e" * 64, "budget": 10, "total_tokens": 11, "fragments": []}
    )
    with pytest.raises(ShapeViolationError):
        context_records.record(store.ws, over, store.request, revision=store.revision)
