"""How a required tool step of the scripted actor reads a result that says it failed."""

from __future__ import annotations

from cleveragents.actors.scripted import _failure
from cleveragents.tools import ToolResult


def test_a_command_that_exits_non_zero_or_times_out_fails_the_step_with_its_output() -> None:
    done = {"command": "pytest -q", "exit_code": 2, "timed_out": False, "stdout": "1 failed", "stderr": "", "ok": False}
    expected = "tool run_command: `pytest -q` exited with 2: 1 failed"
    assert _failure("run_command", ToolResult(ok=True, content=done)) == expected
    killed = {**done, "exit_code": None, "timed_out": True, "stdout": ""}
    assert _failure("run_command", ToolResult(ok=True, content=killed)) == "tool run_command: `pytest -q` timed out"
    assert _failure("run_command", ToolResult(ok=True, content={**done, "exit_code": 0, "ok": True})) == ""


def test_a_refused_call_fails_the_step_with_the_refusal() -> None:
    refused = ToolResult(ok=False, error="path escapes the sandbox", error_code="ACCESS_DENIED")
    assert _failure("write_file", refused) == "tool write_file failed: path escapes the sandbox"
