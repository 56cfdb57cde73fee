"""Cross-file references resolved by name, with an honest confidence on every edge.

An analyzer sees one file, so calls, imports, base classes and links arrive as
``Reference`` records naming their target. The symbol table holds every name every
indexed file defines; resolution tries the analyzer's qualified candidates first and a
bare-name match last, and records how sure it is. An ambiguous bare name yields a few
low-confidence candidates or nothing, never a silent guess.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from .model import Reference

RESOLVED_BY = "name-match"
# A bare name matched in the whole namespace: one candidate is plausible, a few are
# listed at split confidence, more than this is noise and yields no edge.
UNIQUE_SIMPLE_CONFIDENCE = 0.5
AMBIGUOUS_SIMPLE_CONFIDENCE = 0.3  # shared by the candidates
MAX_SIMPLE_CANDIDATES = 3
# Per namespace where measured (unique, ambiguous shared): the precision of Python's bare-name
# edges against basedpyright on development packages, rounded to the nearest 0.05, capped at
# 0.95 (benchmarks/bench_calibration.py; benchmarks/RESULTS.md, "Calibration"). Python's
# analyzer offers a bare name only when it is distinctive (not a builtin's or an everyday
# standard-library object's method), and then a unique one was right 64 of 64 times (held
# out: 145 of 148); the 2 or 3 candidates of an ambiguous one held the right one 0.97-1.0
# of the time. Other languages keep the guidance above: not measured yet.
SIMPLE_CONFIDENCE = {"py": (0.95, 0.95)}
ANY_NAMESPACE = "*"
# A symbol only its own file's references name (an analyzer's external-symbol node,
# ``~external:<path>:<qualified>``): never a bare-name candidate for another file.
PRIVATE_SYMBOL = "~"


def simple_part(name: str) -> str:
    return name.rsplit(".", 1)[-1].rsplit("#", 1)[-1]


@dataclass
class SymbolTable:
    qualified: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    simple: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    # First segments of the defined names ('django' of 'django.db.models'), per namespace.
    roots: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def define(self, namespace: str, name: str, iri: str) -> None:
        self.qualified[namespace].setdefault(name, []).append(iri)
        if name.startswith(PRIVATE_SYMBOL):
            return  # reachable by its exact name only: no bare-name match may land on it
        self.simple[namespace].setdefault(simple_part(name), []).append(iri)
        self.roots[namespace].add(_root(name))

    def add_root(self, namespace: str, name: str) -> None:
        """Record that ``name`` is defined inside without making it resolvable (a table
        built for a few files' references skips the names they don't use)."""
        self.roots[namespace].add(_root(name))

    def _outside(self, reference: Reference) -> bool:
        """The analyzer named the target through code that is not indexed (e.g. an import
        from the standard library): a bare-name match inside would be a wrong guess."""
        first = reference.targets[0][0] if reference.targets else ""
        return (
            "." in first
            and reference.namespace != ANY_NAMESPACE
            and _root(first) not in self.roots[reference.namespace]
        )

    def _lookup(self, table: dict[str, dict[str, list[str]]], namespace: str, name: str) -> list[str]:
        if namespace != ANY_NAMESPACE:
            return table[namespace].get(name, []) if namespace in table else []
        # Documents name code: search the code namespaces, not other documents.
        return [iri for ns, names in table.items() if ns != "doc" for iri in names.get(name, [])]

    def resolve(self, reference: Reference) -> list[tuple[str, float]]:
        """Targets of one reference with their confidence; empty when unresolved."""
        for name, confidence in reference.targets:
            hits = _unique(self._lookup(self.qualified, reference.namespace, name))
            if hits:
                return [(iri, round(confidence / len(hits), 2)) for iri in hits]
        if reference.simple_name and not self._outside(reference):
            hits = _unique(self._lookup(self.simple, reference.namespace, reference.simple_name))
            unique, ambiguous = SIMPLE_CONFIDENCE.get(
                reference.namespace, (UNIQUE_SIMPLE_CONFIDENCE, AMBIGUOUS_SIMPLE_CONFIDENCE)
            )
            if len(hits) == 1:
                return [(hits[0], unique)]
            if 1 < len(hits) <= MAX_SIMPLE_CANDIDATES:
                return [(iri, round(ambiguous / len(hits), 2)) for iri in hits]
        return []


def _root(name: str) -> str:
    return name.split(".", 1)[0].split("#", 1)[0]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def referenced_names(references: Iterable[Reference]) -> set[str]:
    """Every name a file's references could resolve through (to find files to relink)."""
    names: set[str] = set()
    for reference in references:
        names.update(name for name, _ in reference.targets)
        names.update(simple_part(name) for name, _ in reference.targets)
        if reference.simple_name:
            names.add(reference.simple_name)
    return names
