"""The import contract (ARCHITECTURE.md, pyproject.toml [tool.importlinter]) holds on this
tree and breaks on planted violations: an upward import, a cycle inside a layer, a new
package importing above its layer. The checker is the one `.ci/test` runs."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _checker(name: str = "check_layers"):  # .ci/ is not a package: load the script by path
    spec = importlib.util.spec_from_file_location(name, ROOT / ".ci" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_layers = _checker()
check_types = _checker("check_types")


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
    assert " kept, 0 broken" in capsys.readouterr().out


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


def test_only_the_storage_layer_touches_the_raw_store() -> None:
    """``GraphStore.raw`` is the pyoxigraph store under the layout (the default graph is the
    live mirror, history lives in interval graphs): code above ``graph/`` uses the store's
    methods and views instead (ARCHITECTURE.md, "Where new code goes")."""
    import ast

    offenders = []
    folders = [ROOT / "src" / "cleveragents", ROOT / "cli", ROOT / "analyzers", ROOT / "strategies"]
    for folder in folders:
        for path in folder.rglob("*.py"):
            if (ROOT / "src" / "cleveragents" / "graph") in path.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr == "raw" and "store" in ast.unparse(node.value):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


def test_a_type_error_breaks_the_type_check(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The type check `.ci/test` runs fails on an error in a checked package, named at
    its place in the checkout (cli/ is checked; see [tool.basedpyright] in pyproject.toml)."""
    (checkout / "cli" / "planted.py").write_text('count: int = "three"  # planted\n')
    assert check_types.check(checkout) != 0
    out = capsys.readouterr().out
    assert f"{checkout / 'cli' / 'planted.py'}:1" in out
    assert "1 error" in out
