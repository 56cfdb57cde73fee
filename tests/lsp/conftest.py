"""A real store per test (copied from one initialized template) and LSP configuration files."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cleveragents.graph.workspace import Workspace
from cleveragents.lsp.builtins import TOOLS_DIR_ENV


@pytest.fixture(scope="session")
def template_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("template") / "data"
    Workspace(data).initialize()
    return data


@pytest.fixture
def ws(template_data_dir: Path, tmp_path: Path) -> Workspace:
    data = tmp_path / "data"
    shutil.copytree(template_data_dir, data)
    return Workspace(data)


@pytest.fixture
def tools_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty tools dir of this test's own (nothing installed by npm yet)."""
    path = tmp_path / "tools"
    monkeypatch.setenv(TOOLS_DIR_ENV, str(path))
    return path


@pytest.fixture
def config_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """Writes an LSP configuration file: ``config_file("rust.yaml", text)``."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / "configs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    return write
