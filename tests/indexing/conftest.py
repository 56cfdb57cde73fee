"""A real store per test (copied from one initialized template) and a resource directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.indexer import IndexSummary
from cleveragents.indexing.plugins import AnalyzerSet, load_analyzers
from cleveragents.services import indexing, resources
from cleveragents.services.resources import ResourceInfo

PLUGINS = Path(__file__).parent / "plugins"


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


@pytest.fixture(scope="session")
def outline_analyzers() -> AnalyzerSet:
    """The test's user plugin directory plus the built-ins, as `analyzers.path` would load them."""
    return load_analyzers([PLUGINS])


@pytest.fixture
def add_resource(ws: Workspace) -> Callable[..., ResourceInfo]:
    def add(root: Path, type_name: str = "fs-directory", name: str | None = None) -> ResourceInfo:
        info, _ = resources.add(ws, root, type_name=type_name, name=name)
        return info

    return add


@pytest.fixture
def run_index(ws: Workspace, outline_analyzers: AnalyzerSet) -> Callable[..., IndexSummary]:
    def run(info: ResourceInfo, **kwargs: object) -> IndexSummary:
        return indexing.index(ws, [info], analyzers=outline_analyzers, **kwargs)[0]  # type: ignore[arg-type]

    return run


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


TREE = {
    "a.outline": "def main\ncall b.helper\ndef unused\n",
    "b.outline": "def helper\ncall main\n",
    "pkg/c.outline": "def deep\ncall helper\n",
}


def rows(ws: Workspace, query: str, as_of: int | None = None) -> list[dict[str, str]]:
    with ws.reader() as store:
        result = store.query(query, view=store.view(as_of))
        names = [v.value for v in result.variables]
        return [{n: row[n].value for n in names if row[n] is not None} for row in result]


def calls(ws: Workspace, as_of: int | None = None) -> set[tuple[str, str, str, str]]:
    found = rows(
        ws,
        "SELECT ?s ?o ?c ?by WHERE { ?s uko-code:calls ?o . "
        "?r rdf:reifies <<( ?s uko-code:calls ?o )>> ; ca:confidence ?c ; ca:resolvedBy ?by }",
        as_of,
    )
    return {(r["s"].split("#")[-1], r["o"].split("#")[-1], r["c"], r["by"]) for r in found}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root, TREE)
    return root
