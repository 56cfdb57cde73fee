"""Detail depth for context requests (core-concepts.md "DetailDepth and DetailLevelMap",
"Depth/Breadth Projection").

A request's depth is a raw integer or a named level. A name means different integers for
different node types (SIGNATURES is 5 for a Python class, another number for a document
section), so it resolves per target node through the effective DetailLevelMap of the
node's most specific type, walking up the parent maps. The gradient lowers detail with
distance from the focus.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import cache

from cleveragents.errors import NotFoundError, UsageError
from cleveragents.tbox.closure import most_specific_type
from cleveragents.tbox.detail_levels import effective_levels, resolve_depth
from cleveragents.tbox.modules import list_modules


@cache
def all_level_names() -> tuple[str, ...]:
    """Every named level of every registered DetailLevelMap, sorted."""
    names: set[str] = set()
    for module in list_modules():
        if not module.prefix:
            continue
        try:
            names.update(level.name for level in effective_levels(module.prefix))
        except NotFoundError:  # a module without a map of its own
            continue
    return tuple(sorted(names))


def _unknown(depth: str, valid: Iterable[str], where: str) -> UsageError:
    valid = sorted(set(valid))
    close = difflib.get_close_matches(depth, valid, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return UsageError(
        f"unknown detail level {depth!r}{where}{hint}; valid names: {', '.join(valid)}",
        suggestions=close or ["use an integer depth, or one of the names listed"],
        data={"depth": depth, "valid": valid},
    )


def validate_depth(depth: int | str) -> int | str:
    """Check a request's depth before any strategy runs: an integer >= 0, a digit string
    (returned as int) or a level name known to some map. An unknown name is a UsageError
    listing the valid names."""
    if isinstance(depth, int):
        if depth < 0:
            raise UsageError(f"detail depth must be a non-negative integer, got {depth}")
        return depth
    text = depth.strip()
    if text.isdigit():
        return int(text)
    if text not in all_level_names():
        raise _unknown(text, all_level_names(), "")
    return text


def resolve_for_types(types: Iterable[str], depth: int | str) -> int:
    """The integer depth of ``depth`` for a node with these rdf:types: the most specific
    type's effective map first, then its parent maps (``resolve_depth`` walks them)."""
    if isinstance(depth, int) or depth.strip().isdigit():
        return int(validate_depth(depth))
    target = most_specific_type(types)
    if target is None:
        raise UsageError(f"cannot resolve detail level {depth!r}: the node has no type")
    try:
        return resolve_depth(target, depth)
    except NotFoundError:
        try:
            valid = [level.name for level in effective_levels(target)]
        except NotFoundError:
            valid = list(all_level_names())
        raise _unknown(depth, valid, f" for {target}") from None


def gradient(depth: int, distance: int, breadth: int = 2, floor: int = 0) -> int:
    """The depth for an item ``distance`` hops from the focus when the focus gets ``depth``.

    Detail falls linearly to ``floor`` at the edge of the breadth, as in the spec's
    projection examples (breadth 2: FULL_SOURCE 9 -> SIGNATURES 4 -> MODULE_LISTING 0).
    """
    if depth < 0 or distance < 0:
        raise ValueError("depth and distance must be non-negative")
    if distance == 0:
        return depth
    span = max(breadth, 1)
    if distance >= span:
        return min(floor, depth)
    return max(floor, min(depth, int(depth * (span - distance) / span)))
