"""The UKO inference engine on a real store: layers, implicit edges, their reifiers, and
incremental maintenance that always equals a derivation from scratch."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents import iris
from cleveragents.graph import history as hist
from cleveragents.graph import layout
from cleveragents.graph.uko_inference import DERIVED_PREDICATES, RESOLVED_BY
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing.indexer import IndexSummary
from cleveragents.indexing.plugins import load_analyzers
from cleveragents.services import graph_service, indexing, resources
from cleveragents.services.resources import ResourceInfo
from cleveragents.terms import ID, UKO

MODELS = '''"""Models; the settings live in config/settings.toml, and models.py is this file."""


class User:
    def save(self):
        return store(self)


def store(obj):
    return obj


def open_db():
    return 1


def close_db():
    return 0
'''
JOBS = """from app.models import close_db, open_db


def nightly():
    open_db()
    close_db()


def weekly():
    open_db()
    close_db()


def report():
    open_db()
"""
GUIDE = """# Guide

The models are in [models](../src/app/models.py). Jobs: `src/app/jobs.py`.

Planned: `src/app/missing.py`.
"""
TREE = {
    "src/app/__init__.py": "",
    "src/app/models.py": MODELS,
    "src/app/jobs.py": JOBS,
    "docs/guide.md": GUIDE,
    "config/settings.toml": '[db]\npath = "db/schema.sql"\nurl = "postgres://db/app"\n',
    "db/schema.sql": "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n",
    "docker-compose.yml": "services:\n  api:\n    build: ./api\n    env_file: .env\n",
    "api/main.py": 'print("api")\n',
    ".env": "SCHEMA=db/schema.sql\n",
}
DEPENDS = f"<{UKO}implicitDependsOn>"
SIBLING = f"<{UKO}implicitSiblingOf>"
CONTAINS = f"<{UKO}implicitContains>"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("uko-template") / "data"
    Workspace(data).initialize()
    return data


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Workspace:
    shutil.copytree(template, tmp_path / "data")
    return Workspace(tmp_path / "data")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel, text in TREE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def index(ws: Workspace, info: ResourceInfo) -> IndexSummary:
    return indexing.index(ws, [info], analyzers=load_analyzers([]))[0]


@pytest.fixture
def indexed(ws: Workspace, tree: Path) -> Iterator[ResourceInfo]:
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="app")
    assert index(ws, info).revision is not None
    yield info


def node(info: ResourceInfo, path: str, key: str = "") -> str:
    return iris.file_iri(info.ulid, path, key)


def directory(info: ResourceInfo, path: str) -> str:
    return iris.directory_iri(info.ulid, path)


def select(ws: Workspace, query: str, as_of: int | None = None) -> list[tuple[str, ...]]:
    with ws.reader() as store:
        result = store.query(query, view=store.view(as_of))
        names = [v.value for v in result.variables]
        return [tuple(row[n].value for n in names) for row in result]


def edges(ws: Workspace, predicate: str, as_of: int | None = None) -> set[tuple[str, str]]:
    return {(s, o) for s, o in select(ws, f"SELECT ?s ?o WHERE {{ ?s {predicate} ?o }}", as_of)}


def derived(ws: Workspace) -> set[str]:
    """The live derived triples: the engine's predicates and its reifiers' triples."""
    with ws.reader() as store:
        raw = store.raw
        reifiers = {q.subject for q in raw.quads_for_pattern(None, None, RESOLVED_BY, layout.LIVE_INFERRED)}
        return {
            str(q.triple)
            for q in raw.quads_for_pattern(None, None, None, layout.LIVE_INFERRED)
            if q.predicate in DERIVED_PREDICATES or q.subject in reifiers
        }


def from_scratch(ws: Workspace) -> set[str]:
    """What the engine derives for the live state when it starts from nothing."""
    with ws.writer() as session:
        store = session.store
        scratch = layout.interval_graph("inf", store.head + 1000)
        assert session.engine.uko is not None
        session.engine.uko.derive_all(store, scratch)
        out = {str(q.triple) for q in store.raw.quads_for_pattern(None, None, None, scratch)}
        store.raw.remove_graph(scratch)
        return out


def about(facts: set[str], *iris: str) -> set[str]:
    """The facts naming one of ``iris`` (or what is inside it), with the reifier triples of such edges."""
    named = {t for t in facts if any(f"<{iri}" in t for iri in iris)}  # the node or an entity in it
    reifiers = {t.split(" ", 1)[0] for t in named if "#reifies>" in t}
    return named | {t for t in facts if t.split(" ", 1)[0] in reifiers}


def assert_consistent(ws: Workspace) -> set[str]:
    live = derived(ws)
    assert live == from_scratch(ws)
    return live


# -- layers ---------------------------------------------------------------------------------


def test_every_unit_gets_the_layer_of_its_most_specific_type(ws: Workspace, indexed: ResourceInfo):
    pairs = select(ws, f"SELECT ?n ?l WHERE {{ ?n uko:layer ?l FILTER(STRSTARTS(STR(?n), '{ID}')) }}")
    layers = dict(pairs)
    units = {n for (n,) in select(ws, "SELECT ?n WHERE { ?n a uko:InformationUnit }")}
    assert set(layers) == units and len(pairs) == len(units)  # every UKO node, one layer each
    assert layers[node(indexed, "src/app/models.py", "store")] == "3"  # uko-py:Function
    assert layers[node(indexed, "src/app/models.py", "User.save")] == "3"  # uko-py:Method
    assert layers[node(indexed, "src/app/models.py")] == "3"  # uko-py:Module
    assert layers[directory(indexed, "src/app")] == "3"  # uko-py:Package
    assert layers[directory(indexed, "docs")] == "1"  # uko-code:Package
    assert layers[node(indexed, "docs/guide.md", "guide")] == "1"  # uko-doc:Section
    assert layers[node(indexed, "db/schema.sql", "users")] == "1"  # uko-data:Table
    assert layers[node(indexed, "db/schema.sql", "users.name")] == "1"  # uko-data:Column
    # Stored apart from asserted triples, as xsd:integer.
    with ws.reader() as store:
        asserted = store.view(inferred=False)
        assert not store.query("ASK { ?n uko:layer ?l FILTER(CONTAINS(STR(?n), '/id/')) }", view=asserted)
        assert store.query(f"ASK {{ <{node(indexed, 'src/app/models.py', 'store')}> uko:layer 3 }}")


# -- implicit dependencies ------------------------------------------------------------------------


def test_string_values_naming_paths_and_iris_become_implicit_dependencies(ws: Workspace, indexed: ResourceInfo):
    found = edges(ws, DEPENDS)
    paragraph = node(indexed, "docs/guide.md", "guide/p1")
    expected = {
        (node(indexed, "docker-compose.yml", "service/api/build"), directory(indexed, "api")),
        (node(indexed, "docker-compose.yml", "service/api/env_file"), node(indexed, ".env")),
        (node(indexed, ".env", "SCHEMA"), node(indexed, "db/schema.sql")),
        (node(indexed, "config/settings.toml", "db.path"), node(indexed, "db/schema.sql")),  # not config/db/...
        (paragraph, node(indexed, "src/app/models.py")),  # a link relative to docs/
        (paragraph, node(indexed, "src/app/jobs.py")),  # a path from the root
        (node(indexed, "src/app/models.py"), node(indexed, "config/settings.toml")),  # the module docstring
    }
    assert found == expected  # not models.py naming itself, not the URL, not the missing file
    # Each edge is inferred (absent from the asserted graphs) and reified as inferred.
    meta = select(
        ws,
        f"SELECT ?s ?o ?c ?by (DATATYPE(?c) AS ?t) WHERE {{ ?s {DEPENDS} ?o . "
        f"?r rdf:reifies <<( ?s {DEPENDS} ?o )>> ; ca:confidence ?c ; ca:resolvedBy ?by }}",
    )
    assert {(s, o) for s, o, *_ in meta} == expected
    assert {(c, by, t) for *_, c, by, t in meta} == {("0.7", "inference", "http://www.w3.org/2001/XMLSchema#decimal")}
    with ws.reader() as store:
        assert not store.query(f"ASK {{ ?s {DEPENDS} ?o }}", view=store.view(inferred=False))
    # The universal view sees them through the closure.
    dependencies = edges(ws, "uko:dependsOn")
    assert expected <= dependencies
    # Values that may name a node later are recorded, the missing file among them.
    planned = node(indexed, "docs/guide.md", "guide/p2")
    mentioned = {o for (o,) in select(ws, f"SELECT ?o WHERE {{ <{planned}> ca:mentions ?o }}")}
    assert node(indexed, "src/app/missing.py") in mentioned
    assert not graph_service.validate_all(ws)  # the shapes accept the inferred reifiers


# -- siblings --------------------------------------------------------------------------------------


def test_units_referenced_together_are_siblings_both_ways(ws: Workspace, indexed: ResourceInfo):
    open_db, close_db = node(indexed, "src/app/models.py", "open_db"), node(indexed, "src/app/models.py", "close_db")
    # open_db: nightly, weekly, report; close_db: nightly, weekly. Shared by 2, at least half of each.
    assert edges(ws, SIBLING) == {(open_db, close_db), (close_db, open_db)}
    assert {(open_db, close_db), (close_db, open_db)} <= edges(ws, "uko:references")
    meta = select(
        ws, f"SELECT ?c ?by WHERE {{ ?r rdf:reifies <<( ?s {SIBLING} ?o )>> ; ca:confidence ?c ; ca:resolvedBy ?by }}"
    )
    assert meta == [("0.7", "inference")] * 2


def test_a_node_and_its_member_are_not_siblings(ws: Workspace, indexed: ResourceInfo):
    base = "https://example.org/kb/"
    cls, method, other = f"{base}m.py#C", f"{base}m.py#C.run", f"{base}n.py#D"
    referrers = [f"{base}a.py#f", f"{base}b.py#g"]
    refs = " . ".join(f"<{r}> a uko:Atom ; uko:references <{cls}>, <{method}>, <{other}>" for r in referrers)
    graph_service.update(
        ws, f"INSERT DATA {{ <{cls}> a uko:Container . <{method}> a uko:Atom . <{other}> a uko:Atom . {refs} }}"
    )
    siblings = edges(ws, SIBLING)
    assert {(cls, other), (other, cls), (method, other), (other, method)} <= siblings
    assert (cls, method) not in siblings and (method, cls) not in siblings  # container and member
    assert_consistent(ws)


# -- implicit containment ----------------------------------------------------------------------------


def test_nodes_in_no_container_are_contained_by_their_nearest_prefix(ws: Workspace, indexed: ResourceInfo):
    assert edges(ws, CONTAINS) == set()  # the analyzers place every node
    user, extra = node(indexed, "src/app/models.py", "User"), node(indexed, "src/app/models.py", "User.extra")
    graph_service.update(ws, f"INSERT DATA {{ <{extra}> a uko-py:Method ; uko:name 'extra' }}")
    assert edges(ws, CONTAINS) == {(user, extra)}  # the class, not the file above it
    assert (user, extra) in edges(ws, "uko:contains")
    assert_consistent(ws)
    # Once an analyzer (here an update) places it, the inferred edge goes.
    graph_service.update(ws, f"INSERT DATA {{ <{user}> uko:contains <{extra}> }}")
    assert edges(ws, CONTAINS) == set()
    # A node with no prefix ancestor waits for one.
    topic, leaf = "https://example.org/kb/topic", "https://example.org/kb/topic/a"
    graph_service.update(ws, f"INSERT DATA {{ <{leaf}> a uko:Atom }}")
    assert select(ws, f"SELECT ?v WHERE {{ <{leaf}> ca:awaitsContainer ?v }}") == [("true",)]
    graph_service.update(ws, f"INSERT DATA {{ <{topic}> a uko:Container }}")
    assert edges(ws, CONTAINS) == {(topic, leaf)}
    assert select(ws, f"SELECT ?v WHERE {{ <{leaf}> ca:awaitsContainer ?v }}") == []
    assert_consistent(ws)
    graph_service.update(ws, f"DELETE DATA {{ <{topic}> a uko:Container }}")
    assert edges(ws, CONTAINS) == set()
    assert_consistent(ws)


# -- incremental maintenance -------------------------------------------------------------------------


def test_reindex_changes_only_the_affected_inferences(ws: Workspace, tree: Path, indexed: ResourceInfo):
    first = assert_consistent(ws)
    first_revision = select(ws, "SELECT (MAX(?r) AS ?m) WHERE { ?c ca:revision ?r }")[0][0]
    paragraph, planned = node(indexed, "docs/guide.md", "guide/p1"), node(indexed, "docs/guide.md", "guide/p2")
    missing = node(indexed, "src/app/missing.py")

    # A file the guide names appears: the paragraph depends on it; the rest stays as it was.
    (tree / "src/app/missing.py").write_text("def later():\n    return None\n")
    summary = index(ws, indexed)
    assert summary.revision is not None
    second = assert_consistent(ws)
    assert first - second == set()
    assert (planned, missing) in edges(ws, DEPENDS)
    assert second - first == about(second - first, missing)  # new facts are about the new file only

    # The guide stops naming jobs.py: that edge (and its reifier) go.
    (tree / "docs/guide.md").write_text(GUIDE.replace(" Jobs: `src/app/jobs.py`.", ""))
    index(ws, indexed)
    third = assert_consistent(ws)
    gone = second - third
    jobs = node(indexed, "src/app/jobs.py")
    assert (paragraph, jobs) not in edges(ws, DEPENDS)
    guide = node(indexed, "docs/guide.md")  # facts of the edited file's nodes change, no others
    assert gone and gone == about(gone, guide)
    assert third - second == about(third - second, guide)

    # weekly() stops calling close_db: the pair is no longer used together.
    (tree / "src/app/jobs.py").write_text(
        JOBS.replace("    open_db()\n    close_db()\n\n\ndef report", "    open_db()\n\n\ndef report")
    )
    index(ws, indexed)
    assert_consistent(ws)
    assert edges(ws, SIBLING) == set()

    # An unchanged tree commits nothing.
    assert index(ws, indexed).revision is None
    # History: as of the first index the edge to jobs.py was there.
    assert (paragraph, jobs) in edges(ws, DEPENDS, as_of=int(first_revision))
    with ws.reader() as store:
        spans = [
            s for s in hist.history(store, ox.NamedNode(paragraph)) if s.predicate.value == UKO + "implicitDependsOn"
        ]
        closed = [s for s in spans if s.object.value == jobs]  # type: ignore[attr-defined]
        assert len(closed) == 1 and closed[0].inferred and closed[0].end is not None


def test_deleting_a_named_file_closes_the_edges_to_it(ws: Workspace, tree: Path, indexed: ResourceInfo):
    schema = node(indexed, "db/schema.sql")
    assert {s for s, o in edges(ws, DEPENDS) if o == schema}
    (tree / "db/schema.sql").unlink()
    index(ws, indexed)
    assert not {s for s, o in edges(ws, DEPENDS) if o == schema}
    assert_consistent(ws)
    # The values still name it: it is back as soon as the file is.
    (tree / "db/schema.sql").write_text(TREE["db/schema.sql"])
    index(ws, indexed)
    assert {s for s, o in edges(ws, DEPENDS) if o == schema} == {
        node(indexed, ".env", "SCHEMA"),
        node(indexed, "config/settings.toml", "db.path"),
    }
    assert_consistent(ws)


def test_deleting_every_file_closes_their_inferences(ws: Workspace, tree: Path, indexed: ResourceInfo):
    assert derived(ws)
    shutil.rmtree(tree)
    tree.mkdir()
    index(ws, indexed)
    left = assert_consistent(ws)
    assert {t.split(" ", 1)[0] for t in left} == {f"<{directory(indexed, '')}>"}  # only the empty root is left
