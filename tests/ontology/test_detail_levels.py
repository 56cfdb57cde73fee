"""Effective DetailLevelMaps against the spec's tables (core-concepts.md, "DetailDepth and
DetailLevelMap"). The tables below are transcribed from the spec and are the oracle; the
implementation derives the maps from the ontology data."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.tbox import (
    declared_depth_mismatches,
    effective_levels,
    max_depth,
    ontology_triples,
    resolve_depth,
)


def _table(text: str, origin: str | None = None) -> list[tuple[str, int, str]]:
    rows = []
    for line in text.strip().splitlines():
        parts = line.split()
        depth, name = int(parts[0]), parts[1]
        rows.append((name, depth, parts[2] if len(parts) > 2 else origin))
    return rows


UKO_CODE = _table(
    """
    0 MODULE_LISTING
    1 MODULE_GRAPH
    2 MEMBER_LISTING
    3 MEMBER_SUMMARY
    4 SIGNATURES
    5 SIGNATURES_WITH_DOCS
    6 STRUCTURAL_OUTLINE
    7 KEY_LOGIC
    8 NEAR_COMPLETE
    9 FULL_SOURCE
    """,
    "uko-code:",
)

UKO_OO = _table(
    """
    0 MODULE_LISTING uko-code:
    1 MODULE_GRAPH uko-code:
    2 MEMBER_LISTING uko-code:
    3 CLASS_HIERARCHY uko-oo:
    4 MEMBER_SUMMARY uko-code:
    5 SIGNATURES uko-code:
    6 SIGNATURES_WITH_DOCS uko-code:
    7 VISIBILITY_ANNOTATED uko-oo:
    8 STRUCTURAL_OUTLINE uko-code:
    9 KEY_LOGIC uko-code:
    10 NEAR_COMPLETE uko-code:
    11 FULL_SOURCE uko-code:
    """
)

UKO_PY = _table(
    """
    0 MODULE_LISTING uko-code:
    1 MODULE_GRAPH uko-code:
    2 MEMBER_LISTING uko-code:
    3 CLASS_HIERARCHY uko-oo:
    4 MEMBER_SUMMARY uko-code:
    5 SIGNATURES uko-code:
    6 SIGNATURES_WITH_DOCS uko-code:
    7 DECORATED_SIGNATURES uko-py:
    8 VISIBILITY_ANNOTATED uko-oo:
    9 STRUCTURAL_OUTLINE uko-code:
    10 KEY_LOGIC uko-code:
    11 TYPE_STUBS uko-py:
    12 NEAR_COMPLETE uko-code:
    13 FULL_SOURCE uko-code:
    14 WITH_TESTS uko-py:
    """
)

UKO_DOC = _table(
    """
    0 TITLE_ONLY
    1 TABLE_OF_CONTENTS_L1
    2 TABLE_OF_CONTENTS_L2
    3 FULL_TOC
    4 TOC_WITH_SUMMARIES
    5 SECTION_OVERVIEWS
    6 TOPIC_SENTENCES
    7 PARAGRAPH_SUMMARIES
    8 STRUCTURAL_DETAIL
    9 NEAR_COMPLETE
    10 FULL_CONTENT
    """,
    "uko-doc:",
)

UKO_DATA = _table(
    """
    0 SCHEMA_LISTING
    1 TABLE_LISTING
    2 COLUMN_LISTING
    3 TYPED_COLUMNS
    4 CONSTRAINTS
    5 RELATIONSHIPS
    6 INDEXES_AND_STATS
    7 DDL
    8 DDL_WITH_TRIGGERS
    9 FULL_PROCEDURES
    10 WITH_SAMPLE_DATA
    11 FULL_CATALOG
    """,
    "uko-data:",
)

UKO_INFRA = _table(
    """
    0 SERVICE_LISTING
    1 SERVICE_GRAPH
    2 ENDPOINT_LISTING
    3 ENDPOINT_DETAIL
    4 CONFIG_KEYS
    5 CONFIG_VALUES
    6 RESOURCE_LIMITS
    7 FULL_CONFIG
    8 WITH_DEPLOYMENT
    """,
    "uko-infra:",
)

SPEC_TABLES = {
    "uko-code": UKO_CODE,
    "uko-oo": UKO_OO,
    "uko-py": UKO_PY,
    "uko-doc": UKO_DOC,
    "uko-data": UKO_DATA,
    "uko-infra": UKO_INFRA,
}


@pytest.mark.parametrize(
    ("prefix", "row"),
    [(prefix, row) for prefix, table in SPEC_TABLES.items() for row in table],
    ids=lambda v: v if isinstance(v, str) else f"{v[1]}-{v[0]}",
)
def test_every_spec_row(prefix: str, row: tuple[str, int, str]) -> None:
    name, depth, origin = row
    assert tuple(effective_levels(prefix)[depth]) == (name, depth, origin)


@pytest.mark.parametrize("prefix", sorted(SPEC_TABLES))
def test_whole_map_equals_spec_table(prefix: str) -> None:
    assert [tuple(level) for level in effective_levels(prefix)] == SPEC_TABLES[prefix]


def test_python_ends_with_tests_at_14() -> None:
    levels = effective_levels("uko-py:")
    assert len(levels) == 15
    assert levels[-1] == ("WITH_TESTS", 14, "uko-py:")
    assert max_depth("uko-py") == 14


@pytest.mark.parametrize(
    ("target", "parent"),
    [
        ("uko-func", "uko-code"),
        ("uko-proc", "uko-code"),
        ("uko-ts", "uko-oo"),
        ("uko-java", "uko-oo"),
        ("uko-rs", "uko-oo"),
        ("uko-go", "uko-oo"),
    ],
)
def test_maps_without_own_levels_inherit_unchanged(target: str, parent: str) -> None:
    assert effective_levels(target) == effective_levels(parent)


def test_declared_depths_agree_with_computed_ones() -> None:
    assert declared_depth_mismatches() == []


@pytest.mark.parametrize(
    ("target", "name", "depth"),
    [
        ("uko-py:Module", "SIGNATURES", 5),
        ("uko-py:Module", "WITH_TESTS", 14),
        ("uko-py:Class", "VISIBILITY_ANNOTATED", 8),
        ("uko-oo:Method", "SIGNATURES", 5),
        ("uko-code:Callable", "SIGNATURES", 4),
        ("uko-func:PureFunction", "STRUCTURAL_OUTLINE", 6),
        ("uko-proc:Procedure", "SIGNATURES_WITH_DOCS", 5),
        ("uko-doc:Section", "FULL_TOC", 3),
        ("uko-data:Table", "TYPED_COLUMNS", 3),
        ("uko-infra:Service", "CONFIG_KEYS", 4),
        ("uko-java:Class", "CLASS_HIERARCHY", 3),
        ("uko-rs:Trait", "FULL_SOURCE", 11),
        ("uko-ts:Interface", "KEY_LOGIC", 9),
    ],
)
def test_named_level_resolves_for_type(target: str, name: str, depth: int) -> None:
    assert resolve_depth(target, name) == depth


def test_raw_integers_pass_through() -> None:
    assert resolve_depth("uko-py:Module", 4) == 4
    assert resolve_depth("uko-doc:Section", 99) == 99
    assert resolve_depth("uko:Container", "7") == 7


def test_negative_depth_is_rejected() -> None:
    with pytest.raises(ValidationError):
        resolve_depth("uko-py:Module", -1)


def test_unknown_level_names_the_closest_ones() -> None:
    with pytest.raises(NotFoundError) as info:
        resolve_depth("uko-py:Module", "SIGNATURE")
    assert "SIGNATURES" in info.value.suggestions


def test_level_of_another_domain_is_not_found() -> None:
    with pytest.raises(NotFoundError):
        resolve_depth("uko-data:Table", "SIGNATURES")


def test_layer0_map_has_no_named_levels() -> None:
    assert effective_levels("uko") == []
    with pytest.raises(NotFoundError):
        resolve_depth("uko:Container", "SIGNATURES")


# ── Extensions: the same computation applies to a user's module ──────

TF = "https://cleveragents.ai/ontology/uko/infra/terraform#"
_EXTENSION = f"""
@prefix uko: <https://cleveragents.ai/ontology/uko#> .
@prefix uko-infra: <https://cleveragents.ai/ontology/uko/infra#> .
@prefix uko-tf: <{TF}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
uko-tf:Variable a owl:Class ; rdfs:subClassOf uko-infra:ConfigKey .
uko-tf:Resource a owl:Class ; rdfs:subClassOf uko:Container .
uko-tf:DetailLevels a uko:DetailLevelMap ;
    uko:forNamespace "{TF}"^^xsd:anyURI ; uko:parentMap uko-infra:DetailLevels .
uko-tf:PROVIDERS a uko:DetailLevel ; uko:inMap uko-tf:DetailLevels ;
    uko:levelName "PROVIDERS" ; uko:insertedAfter uko-infra:SERVICE_LISTING ; uko:levelDepth 1 .
uko-tf:MODULES a uko:DetailLevel ; uko:inMap uko-tf:DetailLevels ;
    uko:levelName "MODULES" ; uko:insertedAfter uko-infra:SERVICE_LISTING ; uko:levelDepth 2 .
uko-tf:PLAN_OUTPUT a uko:DetailLevel ; uko:inMap uko-tf:DetailLevels ;
    uko:levelName "PLAN_OUTPUT" ; uko:insertedAfter uko-tf:MODULES .
"""


def _with_extension(text: str = _EXTENSION) -> list[ox.Triple]:
    extra = [q.triple for q in ox.parse(text, format=ox.RdfFormat.TURTLE)]
    return [*ontology_triples(), *extra]


def test_extension_insertions_renumber_later_levels() -> None:
    names = [level.name for level in effective_levels(TF, _with_extension())]
    assert names[:5] == ["SERVICE_LISTING", "PROVIDERS", "MODULES", "PLAN_OUTPUT", "SERVICE_GRAPH"]
    assert effective_levels(TF, _with_extension())[-1] == ("WITH_DEPLOYMENT", 11, "uko-infra:")


def test_extension_declared_depths_are_checked() -> None:
    assert declared_depth_mismatches(_with_extension()) == []
    stale = _EXTENSION.replace("uko:levelDepth 2", "uko:levelDepth 5")
    assert len(declared_depth_mismatches(_with_extension(stale))) == 1


def test_extension_type_uses_its_own_map() -> None:
    triples = _with_extension()
    assert resolve_depth(TF + "Resource", "SERVICE_GRAPH", triples) == 4


def test_class_without_map_falls_back_to_nearest_superclass_map() -> None:
    triples = _with_extension()
    # uko-tf has a map here, so test a class in a namespace without one.
    extra = """
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    <https://example.org/x#Widget> a owl:Class ;
        rdfs:subClassOf <https://cleveragents.ai/ontology/uko/py#Class> .
    """
    triples += [q.triple for q in ox.parse(extra, format=ox.RdfFormat.TURTLE)]
    assert resolve_depth("https://example.org/x#Widget", "WITH_TESTS", triples) == 14


def test_unknown_anchor_is_reported() -> None:
    bad = _EXTENSION.replace("uko:insertedAfter uko-tf:MODULES", "uko:insertedAfter uko-tf:NOPE")
    with pytest.raises(ValidationError, match="anchors"):
        effective_levels(TF, _with_extension(bad))


def test_redefining_an_inherited_name_is_reported() -> None:
    bad = _EXTENSION.replace('uko:levelName "PROVIDERS"', 'uko:levelName "SERVICE_GRAPH"')
    with pytest.raises(ValidationError, match="defined twice"):
        effective_levels(TF, _with_extension(bad))
