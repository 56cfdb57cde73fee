"""SHACL shapes: they parse, use SHACL Core only, carry messages, accept the good fixture
and reject each kind of broken data with the expected constraint component (pyshacl is
the reference validator)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyshacl
import pytest
from rdflib import RDF, Graph, Literal, Namespace, URIRef

from cleveragents.resources import data_path
from cleveragents.tbox import ontology_ntriples, shapes_ntriples
from cleveragents.terms import CA, CAS

FIXTURES = Path(__file__).parent / "fixtures"
# Plain namespaces: rdflib's closed ones warn when pytest probes module attributes.
SH = Namespace("http://www.w3.org/ns/shacl#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")
ID = Namespace("https://cleveragents.ai/id/")
C = Namespace(CA)
S = Namespace(CAS)
UKO = Namespace("https://cleveragents.ai/ontology/uko#")
UKO_CODE = Namespace("https://cleveragents.ai/ontology/uko/code#")
PROV = Namespace("http://www.w3.org/ns/prov#")

# Parameters of the SHACL Core constraint components, targets and shape metadata.
CORE_TERMS = {
    SH[n]
    for n in [
        "NodeShape",
        "PropertyShape",
        "targetClass",
        "targetNode",
        "targetSubjectsOf",
        "targetObjectsOf",
        "path",
        "inversePath",
        "alternativePath",
        "zeroOrMorePath",
        "oneOrMorePath",
        "zeroOrOnePath",
        "class",
        "datatype",
        "nodeKind",
        "IRI",
        "BlankNode",
        "Literal",
        "BlankNodeOrIRI",
        "BlankNodeOrLiteral",
        "IRIOrLiteral",
        "minCount",
        "maxCount",
        "minExclusive",
        "minInclusive",
        "maxExclusive",
        "maxInclusive",
        "minLength",
        "maxLength",
        "pattern",
        "flags",
        "languageIn",
        "uniqueLang",
        "equals",
        "disjoint",
        "lessThan",
        "lessThanOrEquals",
        "not",
        "and",
        "or",
        "xone",
        "node",
        "property",
        "qualifiedValueShape",
        "qualifiedMinCount",
        "qualifiedMaxCount",
        "qualifiedValueShapesDisjoint",
        "closed",
        "ignoredProperties",
        "hasValue",
        "in",
        "message",
        "severity",
        "Violation",
        "Warning",
        "Info",
        "name",
        "description",
        "order",
        "group",
        "deactivated",
    ]
}


@cache
def _shapes() -> Graph:
    return Graph().parse(data=shapes_ntriples(), format="nt")


@cache
def _ontology() -> Graph:
    return Graph().parse(data=ontology_ntriples(), format="nt")


def _good() -> Graph:
    return Graph().parse(FIXTURES / "good.ttl", format="turtle")


@dataclass(frozen=True)
class Result:
    focus: str
    path: str | None
    component: str
    shape: str
    message: str
    severity: str


def _validate(data: Graph, *, focus_on_data: bool = True) -> list[Result]:
    """Validate ``data`` with the ontology alongside, focused on the data's own subjects."""
    graph = Graph()
    for triple in _ontology():
        graph.add(triple)
    for triple in data:
        graph.add(triple)
    focus = sorted({s for s in data.subjects() if isinstance(s, URIRef)}) if focus_on_data else None
    _, report, _ = pyshacl.validate(graph, shacl_graph=_shapes(), inference="none", focus_nodes=focus)
    out = []
    for r in report.subjects(RDF.type, SH.ValidationResult):
        path = report.value(r, SH.resultPath)
        out.append(
            Result(
                focus=str(report.value(r, SH.focusNode)),
                path=str(path) if isinstance(path, URIRef) else None,
                component=str(report.value(r, SH.sourceConstraintComponent)).rsplit("#", 1)[-1],
                shape=str(report.value(r, SH.sourceShape)),
                message=str(report.value(r, SH.resultMessage) or ""),
                severity=str(report.value(r, SH.resultSeverity)).rsplit("#", 1)[-1],
            )
        )
    return out


# ── The shapes themselves ─────────────────────────────────────────


def test_shapes_files_parse() -> None:
    files = sorted(p.name for p in data_path("shapes").glob("*.ttl"))
    assert files == ["ca.ttl", "tbox.ttl", "uko.ttl"]
    assert len(_shapes()) > 500


def test_only_shacl_core_terms_are_used() -> None:
    used = {p for p in _shapes().predicates() if str(p).startswith(str(SH))}
    used |= {o for o in _shapes().objects() if isinstance(o, URIRef) and str(o).startswith(str(SH))}
    assert used - CORE_TERMS == set()


def test_every_shape_has_a_message() -> None:
    g = _shapes()
    shapes = set(g.subjects(RDF.type, SH.NodeShape)) | set(g.objects(None, SH.property))
    for lst in g.objects(None, SH["or"]):
        shapes |= set(g.items(lst))
    shapes |= set(g.objects(None, SH.qualifiedValueShape))
    missing = [str(s) for s in shapes if g.value(s, SH.message) is None]
    assert missing == []


def test_ontology_conforms_to_the_shapes() -> None:
    assert _validate(Graph(), focus_on_data=False) == []


def test_good_fixture_conforms() -> None:
    assert _validate(_good()) == []


def test_good_fixture_conforms_in_a_full_validation() -> None:
    assert _validate(_good(), focus_on_data=False) == []


# ── Broken data ───────────────────────────────────────────────────

Mutation = Callable[[Graph], None]


def _set(s: URIRef, p: URIRef, o: object) -> Mutation:
    def apply(g: Graph) -> None:
        g.set((s, p, o if isinstance(o, URIRef | Literal) else Literal(o)))  # type: ignore[arg-type]

    return apply


def _drop(s: URIRef, p: URIRef) -> Mutation:
    def apply(g: Graph) -> None:
        g.remove((s, p, None))

    return apply


def _both(*mutations: Mutation) -> Mutation:
    def apply(g: Graph) -> None:
        for m in mutations:
            m(g)

    return apply


CASES: list[tuple[str, Mutation, str, str | None, str]] = [
    # (case id, mutation, focus node, result path, constraint component)
    (
        "apply-phase-with-complete-state",
        _both(_set(ID.plan, C.phase, C.ApplyPhase), _set(ID.plan, C.state, C.complete)),
        ID.plan,
        None,
        "OrConstraintComponent",
    ),
    (
        "action-phase-with-queued-state",
        _set(ID.template, C.state, C.queued),
        ID.template,
        None,
        "OrConstraintComponent",
    ),
    (
        "state-outside-enumeration",
        _set(ID.plan, C.state, C.prompt_definition),
        ID.plan,
        C.state,
        "InConstraintComponent",
    ),
    (
        "two-prompt-definition-roots",
        _drop(ID["d-root"], C.supersedes),
        ID.plan,
        None,
        "QualifiedMaxCountConstraintComponent",
    ),
    (
        "plan-without-root-prompt",
        _drop(ID["child-root"], C.belongsToPlan),
        ID.child,
        None,
        "OrConstraintComponent",
    ),
    (
        "decision-without-plan",
        _drop(ID["d-inv"], C.belongsToPlan),
        ID["d-inv"],
        C.belongsToPlan,
        "MinCountConstraintComponent",
    ),
    (
        "decision-with-two-plans",
        lambda g: g.add((ID["d-inv"], C.belongsToPlan, ID.child)),
        ID["d-inv"],
        C.belongsToPlan,
        "MaxCountConstraintComponent",
    ),
    (
        "unknown-decision-type",
        _set(ID["d-inv"], C.decisionType, C.Decision),
        ID["d-inv"],
        C.decisionType,
        "InConstraintComponent",
    ),
    (
        "two-structural-parents",
        lambda g: g.add((ID["d-spawn"], C.parentDecision, ID["d-root"])),
        ID["d-spawn"],
        C.parentDecision,
        "MaxCountConstraintComponent",
    ),
    (
        "non-root-decision-without-parent",
        _drop(ID["d-inv"], C.parentDecision),
        ID["d-inv"],
        None,
        "OrConstraintComponent",
    ),
    (
        "parent-decision-in-another-plan",
        _set(ID["d-spawn"], C.parentDecision, ID["child-root"]),
        ID["d-spawn"],
        None,
        "OrConstraintComponent",
    ),
    (
        "confidence-above-one",
        _set(ID["d-strategy"], C.confidence, Literal("1.5", datatype=XSD.decimal)),
        ID["d-strategy"],
        C.confidence,
        "MaxInclusiveConstraintComponent",
    ),
    (
        "confidence-not-decimal",
        _set(ID["edge-1"], C.confidence, Literal("0.5", datatype=XSD.double)),
        ID["edge-1"],
        C.confidence,
        "DatatypeConstraintComponent",
    ),
    (
        "resolved-by-not-string",
        _set(ID["edge-1"], C.resolvedBy, ID.lsp),
        ID["edge-1"],
        C.resolvedBy,
        "DatatypeConstraintComponent",
    ),
    (
        "resource-name-with-space",
        _set(ID["res-app"], C.name, "local/acme app"),
        ID["res-app"],
        C.name,
        "PatternConstraintComponent",
    ),
    (
        "ulid-lowercase",
        _set(ID["res-app"], C.ulid, "01hxm7c2zk4q7c2b3f2r4vyv6j"),
        ID["res-app"],
        C.ulid,
        "PatternConstraintComponent",
    ),
    (
        "resource-name-without-namespace",
        _set(ID["res-app"], C.name, "acme-app"),
        ID["res-app"],
        C.name,
        "PatternConstraintComponent",
    ),
    (
        "project-name-invalid",
        _set(ID.proj, C.name, "local/"),
        ID.proj,
        C.name,
        "PatternConstraintComponent",
    ),
    (
        "registry-name-invalid",
        _set(ID["lsp-pyright"], C.name, "pyright"),
        ID["lsp-pyright"],
        C.name,
        "PatternConstraintComponent",
    ),
    (
        "user-resource-without-name",
        _drop(ID["res-app"], C.name),
        ID["res-app"],
        None,
        "OrConstraintComponent",
    ),
    (
        "physical-resource-without-location",
        _drop(ID["res-app"], C.location),
        ID["res-app"],
        None,
        "OrConstraintComponent",
    ),
    (
        "resource-type-not-a-type",
        _set(ID["res-app"], C.resourceType, ID.proj),
        ID["res-app"],
        C.resourceType,
        "ClassConstraintComponent",
    ),
    (
        "resource-without-created-at",
        _drop(ID["res-app"], C.createdAt),
        ID["res-app"],
        C.createdAt,
        "MinCountConstraintComponent",
    ),
    (
        "project-links-a-non-resource",
        lambda g: g.add((ID.proj, C.linksResource, ID.plan)),
        ID.proj,
        C.linksResource,
        "ClassConstraintComponent",
    ),
    (
        "commit-negative-revision",
        _set(ID["commit-7"], C.revision, -1),
        ID["commit-7"],
        C.revision,
        "MinInclusiveConstraintComponent",
    ),
    (
        "commit-without-start-time",
        _drop(ID["commit-7"], PROV.startedAtTime),
        ID["commit-7"],
        PROV.startedAtTime,
        "MinCountConstraintComponent",
    ),
    (
        "entity-revision-is-current-not-boolean",
        _set(ID["login-r7"], UKO.isCurrent, "yes"),
        ID["login-r7"],
        UKO.isCurrent,
        "DatatypeConstraintComponent",
    ),
    (
        "two-valid-from",
        lambda g: g.add((ID["login-r7"], UKO.validFrom, Literal("2026-02-01T00:00:00Z", datatype=XSD.dateTime))),
        ID["login-r7"],
        UKO.validFrom,
        "MaxCountConstraintComponent",
    ),
    (
        "source-range-malformed",
        _set(ID.login, UKO.sourceRange, "42-87"),
        ID.login,
        UKO.sourceRange,
        "PatternConstraintComponent",
    ),
    (
        "source-path-not-string",
        _set(ID.login, UKO.sourcePath, 3),
        ID.login,
        UKO.sourcePath,
        "DatatypeConstraintComponent",
    ),
    (
        "parameters-not-string",
        _set(ID.login, UKO_CODE.hasParameters, 2),
        ID.login,
        UKO_CODE.hasParameters,
        "DatatypeConstraintComponent",
    ),
    (
        "correction-mode-unknown",
        _set(ID.corr, C.correctionMode, "rewrite"),
        ID.corr,
        C.correctionMode,
        "InConstraintComponent",
    ),
    (
        "checkpoint-without-plan",
        _drop(ID.chk, C.forPlan),
        ID.chk,
        C.forPlan,
        "MinCountConstraintComponent",
    ),
    (
        "validation-mode-unknown",
        _set(ID["val-tests"], C.validationMode, "sometimes"),
        ID["val-tests"],
        C.validationMode,
        "InConstraintComponent",
    ),
]


@pytest.mark.parametrize(
    ("mutation", "focus", "path", "component"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_broken_data_is_rejected(mutation: Mutation, focus: URIRef, path: URIRef | None, component: str) -> None:
    data = _good()
    mutation(data)
    results = _validate(data)
    violations = [r for r in results if r.severity == "Violation"]
    assert any(
        r.focus == str(focus) and r.component == component and (path is None or r.path == str(path)) for r in violations
    ), violations
    assert all(r.message for r in results)


def test_report_messages_read_well() -> None:
    data = _good()
    _drop(ID["d-root"], C.supersedes)(data)
    (result,) = _validate(data)
    assert result.shape == str(S.PlanRootDecisionShape) or "more than one root" in result.message
    assert "more than one root prompt_definition" in result.message


def test_missing_provenance_is_a_warning_only() -> None:
    data = _good()
    _drop(ID.port, UKO.sourceResource)(data)
    (result,) = _validate(data)
    assert result.severity == "Warning"
    assert result.focus == str(ID.port)


def test_detail_level_needs_depth_or_anchor() -> None:
    data = Graph()
    level = URIRef("https://example.org/x#LEVEL")
    data.add((level, RDF.type, UKO.DetailLevel))
    data.add((level, UKO.levelName, Literal("LEVEL")))
    data.add((level, UKO.inMap, URIRef("https://cleveragents.ai/ontology/uko/code#DetailLevels")))
    (result,) = _validate(data)
    assert result.component == "OrConstraintComponent"
    assert "uko:insertedAfter" in result.message
