"""The LSP runtime against a real server (basedpyright): sharing, crash recovery, hangs,
garbage, and no process left behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from cleveragents.lsp.builtins import BASEDPYRIGHT
from cleveragents.lsp.client import LSPTimeout, ServerGone, ServerLaunch
from cleveragents.lsp.runtime import LSPRuntime, ServerHandle
from cleveragents.services.lsp_enrichment import launch_of

FAKES = Path(__file__).parent / "fake_servers"
CODE = "def helper(x: int) -> int:\n    return x + 1\n\n\nvalue = helper(2)\n"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:  # no such process, or reaped between open and read
        return False


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "mod.py").write_text(CODE)
    return root


@pytest.fixture
def runtime() -> Iterator[LSPRuntime]:
    rt = LSPRuntime()
    yield rt
    rt.close()


def launch(**changes: object) -> ServerLaunch:
    base = launch_of(BASEDPYRIGHT, request_timeout=20.0)
    return ServerLaunch(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def definition_of_call(handle: ServerHandle, path: Path, timeout: float | None = None) -> object:
    params = lsp.DefinitionParams(lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(4, 9))
    return handle.request(lsp.TEXT_DOCUMENT_DEFINITION, params, timeout)


def test_definition_and_one_shared_instance_per_root(runtime: LSPRuntime, project: Path) -> None:
    first = runtime.acquire(launch(), project)
    second = runtime.acquire(launch(), project)
    assert first is second and first.refs == 2
    path = project / "mod.py"
    first.open(path, "python", CODE)
    answer = definition_of_call(first, path)
    locations = answer if isinstance(answer, list) else [answer]
    assert locations[0].range.start.line == 0  # `helper` is defined on the first line
    pid = first.pid
    assert pid is not None
    first.release()
    assert alive(pid)  # still referenced
    second.release()
    assert gone(pid)  # the last release stops it
    assert runtime.running() == []


def test_pipelined_requests_keep_order(runtime: LSPRuntime, project: Path) -> None:
    with runtime.acquire(launch(), project) as handle:
        path = project / "mod.py"
        handle.open(path, "python", CODE)
        positions = [lsp.Position(4, 9), lsp.Position(0, 4), lsp.Position(4, 0)] * 20
        params = [lsp.HoverParams(lsp.TextDocumentIdentifier(path.as_uri()), p) for p in positions]
        answers = handle.requests(lsp.TEXT_DOCUMENT_HOVER, params)
        texts = [a.contents.value if a is not None else "" for a in answers]
        assert all("helper" in t for t in texts[0::3])
        assert all("value" in t for t in texts[2::3])


def test_a_crashed_server_restarts_with_its_documents(runtime: LSPRuntime, project: Path) -> None:
    with runtime.acquire(launch(), project) as handle:
        path = project / "mod.py"
        # Unsaved text: only the re-opened document can answer for it after the restart.
        edited = "\n\n" + CODE
        handle.open(path, "python", edited)
        old_pid = handle.pid
        assert old_pid is not None
        os.kill(old_pid, signal.SIGKILL)  # the launcher dies; its Node.js child is orphaned
        assert gone(old_pid)
        deadline = time.monotonic() + 10
        while handle.connection.alive and time.monotonic() < deadline:  # the runtime notices
            time.sleep(0.05)
        params = lsp.DefinitionParams(lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(6, 9))
        answer = handle.request(lsp.TEXT_DOCUMENT_DEFINITION, params)
        locations = answer if isinstance(answer, list) else [answer]
        assert locations[0].range.start.line == 2
        assert handle.restarts == 1 and handle.pid != old_pid
        assert not _group_alive(old_pid), "the crashed server's children were left running"


def test_a_hung_server_times_out_then_is_replaced(runtime: LSPRuntime, project: Path) -> None:
    with runtime.acquire(launch(request_timeout=1.0), project) as handle:
        path = project / "mod.py"
        handle.open(path, "python", CODE)
        definition_of_call(handle, path, timeout=30.0)  # the first answer waits for the analysis
        stuck = handle.pid
        assert stuck is not None
        os.killpg(stuck, signal.SIGSTOP)  # a real hang: the server is there but never answers
        for _ in range(3):
            with pytest.raises(LSPTimeout):
                definition_of_call(handle, path)
        assert gone(stuck) and not _group_alive(stuck), "the hung server was not killed"
        assert definition_of_call(handle, path, timeout=30.0) is not None
        assert handle.restarts == 1


@pytest.mark.parametrize(
    ("mode", "start_timeout", "count"),
    [
        # answers one request every 0.2 s: the 20th comes 4 s after it was asked
        ("slow:0.2", 10.0, 20),
        # sleeps 3 s before its first answer: within the start-up allowance
        ("warm-up:3", 10.0, 10),
        # computes 3 s before its first answer: past the start-up allowance too, but working
        ("busy:3", 1.0, 5),
    ],
)
def test_a_slow_server_is_not_a_hung_one(
    runtime: LSPRuntime, project: Path, mode: str, start_timeout: float, count: int
) -> None:
    """Pipelined requests with a 1 s timeout to servers that take longer, without being
    stuck: every request is answered and nothing restarts (a stopped server still times
    out, see test_a_hung_server_times_out_then_is_replaced)."""
    command = (sys.executable, str(FAKES / "flaky_server.py"), mode)
    server = ServerLaunch(f"test/{mode}", command, request_timeout=1.0, start_timeout=start_timeout)
    with runtime.acquire(server, project) as handle:
        path = project / "mod.py"
        handle.open(path, "python", CODE)
        params = lsp.DefinitionParams(lsp.TextDocumentIdentifier(path.as_uri()), lsp.Position(4, 9))
        started = time.monotonic()
        answers = handle.requests(lsp.TEXT_DOCUMENT_DEFINITION, [params] * count)
        assert time.monotonic() - started > 2.5  # the wait really outlasted the timeout
        assert [a for a in answers if isinstance(a, Exception)] == []
        assert handle.restarts == 0 and handle.failure is None


def test_a_server_that_answers_garbage_is_reported_and_reaped(runtime: LSPRuntime, project: Path) -> None:
    garbage = ServerLaunch("test/garbage", (sys.executable, str(FAKES / "garbage_server.py")), start_timeout=2.0)
    started = time.monotonic()
    with pytest.raises(ServerGone, match="could not start: timed out"):
        runtime.acquire(garbage, project)
    assert time.monotonic() - started < 15
    assert runtime.running() == []
    assert not [p for p in _children() if "garbage_server" in p]


def test_a_server_that_dies_at_start_says_why(runtime: LSPRuntime, project: Path) -> None:
    dying = ServerLaunch("test/dies", (sys.executable, str(FAKES / "dies_at_start.py")), start_timeout=10.0)
    with pytest.raises(ServerGone, match="cannot run here"):
        runtime.acquire(dying, project)


def test_a_missing_executable_is_a_clear_error(runtime: LSPRuntime, project: Path) -> None:
    with pytest.raises(ServerGone, match="no-such-language-server"):
        runtime.acquire(ServerLaunch("test/missing", ("no-such-language-server",)), project)


def test_close_stops_every_server(project: Path, tmp_path: Path) -> None:
    runtime = LSPRuntime()
    other = tmp_path / "other"
    other.mkdir()
    pids = [runtime.acquire(launch(), root).pid for root in (project, other)]
    assert len(set(pids)) == 2
    runtime.close()
    assert all(pid is not None and gone(pid) and not _group_alive(pid) for pid in pids)


def _children() -> list[str]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
    return out


def _group_alive(pgid: int, within: float = 5.0) -> bool:
    """Whether a live (non-zombie) process is still in the process group after ``within`` s."""
    deadline = time.monotonic() + within
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _group_members(pgid)


def _group_members(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False
