"""Validation commands (test, lint, type-check, build) and running them in a sandbox.

The commands come from the project (``agents project set-validation``); each runs in the
sandbox's root with the configured timeout, in its own process group (process.py). The
results are data: the plans engine records them during Execute (records.py gives the
triples), and an actor reads them to decide what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .core import Sandbox
from .process import ProcessResult, run_process

KINDS: Final = ("test", "lint", "type-check", "build")
DEFAULT_TIMEOUT: Final = 600.0
OUTPUT_TAIL: Final = 4000


@dataclass(frozen=True)
class ValidationCommands:
    """The commands of a project, or of one of its resources (``resource`` set)."""

    test: str | None = None
    lint: str | None = None
    type_check: str | None = None
    build: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    resource: str | None = None  # the resource's name; None: every resource of the project

    def commands(self) -> list[tuple[str, str]]:
        """(kind, command) in the order they run: build, lint, type-check, test."""
        ordered = [("build", self.build), ("lint", self.lint), ("type-check", self.type_check), ("test", self.test)]
        return [(kind, command) for kind, command in ordered if command]

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ValidationRun:
    kind: str
    resource: str
    command: str
    passed: bool
    exit_code: int | None
    timed_out: bool
    duration_s: float
    output_tail: str

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def run_validations(sandbox: Sandbox, commands: ValidationCommands) -> list[ValidationRun]:
    """Run every configured command in the sandbox (all of them, even after a failure, so
    the actor sees every problem at once)."""
    return [_run(sandbox, kind, command, commands.timeout) for kind, command in commands.commands()]


def _run(sandbox: Sandbox, kind: str, command: str, timeout: float) -> ValidationRun:
    done: ProcessResult = run_process(command, sandbox.root, timeout=timeout)
    output = (done.stdout + ("\n" if done.stdout and done.stderr else "") + done.stderr).strip()
    if done.timed_out:
        output += f"\n[killed after {timeout:g} s]"
    return ValidationRun(
        kind=kind,
        resource=sandbox.resource.name,
        command=command,
        passed=done.ok,
        exit_code=done.exit_code,
        timed_out=done.timed_out,
        duration_s=done.duration_s,
        output_tail=output[-OUTPUT_TAIL:],
    )
