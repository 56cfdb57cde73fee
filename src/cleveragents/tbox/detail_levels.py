"""Effective DetailLevelMaps and named-level resolution, computed from the ontology data.

The ontology stores each module's own levels (``uko:DetailLevel``) and its parent map.
A level without ``uko:insertedAfter`` is placed at its ``uko:levelDepth``; an inserted
level goes directly after its anchor (after earlier insertions of the same map at that
anchor). The effective map is then renumbered 0, 1, 2, ... Nothing here hard-codes a
level name.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.iris import term_text
from cleveragents.terms import PREFIXES, RDF_TYPE, UKO

from .closure import closure_pairs
from .lookup import expand_term
from .modules import list_modules, ontology_triples


class Level(NamedTuple):
    """One row of an effective map: name, renumbered depth, defining prefix (``uko-py:``)."""

    name: str
    depth: int
    defined_in: str


@dataclass
class _LevelDef:
    iri: str
    name: str
    map_iri: str
    depth: int | None = None
    after: str | None = None


@dataclass
class _MapDef:
    iri: str
    namespace: str = ""
    parent: str | None = None
    levels: list[_LevelDef] = field(default_factory=list)


@dataclass
class _Model:
    maps: dict[str, _MapDef]
    by_namespace: dict[str, str]  # namespace IRI -> map IRI
    superclasses: dict[str, set[str]]
    effective: dict[str, list[_LevelDef]] = field(default_factory=dict)


def _build(triples: Iterable[ox.Triple]) -> _Model:
    rows = list(triples)
    maps: dict[str, _MapDef] = {}
    levels: dict[str, _LevelDef] = {}
    for t in rows:
        if t.predicate.value == RDF_TYPE and term_text(t.object) == UKO + "DetailLevelMap":
            maps.setdefault(term_text(t.subject), _MapDef(term_text(t.subject)))
        elif t.predicate.value == RDF_TYPE and term_text(t.object) == UKO + "DetailLevel":
            levels.setdefault(term_text(t.subject), _LevelDef(term_text(t.subject), "", ""))
    for t in rows:
        s, p, o = term_text(t.subject), t.predicate.value, term_text(t.object)
        if s in maps and p == UKO + "forNamespace":
            maps[s].namespace = o
        elif s in maps and p == UKO + "parentMap":
            maps[s].parent = o
        elif s in levels and p == UKO + "inMap":
            levels[s].map_iri = o
        elif s in levels and p == UKO + "levelName":
            levels[s].name = o
        elif s in levels and p == UKO + "levelDepth":
            levels[s].depth = int(o)
        elif s in levels and p == UKO + "insertedAfter":
            levels[s].after = o
    for level in levels.values():
        if level.map_iri not in maps:
            raise ValidationError(f"detail level {level.iri} is not in a known DetailLevelMap")
        maps[level.map_iri].levels.append(level)
    by_namespace = {m.namespace: m.iri for m in maps.values() if m.namespace}
    return _Model(maps, by_namespace, closure_pairs(rows)[0])


@cache
def _bundled() -> _Model:
    return _build(ontology_triples())


def _model(triples: Iterable[ox.Triple] | None) -> _Model:
    return _bundled() if triples is None else _build(triples)


def _effective(model: _Model, map_iri: str, visiting: frozenset[str] = frozenset()) -> list[_LevelDef]:
    if map_iri in model.effective:
        return model.effective[map_iri]
    if map_iri in visiting:
        raise ValidationError(f"DetailLevelMap parent chain loops at {map_iri}")
    spec = model.maps[map_iri]
    seq = list(_effective(model, spec.parent, visiting | {map_iri})) if spec.parent else []
    for level in sorted((lv for lv in spec.levels if lv.after is None), key=_order):
        seq.insert(min(level.depth or 0, len(seq)), level)
    anchor_of: dict[str, str] = {}  # this map's inserted level -> its anchor
    pending = sorted((lv for lv in spec.levels if lv.after is not None), key=_order)
    while pending:
        placed = [lv for lv in pending if _insert(seq, lv, anchor_of)]
        if not placed:
            missing = ", ".join(f"{lv.name} after {lv.after}" for lv in pending)
            raise ValidationError(f"{map_iri}: insertion anchors not in the parent map: {missing}")
        pending = [lv for lv in pending if lv not in placed]
    names = [lv.name for lv in seq]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValidationError(f"{map_iri}: level names defined twice: {', '.join(dupes)}")
    model.effective[map_iri] = seq
    return seq


def _order(level: _LevelDef) -> tuple[float, str]:
    return (level.depth if level.depth is not None else math.inf, level.name)


def _insert(seq: list[_LevelDef], level: _LevelDef, anchor_of: dict[str, str]) -> bool:
    index = next((i for i, lv in enumerate(seq) if lv.iri == level.after), None)
    if index is None:
        return False
    pos = index + 1
    # Keep this map's insertions at the same anchor in declared order.
    while pos < len(seq) and anchor_of.get(seq[pos].iri) == level.after:
        pos += 1
    seq.insert(pos, level)
    anchor_of[level.iri] = level.after or ""
    return True


def _prefix_of(namespace: str) -> str:
    for module in list_modules():
        if module.namespace == namespace and module.prefix:
            return module.prefix + ":"
    for name, iri in PREFIXES.items():
        if iri == namespace:
            return name + ":"
    return namespace


def _map_for(model: _Model, target: str) -> str:
    """The map IRI for a prefix (``uko-py`` / ``uko-py:``), namespace, map or UKO type IRI."""
    if target in model.maps:
        return target
    bare = target.rstrip(":")
    if bare in PREFIXES or any(m.prefix == bare for m in list_modules()):
        namespace = PREFIXES.get(bare) or next(m.namespace for m in list_modules() if m.prefix == bare)
        if namespace in model.by_namespace:
            return model.by_namespace[namespace]
        raise NotFoundError(f"no DetailLevelMap is registered for {bare}:")
    iri = expand_term(target)
    if iri in model.by_namespace:
        return model.by_namespace[iri]
    # A type: the map of its own namespace, else of the nearest superclass that has one.
    candidates = [
        model.by_namespace[ns]
        for sup in _by_distance(model, iri)
        for ns in [_namespace(sup)]
        if ns in model.by_namespace
    ]
    if not candidates:
        raise NotFoundError(f"no DetailLevelMap applies to {target!r}")
    return candidates[0]


def _namespace(iri: str) -> str:
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return iri[: cut + 1]


def _by_distance(model: _Model, iri: str) -> list[str]:
    """``iri`` then its superclasses, nearest first; deeper maps first at equal distance."""
    edges = model.superclasses
    if iri not in edges:
        return [iri]
    order, frontier, seen = [iri], [iri], {iri}
    while frontier:
        step: set[str] = set()
        for node in frontier:
            # Direct supers: those whose own supers don't include another candidate.
            step |= {s for s in edges.get(node, ()) if s not in seen and _is_direct(edges, node, s)}
        ranked = sorted(step, key=lambda s: (-_chain_length(model, s), s))
        order += ranked
        seen |= step
        frontier = ranked
    return order


def _is_direct(edges: dict[str, set[str]], node: str, sup: str) -> bool:
    return not any(sup in edges.get(mid, ()) for mid in edges.get(node, ()) if mid not in (node, sup))


def _chain_length(model: _Model, cls: str) -> int:
    map_iri = model.by_namespace.get(_namespace(cls))
    length = 0
    while map_iri is not None and length < 64:
        length += 1
        map_iri = model.maps[map_iri].parent if map_iri in model.maps else None
    return length


def effective_levels(target: str, triples: Iterable[ox.Triple] | None = None) -> list[Level]:
    """The effective, renumbered map for a module prefix or UKO type.

    ``target`` may be ``uko-py``, ``uko-py:``, a namespace IRI, a map IRI, or a class such
    as ``uko-py:Module`` (a class without its own map uses its nearest superclass's).
    """
    model = _model(triples)
    levels = _effective(model, _map_for(model, target))
    return [Level(lv.name, depth, _prefix_of(model.maps[lv.map_iri].namespace)) for depth, lv in enumerate(levels)]


def resolve_depth(target: str, depth: int | str, triples: Iterable[ox.Triple] | None = None) -> int:
    """The integer depth for a named level (or a raw integer) requested for ``target``.

    A raw integer is used as given. A name is looked up in the most specific map for the
    target, then in each parent map in turn, as the spec's resolution chain describes.
    """
    if isinstance(depth, int) or depth.isdigit():
        value = int(depth)
        if value < 0:
            raise ValidationError(f"detail depth must be non-negative, got {value}")
        return value
    model = _model(triples)
    map_iri: str | None = _map_for(model, target)
    known: list[str] = []
    while map_iri is not None:
        for index, level in enumerate(_effective(model, map_iri)):
            if level.name == depth:
                return index
            known.append(level.name)
        map_iri = model.maps[map_iri].parent
    raise NotFoundError(
        f"unknown detail level {depth!r} for {target}",
        suggestions=difflib.get_close_matches(depth, sorted(set(known)), n=3),
    )


def declared_depth_mismatches(triples: Iterable[ox.Triple] | None = None) -> list[str]:
    """Levels whose declared ``uko:levelDepth`` differs from their computed depth.

    The declared depth of an inserted level documents the spec's table; a mismatch means
    a parent map changed and the declaration (or the insertion point) is stale.
    """
    model = _model(triples)
    problems = []
    for map_iri in model.maps:
        for index, level in enumerate(_effective(model, map_iri)):
            if level.map_iri == map_iri and level.depth is not None and level.depth != index:
                problems.append(f"{level.iri}: declared depth {level.depth}, computed {index}")
    return problems


def max_depth(target: str, triples: Iterable[ox.Triple] | None = None) -> int | None:
    """The deepest named level's depth for ``target`` (None for the universal map)."""
    levels = effective_levels(target, triples)
    return levels[-1].depth if levels else None
