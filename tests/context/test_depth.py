"""Detail depth: named levels resolve per node type through the effective maps; unknown
names list the valid ones; the gradient lowers detail with distance from the focus."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cleveragents.context.depth import all_level_names, gradient, resolve_for_types, validate_depth
from cleveragents.errors import UsageError
from cleveragents.tbox.detail_levels import effective_levels

PY_CLASS = "https://cleveragents.ai/ontology/uko/py#Class"
CODE_NODE = "https://cleveragents.ai/ontology/uko#Container"


def test_named_levels_resolve_through_the_most_specific_types_map() -> None:
    # uko-oo: inserts CLASS_HIERARCHY before MEMBER_SUMMARY, so SIGNATURES moves up by one for a Python class.
    levels = {level.name: level.depth for level in effective_levels("uko-py:Class")}
    assert resolve_for_types([CODE_NODE, PY_CLASS], "SIGNATURES") == levels["SIGNATURES"] == 5
    assert resolve_for_types([PY_CLASS], "DECORATED_SIGNATURES") == levels["DECORATED_SIGNATURES"]
    assert resolve_for_types([PY_CLASS], 7) == 7
    assert resolve_for_types([PY_CLASS], "4") == 4


def test_an_unknown_level_lists_the_valid_names() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_for_types([PY_CLASS], "SIGNATURE")
    message = caught.value.message
    assert "unknown detail level 'SIGNATURE' for" in message
    assert "did you mean SIGNATURES" in message
    assert "valid names:" in message and "FULL_SOURCE" in message and "MODULE_LISTING" in message
    with pytest.raises(UsageError, match=r"valid names: .*TABLE_OF_CONTENTS"):
        validate_depth("NO_SUCH_LEVEL")


def test_validate_depth_accepts_integers_digits_and_known_names() -> None:
    assert validate_depth(0) == 0
    assert validate_depth("9") == 9
    assert validate_depth("FULL_SOURCE") == "FULL_SOURCE"
    assert {"FULL_SOURCE", "SIGNATURES", "MODULE_LISTING"} <= set(all_level_names())
    with pytest.raises(UsageError, match="non-negative"):
        validate_depth(-1)


def test_the_gradient_follows_the_spec_projection_example() -> None:
    # focus=AuthManager, breadth=2, depth=9: distance 0 -> 9, 1 -> 4 (SIGNATURES), 2 -> 0 (MODULE_LISTING)
    assert [gradient(9, d, breadth=2) for d in (0, 1, 2, 3)] == [9, 4, 0, 0]
    assert [gradient(13, d, breadth=3) for d in (0, 1, 2, 3)] == [13, 8, 4, 0]
    assert gradient(11, 2, breadth=2, floor=1) == 1  # a database's TABLE_LISTING floor
    with pytest.raises(ValueError):
        gradient(-1, 0)


@given(st.integers(0, 20), st.integers(0, 10), st.integers(0, 10))
def test_the_gradient_never_rises_with_distance(depth: int, distance: int, breadth: int) -> None:
    here, further = gradient(depth, distance, breadth), gradient(depth, distance + 1, breadth)
    assert 0 <= further <= here <= depth
