"""Every command loads on first use, and a command loads only what it needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cleveragents.cli.main import COMMANDS, run

CLI = Path(__file__).parents[2] / "cli"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_loads_and_has_help(name: str, capsys: pytest.CaptureFixture[str]):
    assert run([name, "--help"]) == 0
    assert f"agents {name}" in capsys.readouterr().out


def test_every_command_module_is_reachable():
    """A new *_cmd.py must be listed in COMMANDS (sandbox_cmd adds its verbs to plan and project)."""
    listed = {module for module, _ in COMMANDS.values()} | {"sandbox_cmd"}
    assert {p.stem for p in CLI.glob("*_cmd.py")} == listed


def test_a_graph_query_does_not_import_the_agent_stacks():
    heavy = ("cleveragents.actors", "cleveragents.servers", "langgraph", "langchain_core", "mcp", "a2a", "jinja2")
    code = (
        "import sys; from cleveragents.cli.main import run; run(['graph', 'query', '--help']);"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
