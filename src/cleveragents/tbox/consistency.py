"""Check that the ontology (plus any extension being authored) is consistent, with HermiT.

owlready2 cannot read Turtle, so the modules are merged into one N-Triples document
first. ``owl:imports`` are dropped: every module is already in the document, and
owlready2 would otherwise try to fetch the import IRIs from the web.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import owlready2
import pyoxigraph as ox

from cleveragents.errors import CleverAgentsError, DependencyMissingError
from cleveragents.terms import OWL, compact

from .modules import list_modules, ntriples, parse_file

_MERGED_IRI = "https://cleveragents.ai/ontology/merged-for-reasoning"


@dataclass(frozen=True)
class ConsistencyReport:
    """The reasoner's verdict: is the ontology consistent, and which classes are empty."""

    consistent: bool
    unsatisfiable: tuple[str, ...]  # class IRIs equivalent to owl:Nothing
    triples: int  # size of the checked document

    @property
    def ok(self) -> bool:
        return self.consistent and not self.unsatisfiable

    def summary(self) -> str:
        if not self.consistent:
            return (
                f"INCONSISTENT: no model satisfies the {self.triples} triples "
                "(an individual violates a disjointness, functionality or range axiom)"
            )
        if self.unsatisfiable:
            names = ", ".join(compact(iri) for iri in self.unsatisfiable)
            count = len(self.unsatisfiable)
            return f"{count} unsatisfiable class(es) (can have no instances): {names}"
        return f"consistent: {self.triples} triples, no unsatisfiable classes"


def _require_java() -> str:
    java = shutil.which(owlready2.JAVA_EXE)
    if java is None:
        raise DependencyMissingError(
            "Java is not installed: the HermiT reasoner needs a Java runtime (17 or later)",
            detail=f"looked for {owlready2.JAVA_EXE!r} on PATH",
            suggestions=["install a JRE, e.g. 'apt-get install default-jre-headless'"],
        )
    return java


def reasoning_document(extra: Iterable[Path] = (), *, include_bundled: bool = True) -> bytes:
    """The N-Triples the reasoner sees: bundled modules and ``extra`` Turtle files, no imports."""
    paths = [m.path for m in list_modules()] if include_bundled else []
    paths += list(extra)
    triples: list[ox.Triple] = []
    for path in paths:
        triples += [t for t in parse_file(path) if t.predicate.value != OWL + "imports"]
    return ntriples(triples)


def check_consistency(extra: Iterable[Path] = (), *, include_bundled: bool = True) -> ConsistencyReport:
    """Run HermiT on the ontology plus ``extra`` Turtle files (e.g. a new UKO module).

    Raises DependencyMissingError when Java is not available.
    """
    _require_java()
    document = reasoning_document(extra, include_bundled=include_bundled)
    count = document.count(b"\n")
    world = owlready2.World()
    try:
        onto = world.get_ontology(_MERGED_IRI).load(fileobj=io.BytesIO(document), format="ntriples")
        try:
            owlready2.sync_reasoner_hermit(onto, infer_property_values=False, debug=0)
        except owlready2.OwlReadyInconsistentOntologyError:
            return ConsistencyReport(consistent=False, unsatisfiable=(), triples=count)
        except owlready2.OwlReadyJavaError as exc:
            raise CleverAgentsError("the HermiT reasoner failed", detail=str(exc)) from exc
        empty = tuple(
            sorted(c.iri for c in world.inconsistent_classes() if getattr(c, "iri", OWL + "Nothing") != OWL + "Nothing")
        )
        return ConsistencyReport(consistent=True, unsatisfiable=empty, triples=count)
    finally:
        world.close()
