"""A real on-disk store with a small ontology, for tests of the graph core alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine
from cleveragents.graph.hierarchy import TBox, rebuild_closure
from cleveragents.graph.store import GraphStore
from cleveragents.tbox.modules import replace_graph

U = "https://cleveragents.ai/ontology/uko#"
C = "https://cleveragents.ai/ontology/uko/code#"
MINI_ONTOLOGY = f"""
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<{U}InformationUnit> a owl:Class .
<{U}Container> a owl:Class ; rdfs:subClassOf <{U}InformationUnit> .
<{U}Atom> a owl:Class ; rdfs:subClassOf <{U}InformationUnit> .
<{C}Module> a owl:Class ; rdfs:subClassOf <{U}Container> .
<{C}Callable> a owl:Class ; rdfs:subClassOf <{U}Atom> .
<{U}dependsOn> a owl:ObjectProperty .
<{C}calls> a owl:ObjectProperty ; rdfs:subPropertyOf <{U}dependsOn> .
<{C}imports> a owl:ObjectProperty ; rdfs:subPropertyOf <{U}dependsOn> .
"""

TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
MODULE = ox.NamedNode(C + "Module")
CALLABLE = ox.NamedNode(C + "Callable")
CALLS = ox.NamedNode(C + "calls")
IMPORTS = ox.NamedNode(C + "imports")
CONTAINER = ox.NamedNode(U + "Container")
DEPENDS = ox.NamedNode(U + "dependsOn")


def ex(name: str) -> ox.NamedNode:
    return ox.NamedNode(f"https://example.org/{name}")


def open_store(path: Path) -> GraphStore:
    store = GraphStore.open(path)
    if store.head == 0:
        triples = [q.triple for q in ox.parse(MINI_ONTOLOGY, ox.RdfFormat.TURTLE)]
        replace_graph(store.raw, layout.ONTOLOGY, triples)
        rebuild_closure(store.raw)
    return store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    opened = open_store(tmp_path / "store")
    yield opened
    opened.close()


@pytest.fixture
def engine(store: GraphStore) -> CommitEngine:
    return CommitEngine(store, TBox.from_store(store.raw), None)
