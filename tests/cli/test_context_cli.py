"""``agents context assemble | simulate | show`` on a real indexed store in tmp_path.

Strategies are limited to those without an embedding model (config.toml in the data dir),
so the module stays fast."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from cleveragents.cli.main import run
from cleveragents.graph.workspace import Workspace
from cleveragents.services import indexing, resources
from corpora.fetch import corpus_dir
from tests.cli.test_graph_cli import Cli, clean_env

FILES = ("sessions.py", "hooks.py", "structures.py")
CONFIG = '[context.strategies]\nenabled = ["breadth-depth-navigator", "simple-keyword"]\n'


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("context-cli")
    tree = root / "tree" / "requests"
    tree.mkdir(parents=True)
    for name in FILES:
        shutil.copy(corpus_dir("requests-2.32.3") / "src" / "requests" / name, tree / name)
    ws = Workspace(root / "data")
    ws.initialize()
    (root / "data" / "config.toml").write_text(CONFIG)
    info, _ = resources.add(ws, root / "tree", type_name="fs-directory", name="local/requests")
    indexing.index(ws, [info])
    return root / "data"


@pytest.fixture
def cli(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    clean_env(monkeypatch, tmp_path)
    return Cli(data_dir, capsys)


ASSEMBLE = ("context", "assemble", "--focus", "Session.send", "--query", "send a request", "--budget", "1200")


@pytest.fixture(scope="module")
def assembled(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``context assemble ... --format json`` once for the module (an assembly takes seconds)."""
    output = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(output):
        clean_env(patch, tmp_path_factory.mktemp("assemble-env"))
        assert run(["--data-dir", str(data_dir), "--format", "json", *ASSEMBLE]) == 0
    return json.loads(output.getvalue())["data"]


def test_assemble_json_then_show(cli: Cli, assembled: dict) -> None:
    ctx = assembled["context"]
    assert ctx["fragments"] and ctx["total_tokens"] <= ctx["budget"] == 1200
    assert "explanation" not in ctx
    assert assembled["recorded"] is True and assembled["scope"]["focus"]["Session.send"]
    assert assembled["commit"]["revision"] > assembled["scope"]["revision"]
    shown = cli.ok("context", "show", ctx["context_hash"], fmt="json").json()["data"]
    assert shown["verified"] is True and shown["problems"] == []
    assert shown["context"]["context_hash"] == ctx["context_hash"]
    assert [f["content"] for f in shown["context"]["fragments"]] == [f["content"] for f in ctx["fragments"]]
    (focus,) = shown["assembly"]["request"]["focus"]  # the request as the pipeline got it: focus as IRIs
    assert focus.endswith("/requests/sessions.py#Session.send")


def test_assemble_explain_plain(cli: Cli) -> None:
    out = cli.ok(*ASSEMBLE, "--explain", "--no-record", fmt="plain").out
    assert out.startswith("[OK] Assembled ")
    for heading in ("Budget", "Strategies", "Deduplicated, downgraded, dropped", "Fragments"):
        assert f"\n{heading}\n" in out
    assert "breadth-depth-navigator" in out and "Confidence" in out and "Allocated" in out
    assert "requests/sessions.py#Session.send" in out
    assert "Committed revision" not in out


def test_assemble_markdown_is_the_context_only(cli: Cli) -> None:
    out = cli.ok(*ASSEMBLE, "--no-record", "--format", "markdown").out
    assert out.startswith("# Context")
    assert "### requests/sessions.py · L" in out and "```python\n" in out
    assert "[OK]" not in out and "Fragments" not in out


def test_show_plain_and_markdown(cli: Cli, assembled: dict) -> None:
    context_hash = assembled["context"]["context_hash"]
    out = cli.ok("context", "show", context_hash[:15], fmt="plain").out
    assert f"Context assembly {context_hash}" in out and "Verified:" in out and "yes" in out
    markdown = cli.ok("context", "show", context_hash, "--format", "markdown").out
    assert markdown.startswith("# Context") and "### requests/sessions.py · L" in markdown


def test_simulate(cli: Cli) -> None:
    out = cli.ok("context", "simulate", "--focus", "sessions.py", "--budget", "2000", fmt="plain").out
    assert "\nStrategies\n" in out and "breadth-depth-navigator" in out and "requests/sessions.py" in out
    plan = cli.ok("context", "simulate", "--query", "hooks", fmt="json").json()["data"]["simulation"]
    assert plan["plan"]["budget"]["total"] == 8000  # config context.default_budget
    assert {row["strategy"] for row in plan["plan"]["allocations"]} <= {"breadth-depth-navigator", "simple-keyword"}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--query", "x", "--budget", "0"), 2, "--budget must be a positive number of tokens, got 0"),
        (("--query", "x", "--budget", "-5"), 2, "--budget must be a positive number of tokens, got -5"),
        (("--query", "x", "--depth", "SIGNATUR"), 2, "unknown detail level 'SIGNATUR' (did you mean SIGNATURES?)"),
        (("--query", "x", "--depth", "-1"), 2, "--depth must be a non-negative integer"),
        (("--query", "x", "--breadth", "99"), 2, "--breadth: input should be less than or equal to 10"),
        (("--query", "x", "--strategy", "arcee"), 2, "unknown context strategy 'arcee'"),
        (
            (
                "--focus",
                "Sesion.send",
            ),
            1,
            "close matches: requests.sessions.Session.send",
        ),
        (("--query", "x", "--project", "nope"), 1, "project 'nope' not found"),
        (("--query", "x", "--as-of", "not-a-revision"), 1, "unknown --as-of 'not-a-revision'"),
        ((), 2, "give a --query, a --focus, or both"),
        (("--query", "x", "--format", "turtle"), 2, "--format turtle is for RDF"),
        # A budget below the preamble and the smallest fragment: an empty, explained result.
        (("--query", "hooks", "--budget", "5"), 0, "fewer than the smallest fragment (10 tokens)"),
    ],
)
def test_bad_input(cli: Cli, args: tuple[str, ...], code: int, message: str) -> None:
    result = cli("context", "assemble", *args, fmt="plain")
    assert result.code == code, (result.out, result.err)
    assert message in (result.err if code else result.out + result.err)


def test_show_unknown_or_malformed_hash(cli: Cli) -> None:
    result = cli("context", "show", "sha256:" + "ab" * 32, fmt="plain")
    assert result.code == 1 and "no recorded context assembly has hash" in result.err
    result = cli("context", "show", "nothex!", fmt="plain")
    assert result.code == 1 and "is not a context hash" in result.err
