"""The Output Rendering Framework: every format, errors, empty results, cancellation,
format resolution and the CLI's exit codes. No mocks: real streams, real subprocesses."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import typer
import yaml

from cleveragents.cli.main import build_app, run
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.output import (
    ColumnDef,
    ElementClosedError,
    OutputSession,
    envelope,
    register_format,
    resolve_format,
)
from cleveragents.output.materialization import SequentialStrategy

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[")


def session(fmt: str) -> tuple[OutputSession, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return OutputSession("project show", fmt, stdout=out, stderr=err), out, err


def produce(s: OutputSession) -> None:
    """One producer, format-agnostic, used for every format below."""
    s.panel("Project Details", {"Name": "local/api", "Remote": False, "Resources": 2})
    with s.table(
        "Linked Resources (2)",
        [
            ColumnDef("name", "Resource"),
            ColumnDef("type", "Type"),
            ColumnDef("n", alignment="right"),
        ],
    ) as table:
        table.add_row({"name": "local/[bold]repo", "type": "git", "n": 3})
        table.add_row(["local/db", "database", 12])
    s.status("Project loaded", level="ok")


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    """The real CLI in a subprocess, stdout and stderr piped."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    full_env["PYTHONPATH"] = str(ROOT / "src")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "cleveragents.cli.main", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("CLEVERAGENTS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CLEVERAGENTS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- each format ----------------------------------------------------------------------


def test_plain_is_aligned_ascii():
    s, out, err = session("plain")
    produce(s)
    s.close()
    assert out.getvalue() == (
        "Project Details\n"
        "  Name:      local/api\n"
        "  Remote:    false\n"
        "  Resources: 2\n"
        "\n"
        "Linked Resources (2)\n"
        "Resource          Type       n\n"
        "----------------  --------  --\n"
        "local/[bold]repo  git        3\n"
        "local/db          database  12\n"
        "\n"
        "[OK] Project loaded\n"
    )
    assert err.getvalue() == ""
    assert out.getvalue().isascii()


@pytest.mark.parametrize("fmt", ["rich", "table"])
def test_rich_and_table_draw_boxes_without_ansi_when_not_a_tty(fmt: str):
    s, out, _ = session(fmt)
    produce(s)
    s.close()
    text = out.getvalue()
    assert "╭─ Project Details" in text
    assert "╭─ Linked Resources (2)" in text
    assert "local/[bold]repo" in text  # user data is never read as Rich markup
    assert "✓ OK Project loaded" in text
    assert not ANSI.search(text)


GOLDEN = {
    "command": "project show",
    "status": "ok",
    "exit_code": 0,
    "data": {
        "project_details": {"Name": "local/api", "Remote": False, "Resources": 2},
        "linked_resources": [
            {"name": "local/[bold]repo", "type": "git", "n": 3},
            {"name": "local/db", "type": "database", "n": 12},
        ],
    },
    "messages": [{"level": "ok", "text": "Project loaded"}],
}


def test_json_envelope_is_golden_and_stable():
    docs = []
    for _ in range(2):
        s, out, err = session("json")
        produce(s)
        s.close()
        doc = json.loads(out.getvalue())
        assert set(doc.pop("timing")) == {"duration_ms"}  # the only timing noise
        docs.append(doc)
        assert err.getvalue() == ""
    assert docs[0] == GOLDEN
    assert json.dumps(docs[0]) == json.dumps(docs[1])  # same keys, same order
    assert list(docs[0]) == ["command", "status", "exit_code", "data", "messages"]


def test_yaml_is_the_same_document():
    s, out, _ = session("yaml")
    produce(s)
    s.close()
    doc = yaml.safe_load(out.getvalue())
    doc.pop("timing")
    assert doc == GOLDEN
    assert out.getvalue().startswith("command: project show\nstatus: ok\n")


def test_csv_and_tsv_render_tables_only():
    s, out, _ = session("csv")
    produce(s)
    s.table("Notes", ["text"], rows=[['has "quotes", commas']])
    s.close()
    assert out.getvalue() == (
        'name,type,n\nlocal/[bold]repo,git,3\nlocal/db,database,12\n\ntext\n"has ""quotes"", commas"\n'
    )
    assert list(csv.reader(io.StringIO(out.getvalue().split("\n\n")[1]))) == [
        ["text"],
        ['has "quotes", commas'],
    ]

    s, out, _ = session("tsv")
    s.table("T", ["a", "b"], rows=[["x\ty", "line1\nline2"]])
    s.close()
    assert out.getvalue() == "a\tb\nx\\ty\tline1\\nline2\n"


def test_hidden_columns_only_in_structured_formats():
    cols = [ColumnDef("key", "Key"), ColumnDef("secret_detail", hidden=True)]
    s, out, _ = session("plain")
    s.table("Config", cols, rows=[["a", "b"]])
    s.close()
    assert "secret_detail" not in out.getvalue()
    s, out, _ = session("json")
    s.table("Config", cols, rows=[["a", "b"]])
    s.close()
    assert json.loads(out.getvalue())["data"]["config"] == [{"key": "a", "secret_detail": "b"}]


def test_tree_text_code_and_data_elements():
    s, out, _ = session("plain")
    s.tree("deps", {"a": {"b": [1, 2]}, "c": 3})
    s.text("free text")
    s.code("x = 1\n", "python")
    s.data("summary", {"total": 2})
    s.data("internal", {"x": 1}, hidden=True)
    s.close()
    assert out.getvalue() == (
        "deps\n+-- a\n|   +-- b\n|       +-- 1\n|       +-- 2\n+-- c: 3\n\nfree text\n\nx = 1\n\nsummary\n  total: 2\n"
    )
    s, out, _ = session("json")
    s.tree("deps", {"a": [1]})
    s.text("free text")
    s.code("x = 1\n", "python")
    s.data("summary", {"total": 2})
    s.close()
    data = json.loads(out.getvalue())["data"]
    assert data == {
        "deps": {
            "label": "deps",
            "children": [{"label": "a", "children": [{"label": "1", "children": []}]}],
        },
        "text": "free text",
        "code": "x = 1\n",
        "summary": {"total": 2},
    }


def test_repeated_keys_get_suffixes():
    s, out, _ = session("json")
    s.table("Rows", ["a"], rows=[[1]])
    s.table("Rows", ["a"], rows=[[2]])
    s.close()
    assert list(json.loads(out.getvalue())["data"]) == ["rows", "rows_2"]


def test_max_rows_hint_truncates_human_output_but_not_json():
    rows = [[i] for i in range(5)]
    s, out, _ = session("plain")
    s.table("Numbers", ["n"], rows=rows, max_rows_hint=2)
    s.close()
    assert out.getvalue().endswith("0\n1\n(... and 3 more rows)\n")
    s, out, _ = session("json")
    s.table("Numbers", ["n"], rows=rows, max_rows_hint=2)
    s.close()
    assert len(json.loads(out.getvalue())["data"]["numbers"]) == 5


# --- ordering and lifecycle ------------------------------------------------------------


def test_elements_print_in_declaration_order_whatever_the_close_order():
    s, out, _ = session("plain")
    first = s.table("First", ["a"])
    second = s.table("Second", ["a"])
    second.add_row([2])
    second.close()
    assert out.getvalue() == ""  # held back until First is done
    first.add_row([1])
    first.close()
    s.close()
    assert out.getvalue().index("First") < out.getvalue().index("Second")


def test_concurrent_producers_write_to_their_own_handles():
    s, out, _ = session("json")
    tables = [s.table(f"T{i}", ["n"]) for i in range(4)]

    def fill(handle) -> None:
        for n in range(200):
            handle.add_row([n])
        handle.close()

    threads = [threading.Thread(target=fill, args=(t,)) for t in tables]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s.close()
    data = json.loads(out.getvalue())["data"]
    assert [len(data[f"t{i}"]) for i in range(4)] == [200] * 4


def test_closed_handle_rejects_writes_and_open_handles_are_force_closed():
    s, out, _ = session("plain")
    table = s.table("Items", ["a"])
    table.add_row([1])
    snapshot = s.snapshot()
    result = s.close()  # the table was never closed: the session closes it
    assert [e.kind for e in snapshot.elements] == ["table"]
    assert result.elements[0].rows == [{"a": 1}]
    assert "Items" in out.getvalue()
    with pytest.raises(ElementClosedError):
        table.add_row([2])
    with pytest.raises(RuntimeError):
        s.table("Late", ["a"])


def test_progress_is_silent_unless_rich_on_a_tty():
    for fmt in ("plain", "json", "rich"):  # StringIO is not a TTY
        s, out, err = session(fmt)
        with s.progress("Indexing", total=3) as bar:
            for _ in range(3):
                bar.increment()
        s.close()
        assert "Indexing" not in out.getvalue() + err.getvalue()


# --- empty results ---------------------------------------------------------------------


def test_empty_results_in_every_format():
    outputs = {}
    for fmt in ("plain", "table", "json", "yaml", "csv"):
        s, out, _ = session(fmt)
        s.table("Projects", ["name"], rows=[])
        s.close()
        outputs[fmt] = out.getvalue()
    assert outputs["plain"] == "No projects found.\n"
    assert "No projects found." in outputs["table"]
    assert json.loads(outputs["json"])["data"] == {"projects": []}
    assert yaml.safe_load(outputs["yaml"])["data"] == {"projects": []}
    assert outputs["csv"] == "name\n"


# --- errors and cancellation -----------------------------------------------------------


def not_found() -> NotFoundError:
    return NotFoundError(
        "Project 'local/x' not found",
        detail="No project with that name exists.",
        suggestions=["agents project list"],
    )


@pytest.mark.parametrize("fmt", ["plain", "table", "rich", "csv"])
def test_error_in_human_formats_goes_to_stderr_after_partial_output(fmt: str):
    s, out, err = session(fmt)
    with pytest.raises(NotFoundError), s:
        s.table("Projects", ["name"], rows=[["local/a"]])
        raise not_found()
    assert "local/a" in out.getvalue()  # partial data is kept
    assert "Error" not in out.getvalue()
    assert err.getvalue().splitlines() == [
        "Error [404] NOT_FOUND: Project 'local/x' not found",
        "  No project with that name exists.",
        "Suggestions:",
        "  - agents project list",
    ]
    assert s.exit_code == 1


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_error_in_json_and_yaml_is_one_document_on_stdout(fmt: str):
    s, out, err = session(fmt)
    with pytest.raises(NotFoundError), s:
        s.table("Projects", ["name"], rows=[["local/a"]])
        raise not_found()
    doc = json.loads(out.getvalue()) if fmt == "json" else yaml.safe_load(out.getvalue())
    assert err.getvalue() == ""
    assert doc["status"] == "error"
    assert doc["exit_code"] == 1
    assert doc["data"] == {"projects": [{"name": "local/a"}]}
    assert doc["error"] == {
        "code": "NOT_FOUND",
        "status": 404,
        "message": "Project 'local/x' not found",
        "detail": "No project with that name exists.",
        "suggestions": ["agents project list"],
    }


def test_unexpected_exception_leaks_nothing():
    s, out, _ = session("json")
    with pytest.raises(ZeroDivisionError), s:
        raise ZeroDivisionError("secret internals")
    doc = json.loads(out.getvalue())
    assert doc["error"] == {
        "code": "INTERNAL",
        "status": 500,
        "message": "An unexpected error occurred",
    }
    assert "secret" not in out.getvalue()


def test_keyboard_interrupt_cancels_with_130():
    s, out, err = session("json")
    with pytest.raises(KeyboardInterrupt), s:
        s.table("Done", ["a"], rows=[[1]])
        s.table("Pending", ["a"]).add_row([2])
        raise KeyboardInterrupt
    doc = json.loads(out.getvalue())
    assert (doc["status"], doc["exit_code"]) == ("cancelled", 130)
    assert doc["data"] == {"done": [{"a": 1}], "pending": [{"a": 2}]}
    assert doc["messages"] == [{"level": "warn", "text": "Operation cancelled"}]

    s, out, err = session("plain")
    with pytest.raises(KeyboardInterrupt), s:
        s.table("Pending", ["a"]).add_row([2])
        raise KeyboardInterrupt
    assert "Pending" in out.getvalue()  # buffered elements are flushed first
    assert err.getvalue() == "[WARN] Operation cancelled\n"


def test_snapshot_and_envelope_are_available_programmatically():
    s, _, _ = session("plain")
    produce(s)
    final = s.close()
    doc = envelope(final)
    doc.pop("timing")
    assert doc == GOLDEN


def test_plugin_format_registration():
    class Upper:
        def __init__(self, out):
            self.out = out

        def render(self, element):
            if element.kind == "status":
                self.out.write(element.message.upper() + "\n")

        def begin_live(self, element): ...
        def update_live(self, element): ...
        def end_live(self, element): ...
        def render_error(self, error): ...
        def render_cancelled(self): ...
        def finish(self): ...

    register_format("shout", lambda out, err: SequentialStrategy(Upper(out)))
    s, out, _ = session("shout")
    s.status("hello", level="ok")
    s.close()
    assert out.getvalue() == "HELLO\n"


# --- format resolution -----------------------------------------------------------------


def test_resolve_format_detects_the_terminal():
    piped = io.StringIO()
    assert resolve_format(None, piped) == "plain"
    assert resolve_format("auto", piped) == "plain"
    assert resolve_format("JSON", piped) == "json"
    with pytest.raises(ValueError, match="unknown format"):
        resolve_format("xml", piped)
    master, slave = pty.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            assert resolve_format(None, tty) == "rich"
    finally:
        os.close(master)
        os.close(slave)


def test_cli_piped_output_is_plain(isolated: Path):
    result = run_cli("config", "list", env={"CLEVERAGENTS_DATA_DIR": str(isolated)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Config\nKey ")
    assert "╭" not in result.stdout and not ANSI.search(result.stdout)


def test_cli_on_a_tty_is_rich(isolated: Path):
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEVERAGENTS_")}
    env |= {"PYTHONPATH": str(ROOT / "src"), "CLEVERAGENTS_DATA_DIR": str(isolated)}
    env |= {"COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cleveragents.cli.main", "config", "list"],
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = b"".join(chunks).decode()
    assert "╭─ Config" in text


def test_format_resolution_order_flag_env_config_terminal(isolated: Path):
    data = isolated / "data"
    data.mkdir()
    (data / "config.toml").write_text('format = "yaml"\n')
    env = {"CLEVERAGENTS_DATA_DIR": str(data)}
    # config beats terminal detection
    assert run_cli("config", "get", "format", env=env).stdout.startswith("command: config get")
    # env beats config
    env_json = env | {"CLEVERAGENTS_FORMAT": "json"}
    doc = json.loads(run_cli("config", "get", "format", env=env_json).stdout)
    assert doc["data"]["config"]["source"] == "env"
    # flag beats env
    result = run_cli("--format", "csv", "config", "list", env=env_json)
    assert result.stdout.startswith("key,value,source,origin,type,env_var,description\n")
    # without any setting, piped output is plain
    (data / "config.toml").unlink()
    assert run_cli("config", "get", "format", env=env).stdout == "format auto (source: default)\n"


def test_format_after_the_command_is_the_global_format(isolated: Path, capsys: pytest.CaptureFixture[str]):
    """`agents config list --format json` as the spec writes it, for every command without
    its own --format; the command's own --format, where it has one, is left to it."""
    assert run(["config", "list", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "config list" and doc["status"] == "ok"
    assert run(["config", "get", "--format=yaml", "format"]) == 0
    assert capsys.readouterr().out.startswith("command: config get")
    assert run(["config", "list", "--format", "xml"]) == 2
    assert "Invalid value for 'format'" in capsys.readouterr().err
    assert run(["config", "set", "format", "--", "--format"]) == 1  # after --, a value
    assert "--format" in capsys.readouterr().err


# --- exit codes through run() ----------------------------------------------------------


def test_exit_code_0(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["config", "list"]) == 0
    assert "query.timeout" in capsys.readouterr().out


def test_exit_code_1_for_errors(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["config", "get", "query.timout"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error [422] VALIDATION_FAILED: Unknown configuration key")
    assert "query.timeout" in err


def test_exit_code_1_error_as_json(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["--format", "json", "config", "get", "nope.key"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["status"], doc["exit_code"], doc["error"]["code"]) == (
        "error",
        1,
        "VALIDATION_FAILED",
    )


def test_exit_code_2_for_usage_errors(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["--no-such-option"]) == 2
    assert "No such option" in capsys.readouterr().err
    assert run(["config", "set", "query.timeout"]) == 2  # missing VALUE
    assert "Missing argument" in capsys.readouterr().err
    assert run(["--format", "xml", "config", "list"]) == 2
    assert "Invalid value for 'format'" in capsys.readouterr().err


def test_version(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.startswith("CleverAgents version ")


def app_with(fn) -> typer.Typer:
    """A fresh app with one extra command (production apps never carry test commands)."""
    cli = build_app()
    cli.command("explode")(fn)
    return cli


def test_exit_code_130_for_keyboard_interrupt(isolated: Path, capsys):
    def explode() -> None:
        raise KeyboardInterrupt

    assert run(["explode"], cli=app_with(explode)) == 130
    assert capsys.readouterr().err == "[WARN] Operation cancelled\n"


def test_exit_code_130_inside_a_session_renders_once(isolated: Path, capsys):
    from cleveragents.cli.invocation import get_context

    def explode(ctx: typer.Context) -> None:
        with get_context(ctx).session("explode") as out:
            out.table("Partial", ["a"], rows=[[1]])
            raise KeyboardInterrupt

    assert run(["-f", "json", "explode"], cli=app_with(explode)) == 130
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # exactly one document
    assert (doc["command"], doc["status"], doc["exit_code"]) == ("explode", "cancelled", 130)
    assert doc["data"] == {"partial": [{"a": 1}]}
    assert captured.err == ""


def test_error_class_decides_the_exit_code(isolated: Path, capsys):
    def explode() -> None:
        raise ValidationError("name is required")

    assert run(["explode"], cli=app_with(explode)) == 1
    assert capsys.readouterr().err == "Error [422] VALIDATION_FAILED: name is required\n"


def test_deliberate_exit_code_inside_a_session(isolated: Path, capsys):
    from cleveragents.cli.invocation import get_context

    def explode(ctx: typer.Context) -> None:
        with get_context(ctx).session("explode") as out:
            out.status("2 checks failed", level="error")
            out.exit_code = 3

    assert run(["-f", "json", "explode"], cli=app_with(explode)) == 3
    doc = json.loads(capsys.readouterr().out)
    assert (doc["status"], doc["exit_code"]) == ("error", 3)


def test_unexpected_exception_is_internal_with_traceback_only_in_debug(
    isolated: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    def explode() -> None:
        raise RuntimeError("secret internals")

    assert run(["explode"], cli=app_with(explode)) == 1
    err = capsys.readouterr().err
    assert err == "Error [500] INTERNAL: An unexpected error occurred\n"

    monkeypatch.setenv("CLEVERAGENTS_DEBUG", "1")
    assert run(["explode"], cli=app_with(explode)) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error [500] INTERNAL: An unexpected error occurred\n")
    assert "Traceback" in err and "RuntimeError: secret internals" in err


def test_an_open_progress_does_not_hold_back_later_elements():
    s, out, _ = session("plain")
    bar = s.progress("Working", total=2)
    s.status("first result", level="info")
    assert out.getvalue() == "[INFO] first result\n"
    bar.close()
    s.close()
