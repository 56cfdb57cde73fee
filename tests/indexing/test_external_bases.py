"""Bases from outside the package, builtins included, become inheritance edges to
``uko-code:ExternalSymbol`` nodes (name-matched, with a confidence); a base defined in the
indexed code still wins."""

from __future__ import annotations

from pathlib import Path

from cleveragents import iris
from cleveragents.services import indexing

from .conftest import write

SOURCES = {
    "pkg/__init__.py": "",
    "pkg/base.py": "class Local:\n    pass\n",
    "pkg/cli.py": (
        "import argparse\nfrom pkg.base import Local\n\n\n"
        "class Missing(KeyError):\n    pass\n\n\n"
        "class Parser(argparse.ArgumentParser, Local):\n    pass\n"
    ),
}


def test_external_and_builtin_bases_are_edges_to_external_symbols(ws, tmp_path: Path, add_resource) -> None:
    root = tmp_path / "tree"
    write(root, SOURCES)
    info = add_resource(root)
    indexing.index(ws, [info])
    query = """
        SELECT ?cls ?base ?kind ?qualified ?confidence ?by WHERE {
          ?cls uko-oo:inheritsFrom ?base .
          OPTIONAL { ?base a uko-code:ExternalSymbol ; uko-code:qualifiedName ?qualified BIND("external" AS ?kind) }
          ?edge rdf:reifies <<( ?cls uko-oo:inheritsFrom ?base )>> ; ca:confidence ?confidence ; ca:resolvedBy ?by }
    """
    with ws.reader() as store:
        rows = {
            (
                row["cls"].value.rsplit("#", 1)[-1],
                row["qualified"].value if row["qualified"] else row["base"].value,
                float(row["confidence"].value),
                row["by"].value,
            )
            for row in store.query(query)
        }
    assert rows == {
        ("Missing", "builtins.KeyError", 0.95, "name-match"),
        ("Parser", "argparse.ArgumentParser", 0.95, "name-match"),
        ("Parser", iris.file_iri(info.ulid, "pkg/base.py", "Local"), 0.95, "name-match"),
    }
