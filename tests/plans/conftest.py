"""A real store in tmp_path with a project, and helpers to write actions and scripts."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from cleveragents.graph.workspace import Workspace
from cleveragents.services import projects

AGENT = "tester"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path / "data", writer_wait=0)
    workspace.initialize()
    projects.create(workspace, "local/demo", agent=AGENT)
    return workspace


def error_of(kind: type[BaseException], fn: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the error ``fn`` raises. The exception is not kept: its traceback
    holds the writer's store open (the frames reference it), which a later call would find
    locked; a process drops it when the except block ends."""
    try:
        fn(*args, **kwargs)
    except kind as exc:
        return str(getattr(exc, "message", exc))
    raise AssertionError(f"{fn.__name__} did not raise {kind.__name__}")


def write_action(folder: Path, script: str, **fields: object) -> Path:
    """An action YAML whose actors are one scripted actor playing ``script``."""
    (folder / "script.yaml").write_text(textwrap.dedent(script))
    body = {
        "name": "local/demo-action",
        "description": "Rename {{ old }} to {{ new }}",
        "definition_of_done": "No {{ old }} is left",
        "strategy_actor": "scripted:script.yaml",
        "execution_actor": "scripted:script.yaml",
        "args": {"old": {"type": "string", "required": True}, "new": {"type": "string", "required": True}},
        **fields,
    }
    import yaml

    path = folder / "action.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path
