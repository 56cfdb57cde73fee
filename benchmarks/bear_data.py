"""Synthetic histories in the shape of BEAR-B: a base version and N versions with
about +15% / -10% triples each.

``dbpedia`` data looks like BEAR-B's own (DBpedia resources and properties, no UKO
types): it measures the temporal store itself. ``uko`` data is code-like UKO entities
(typed, with provenance and call edges), so closure, revisions and SHACL do real
work on every triple: it measures the product's indexing workload."""

from __future__ import annotations

import random
from dataclasses import dataclass

UKO = "https://cleveragents.ai/ontology/uko#"
CODE = "https://cleveragents.ai/ontology/uko/code#"
PY = "https://cleveragents.ai/ontology/uko/py#"
EX = "https://example.org/code/"
TYPES = [CODE + "Callable", CODE + "TypeDefinition", CODE + "Module", CODE + "TestCase"]
LITERAL_PROPS = [
    UKO + "sourcePath",
    UKO + "sourceRange",
    CODE + "hasReturnType",
    CODE + "hasParameters",
]


@dataclass
class Version:
    added: list[str]  # N-Triples lines
    removed: list[str]


DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
DBO_TYPES = ["Person", "Place", "Organisation", "Work", "Species", "Event"]
DBO_LINKS = ["birthPlace", "team", "author", "genre", "location", "influencedBy"]
DBO_VALUES = ["birthDate", "populationTotal", "abstract", "runtime", "elevation"]


def _dbpedia_lines(rng: random.Random, i: int, population: int) -> list[str]:
    s = f"<{DBR}R{i}>"
    lines = [f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{DBO}{DBO_TYPES[i % 6]}> ."]
    lines.append(f'{s} <http://www.w3.org/2000/01/rdf-schema#label> "Resource {i}"@en .')
    for prop in DBO_VALUES[:3]:
        lines.append(f'{s} <{DBO}{prop}> "{rng.randrange(10**6)}" .')
    for _ in range(5):
        lines.append(f"{s} <{DBO}{rng.choice(DBO_LINKS)}> <{DBR}R{rng.randrange(population)}> .")
    return lines


def _entity_lines(rng: random.Random, i: int, population: int) -> list[str]:
    s = f"<{EX}e{i}>"
    lines = [f"{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{TYPES[i % len(TYPES)]}> ."]
    lines.append(f'{s} <{UKO}sourcePath> "src/pkg{i % 97}/mod{i % 13}.py" .')
    lines.append(f'{s} <{UKO}sourceRange> "{i % 500 + 1}:1-{i % 500 + 9}:0" .')
    lines.append(f'{s} <{CODE}hasReturnType> "T{rng.randrange(1000)}" .')
    for _ in range(6):
        lines.append(f"{s} <{CODE}calls> <{EX}e{rng.randrange(population)}> .")
    return lines


def history(base_triples: int = 100_000, versions: int = 10, seed: int = 7, kind: str = "dbpedia") -> list[Version]:
    """Version 0 adds ``base_triples``; each later one adds 15% and removes 10% of v0's size."""
    rng = random.Random(seed)
    per_entity = 10
    population = base_triples // per_entity
    live: list[str] = []
    seen: set[str] = set()
    next_entity = 0
    out: list[Version] = []
    for v in range(versions):
        target_add = base_triples if v == 0 else int(base_triples * 0.15)
        added: list[str] = []
        while len(added) < target_add:
            make = _dbpedia_lines if kind == "dbpedia" else _entity_lines
            for line in make(rng, next_entity, population + next_entity):
                if line not in seen:
                    seen.add(line)
                    added.append(line)
            next_entity += 1
        removed: list[str] = []
        if v:
            k = int(base_triples * 0.10)
            idx = sorted(rng.sample(range(len(live)), k), reverse=True)
            for j in idx:
                removed.append(live[j])
                live[j] = live[-1]
                live.pop()
            for line in removed:
                seen.discard(line)
        live.extend(added)
        out.append(Version(added, removed))
    return out
