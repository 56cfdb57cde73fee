"""The import contract (ARCHITECTURE.md, pyproject.toml [tool.importlinter]) holds on this
tree and breaks on planted violations: an upward import, a cycle inside a layer, a new
package importing above its layer. The checker is the one `.ci/test` runs."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _checker():  # .ci/ is not a package: load the script by path
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / ".ci" / "check_layers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_layers = _checker()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the parts of the checkout the contract reads."""
    copy = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("src", "cli", "analyzers", "strategies"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def _plant(checkout: Path, module: str, line: str) -> None:
    path = checkout / "src" / "cleveragents" / module
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.parent.name != "cleveragents" and not (path.parent / "__init__.py").exists():
        (path.parent / "__init__.py").write_text("")
    with path.open("a") as out:
        out.write(f"\n{line}  # planted\n")


def test_the_tree_keeps_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_layers.check(ROOT) == 0, capsys.readouterr().out
    assert "2 kept, 0 broken" in capsys.readouterr().out


def test_an_upward_import_breaks_it(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant(checkout, "graph/layout.py", "from cleveragents.services import projects")
    assert check_layers.check(checkout) != 0
    out = capsys.readouterr().out
    assert "cleveragents.graph is not allowed to import cleveragents.services" in out
    assert "cleveragents.graph.layout -> cleveragents.services.projects" in out


def test_an_import_from_the_checkout_folders_is_seen(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cli/ lives outside src/: the assembled copy makes its imports visible."""
    _plant(checkout, "indexing/model.py", "from cleveragents.cli import rendering")
    assert check_layers.check(checkout) != 0
    assert "cleveragents.indexing is not allowed to import cleveragents.cli" in capsys.readouterr().out


def test_a_cycle_inside_a_layer_breaks_it(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plant(checkout, "graph/layout.py", "from cleveragents.graph import commit")
    assert check_layers.check(checkout) != 0
    out = capsys.readouterr().out
    assert "No cycles are allowed in cleveragents.graph" in out


def test_a_package_that_lands_later_is_held_to_its_layer(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """plans/ does not exist yet on this tree (the contract names it optional): once it
    exists it may import storage, and may not import the application services."""
    plans = checkout / "src" / "cleveragents" / "plans"
    shutil.rmtree(plans, ignore_errors=True)
    _plant(checkout, "plans/model.py", "from cleveragents.graph import store")
    assert check_layers.check(checkout) == 0, capsys.readouterr().out
    capsys.readouterr()
    _plant(checkout, "plans/model.py", "from cleveragents.services import projects")
    assert check_layers.check(checkout) != 0
    assert "cleveragents.plans is not allowed to import cleveragents.services" in capsys.readouterr().out
