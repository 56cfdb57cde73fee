"""The ontology modules: presence, headers, documentation, hierarchy, core vocabulary."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.errors import NotFoundError
from cleveragents.resources import data_path
from cleveragents.tbox import (
    list_modules,
    load_ontology,
    load_shapes,
    module_by_prefix,
    module_of,
    ontology_triples,
    show_term,
    superclasses,
    superproperties,
    tbox_closure,
)
from cleveragents.terms import CA, OWL, P_PLAN, PREFIXES, PROV, RDF_TYPE, RDFS, UKO

UKO_PREFIXES = [p for p in PREFIXES if p == "uko" or p.startswith("uko-")]
LAYERS = {
    "uko": 0,
    "uko-code": 1,
    "uko-doc": 1,
    "uko-data": 1,
    "uko-infra": 1,
    "uko-oo": 2,
    "uko-func": 2,
    "uko-proc": 2,
    "uko-py": 3,
    "uko-ts": 3,
    "uko-rs": 3,
    "uko-java": 3,
    "uko-go": 3,
}
TERM_TYPES = {
    OWL + "Class",
    OWL + "ObjectProperty",
    OWL + "DatatypeProperty",
    OWL + "AnnotationProperty",
}


def _declared_terms() -> dict[str, str]:
    """Every class and property declared in the ontology -> its OWL type."""
    return {
        t.subject.value: t.object.value
        for t in ontology_triples()
        if t.predicate.value == RDF_TYPE and t.object.value in TERM_TYPES
    }


def _objects(subject: str, predicate: str) -> set[str]:
    return {t.object.value for t in ontology_triples() if t.subject.value == subject and t.predicate.value == predicate}


def test_data_folders_resolve() -> None:
    for name in ("ontology", "shapes", "queries"):
        assert data_path(name).is_dir()
    with pytest.raises(ValueError):
        data_path("src")


@pytest.mark.parametrize("prefix", [*UKO_PREFIXES, "ca"])
def test_every_module_exists_and_parses(prefix: str) -> None:
    module = module_by_prefix(prefix)
    assert module.path == data_path("ontology") / f"{prefix}.ttl"
    assert module.namespace == PREFIXES[prefix]
    assert module.iri == PREFIXES[prefix].rstrip("#")
    assert module.label and module.version
    assert list(ox.parse(path=str(module.path), format=ox.RdfFormat.TURTLE))


@pytest.mark.parametrize("prefix", UKO_PREFIXES)
def test_uko_module_layers_and_imports(prefix: str) -> None:
    module = module_by_prefix(prefix)
    assert module.layer == LAYERS[prefix]
    by_iri = {m.iri: m for m in list_modules()}
    if prefix == "uko":
        assert module.imports == ()
    for parent in module.imports:
        assert by_iri[parent].layer == module.layer - 1  # type: ignore[operator]


def test_modules_are_listed_parents_first() -> None:
    seen: set[str] = set()
    for module in list_modules():
        assert set(module.imports) <= seen, module.prefix
        seen.add(module.iri)


def test_ca_imports_layer0() -> None:
    assert module_by_prefix("ca:").imports == (PREFIXES["uko"].rstrip("#"),)


def test_unknown_prefix() -> None:
    with pytest.raises(NotFoundError):
        module_by_prefix("uko-cobol")


def test_every_class_and_property_has_label_and_comment() -> None:
    missing = [
        iri for iri in _declared_terms() if not _objects(iri, RDFS + "label") or not _objects(iri, RDFS + "comment")
    ]
    assert missing == []


def test_every_named_individual_has_label_and_comment() -> None:
    individuals = {
        t.subject.value
        for t in ontology_triples()
        if t.predicate.value == RDF_TYPE and t.object.value == OWL + "NamedIndividual"
    }
    assert len(individuals) > 150
    missing = [i for i in individuals if not _objects(i, RDFS + "label") or not _objects(i, RDFS + "comment")]
    assert missing == []


def test_terms_live_in_their_modules_namespace() -> None:
    for iri in _declared_terms():
        module = module_of(iri)
        if iri.startswith((PROV, P_PLAN, "http://purl.org/vocab/vann/")):
            continue  # declared subsets of external vocabularies
        assert module is not None, iri
        assert show_term(iri).module == module.prefix, iri


# ── The spec's transcribed vocabulary ─────────────────────────────

SPEC_TERMS = [
    "uko:InformationUnit",
    "uko:Container",
    "uko:Atom",
    "uko:Annotation",
    "uko:Boundary",
    "uko:contains",
    "uko:references",
    "uko:dependsOn",
    "uko:hasRendering",
    "uko:renderingDepth",
    "uko:hasFullContent",
    "uko:sourceResource",
    "uko:sourcePath",
    "uko:sourceRange",
    "uko:validFrom",
    "uko:validUntil",
    "uko:isCurrent",
    "uko:isRevisionOf",
    "uko:implicitSiblingOf",
    "uko:implicitContains",
    "uko:implicitDependsOn",
    "uko-code:Module",
    "uko-code:Callable",
    "uko-code:TypeDefinition",
    "uko-code:TestCase",
    "uko-code:Import",
    "uko-code:hasReturnType",
    "uko-code:hasParameters",
    "uko-code:testsCallable",
    "uko-doc:Document",
    "uko-doc:Part",
    "uko-doc:Chapter",
    "uko-doc:Section",
    "uko-doc:Subsection",
    "uko-doc:Paragraph",
    "uko-doc:CodeBlock",
    "uko-doc:Figure",
    "uko-doc:Table",
    "uko-doc:BlockQuote",
    "uko-doc:ListBlock",
    "uko-doc:Footnote",
    "uko-doc:Citation",
    "uko-doc:Comment",
    "uko-doc:TableOfContents",
    "uko-doc:Index",
    "uko-doc:Glossary",
    "uko-doc:discussesTopic",
    "uko-doc:cites",
    "uko-doc:crossReferences",
    "uko-doc:precedes",
    "uko-doc:headingLevel",
    "uko-doc:headingText",
    "uko-doc:wordCount",
    "uko-doc:language",
    "uko-doc:topicKeywords",
    "uko-data:Database",
    "uko-data:Schema",
    "uko-data:Table",
    "uko-data:View",
    "uko-data:Column",
    "uko-data:StoredProcedure",
    "uko-data:Trigger",
    "uko-data:Migration",
    "uko-data:Constraint",
    "uko-data:Index",
    "uko-data:ColumnComment",
    "uko-data:ForeignKey",
    "uko-data:APIEndpoint",
    "uko-data:foreignKeyTo",
    "uko-data:viewReferences",
    "uko-data:procedureAccesses",
    "uko-data:triggerFires",
    "uko-data:migrationAlters",
    "uko-data:dataType",
    "uko-data:isNullable",
    "uko-data:isPrimaryKey",
    "uko-data:rowEstimate",
    "uko-data:viewDefinition",
    "uko-data:procedureBody",
    "uko-infra:Service",
    "uko-infra:ConfigBlock",
    "uko-infra:DeploymentUnit",
    "uko-infra:ConfigKey",
    "uko-infra:EnvironmentVariable",
    "uko-infra:Endpoint",
    "uko-infra:Port",
    "uko-infra:connectsTo",
    "uko-infra:exposes",
    "uko-oo:Class",
    "uko-oo:Interface",
    "uko-oo:Method",
    "uko-oo:Attribute",
    "uko-oo:inheritsFrom",
    "uko-oo:implements",
    "uko-func:PureFunction",
    "uko-func:TypeClass",
    "uko-func:Monad",
    "uko-py:Module",
]

ANALYZER_TERMS = [
    "uko-code:calls",
    "uko-code:imports",
    "uko-code:Package",
    "uko-code:Field",
    "uko-code:hasDecorator",
    "uko-code:visibility",
    "uko-code:modifiers",
    "uko-code:qualifiedName",
    "uko:contentHash",
    "uko:hasParseErrors",
]


@pytest.mark.parametrize("term", SPEC_TERMS + ANALYZER_TERMS)
def test_spec_and_analyzer_terms_are_declared(term: str) -> None:
    assert show_term(term).kind in {"class", "object property", "datatype property"}


@pytest.mark.parametrize(
    ("term", "domain", "range_"),
    [
        ("uko:contains", "uko:Container", "uko:InformationUnit"),
        ("uko:renderingDepth", "uko:InformationUnit", "xsd:nonNegativeInteger"),
        ("uko:validFrom", "uko:InformationUnit", "xsd:dateTime"),
        ("uko-code:testsCallable", "uko-code:TestCase", "uko-code:Callable"),
        ("uko-doc:cites", "uko:InformationUnit", "uko-doc:Citation"),
        ("uko-data:foreignKeyTo", "uko-data:Column", "uko-data:Column"),
        ("uko-data:rowEstimate", "uko-data:Table", "xsd:long"),
        ("uko-infra:exposes", "uko-infra:Service", "uko-infra:Endpoint"),
        ("uko-oo:implements", "uko-oo:Class", "uko-oo:Interface"),
    ],
)
def test_spec_domains_and_ranges(term: str, domain: str, range_: str) -> None:
    info = show_term(term)
    assert info.domains == (show_term(domain).iri if ":" in domain and not domain.startswith("xsd") else domain,)
    expected_range = (
        "http://www.w3.org/2001/XMLSchema#" + range_[4:] if range_.startswith("xsd:") else show_term(range_).iri
    )
    assert info.ranges == (expected_range,)


# ── Hierarchies reach layer 0 (the universal view) ────────────────

LAYER0_CLASSES = {UKO + c for c in ("InformationUnit", "Container", "Atom", "Annotation", "Boundary")}


def test_every_uko_class_reaches_information_unit() -> None:
    for iri, kind in _declared_terms().items():
        if kind != OWL + "Class" or not iri.startswith(UKO.rstrip("#")):
            continue
        if iri in (UKO + "DetailLevelMap", UKO + "DetailLevel"):
            continue  # metadata about renderings, not information units
        assert UKO + "InformationUnit" in superclasses(iri), iri


@pytest.mark.parametrize(
    ("prop", "root"),
    [
        ("uko-code:calls", "uko:dependsOn"),
        ("uko-code:imports", "uko:dependsOn"),
        ("uko-proc:includes", "uko:dependsOn"),
        ("uko-ts:reExports", "uko:dependsOn"),
        ("uko-oo:inheritsFrom", "uko:dependsOn"),
        ("uko-oo:implements", "uko:dependsOn"),
        ("uko-oo:overrides", "uko:dependsOn"),
        ("uko-code:testsCallable", "uko:dependsOn"),
        ("uko-data:foreignKeyTo", "uko:dependsOn"),
        ("uko-infra:connectsTo", "uko:dependsOn"),
        ("uko-rs:implementsTrait", "uko:dependsOn"),
        ("uko-java:throws", "uko:dependsOn"),
        ("uko-oo:hasMethod", "uko:contains"),
        ("uko-oo:hasAttribute", "uko:contains"),
        ("uko:implicitContains", "uko:contains"),
        ("uko-doc:discussesTopic", "uko:references"),
        ("uko-doc:linksTo", "uko:references"),
        ("uko-code:referencesType", "uko:references"),
    ],
)
def test_relationship_chains_reach_layer0(prop: str, root: str) -> None:
    assert show_term(root).iri in superproperties(show_term(prop).iri)


def test_every_uko_object_property_is_rooted_or_deliberately_standalone() -> None:
    roots = {UKO + "contains", UKO + "references", UKO + "dependsOn"}
    standalone = {
        UKO + "sourceResource",
        UKO + "isRevisionOf",
        UKO + "parentMap",
        UKO + "inMap",
        UKO + "insertedAfter",
        show_term("uko-doc:precedes").iri,
        show_term("uko-infra:exposes").iri,
    }
    for iri, kind in _declared_terms().items():
        if kind == OWL + "ObjectProperty" and iri.startswith(UKO.rstrip("#")) and iri not in standalone:
            assert superproperties(iri) & roots, iri


def test_layer3_classes_specialize_layer_2_or_1() -> None:
    assert show_term("uko-oo:Class").iri in superclasses(show_term("uko-py:Class").iri)
    assert show_term("uko-code:Module").iri in superclasses(show_term("uko-py:Module").iri)
    assert show_term("uko-oo:Interface").iri in superclasses(show_term("uko-rs:Trait").iri)
    assert show_term("uko-func:TypeClass").iri in superclasses(show_term("uko-rs:Trait").iri)
    assert show_term("uko-oo:Method").iri in superclasses(show_term("uko-java:Method").iri)


def test_closure_is_reflexive_and_transitive() -> None:
    pairs = {(t.subject.value, t.predicate.value, t.object.value) for t in tbox_closure()}
    py_class = show_term("uko-py:Class").iri
    assert (py_class, RDFS + "subClassOf", py_class) in pairs
    assert (py_class, RDFS + "subClassOf", UKO + "Container") in pairs
    assert (py_class, RDFS + "subClassOf", UKO + "InformationUnit") in pairs
    calls = show_term("uko-code:calls").iri
    assert (calls, RDFS + "subPropertyOf", UKO + "dependsOn") in pairs
    assert (CA + "belongsToPlan", RDFS + "subPropertyOf", PROV + "wasInfluencedBy") in pairs


def test_universal_view_query_with_materialized_closure() -> None:
    """?x a uko:Container finds subclass instances once the closure is next to the data."""
    store = ox.Store()
    g = ox.NamedNode("https://cleveragents.ai/graph/tbox-closure")
    store.extend([ox.Quad(t.subject, t.predicate, t.object, g) for t in tbox_closure()])
    ex = "https://example.org/"
    store.update(
        f"""INSERT DATA {{
          <{ex}A> a <{show_term("uko-py:Class").iri}> .
          <{ex}T> a <{show_term("uko-data:Table").iri}> .
          <{ex}A> <{show_term("uko-oo:inheritsFrom").iri}> <{ex}B> .
          <{ex}T> <{show_term("uko-data:foreignKeyTo").iri}> <{ex}B> .
        }}"""
    )
    query = f"""
        SELECT ?x WHERE {{
          ?x a ?c . GRAPH <{g.value}> {{ ?c <{RDFS}subClassOf> <{UKO}Container> }}
          ?x ?p <{ex}B> . GRAPH <{g.value}> {{ ?p <{RDFS}subPropertyOf> <{UKO}dependsOn> }}
        }} ORDER BY ?x"""
    assert [row["x"].value for row in store.query(query)] == [f"{ex}A", f"{ex}T"]  # type: ignore[union-attr,index]


# ── Core module ───────────────────────────────────────────────────

DECISION_TYPES = [
    "prompt_definition",
    "invariant_enforced",
    "strategy_choice",
    "implementation_choice",
    "resource_selection",
    "subplan_spawn",
    "subplan_parallel_spawn",
    "tool_invocation",
    "error_recovery",
    "validation_response",
    "user_intervention",
]


def test_all_decision_types_present() -> None:
    declared = {
        t.subject.value
        for t in ontology_triples()
        if t.predicate.value == RDF_TYPE and t.object.value == CA + "DecisionType"
    }
    assert declared == {CA + name for name in DECISION_TYPES}
    for name in DECISION_TYPES:
        assert _objects(CA + name, CA + "code") == {name}


def test_phases_and_allowed_states_follow_the_spec() -> None:
    allowed = {
        phase: {s.removeprefix(CA) for s in _objects(CA + phase, CA + "allowsState")}
        for phase in ("ActionPhase", "StrategizePhase", "ExecutePhase", "ApplyPhase")
    }
    assert allowed == {
        "ActionPhase": {"available", "archived"},
        "StrategizePhase": {"queued", "processing", "errored", "complete", "cancelled"},
        "ExecutePhase": {"queued", "processing", "errored", "complete", "cancelled"},
        "ApplyPhase": {"queued", "processing", "errored", "applied", "constrained", "cancelled"},
    }
    terminal = {s for s in ("errored", "complete", "cancelled", "applied", "constrained")}
    for state in terminal:
        assert _objects(CA + state, CA + "isTerminal") == {"true"}
    assert _objects(CA + "queued", CA + "isTerminal") == {"false"}


@pytest.mark.parametrize(
    ("cls", "prov_class"),
    [
        ("Resource", "Entity"),
        ("Project", "Entity"),
        ("Plan", "Plan"),
        ("PhaseRun", "Activity"),
        ("Action", "Plan"),
        ("Decision", "Entity"),
        ("Commit", "Activity"),
        ("CorrectionAttempt", "Activity"),
        ("Checkpoint", "Entity"),
        ("EntityRevision", "Entity"),
        ("AuditEvent", "Entity"),
        ("Actor", "SoftwareAgent"),
    ],
)
def test_core_classes_align_with_prov(cls: str, prov_class: str) -> None:
    assert PROV + prov_class in superclasses(CA + cls)


REQUIRED_CA_TERMS = [
    "Resource",
    "ResourceType",
    "Project",
    "Namespace",
    "Plan",
    "Decision",
    "DecisionType",
    "Commit",
    "EntityRevision",
    "name",
    "namespace",
    "resourceType",
    "location",
    "contentHash",
    "createdAt",
    "linksResource",
    "confidence",
    "resolvedBy",
    "parentResource",
    "parentDecision",
    "influencedBy",
    "supersedes",
    "belongsToPlan",
    "revision",
    "message",
    "cause",
    "externalId",
    "addedCount",
    "removedCount",
    "revisionOf",
]


@pytest.mark.parametrize("local", REQUIRED_CA_TERMS)
def test_core_terms_other_components_use(local: str) -> None:
    assert show_term(f"ca:{local}").module == "ca"


def test_builtin_resource_types_and_hierarchy() -> None:
    def rt(name: str) -> str:
        return f"{CA}type-{name}"

    for name in ("git-checkout", "git", "fs-mount", "fs-directory"):
        assert _objects(rt(name), CA + "userAddable") == {"true"}, name
    assert _objects(rt("git-commit"), CA + "allowedParentType") == {
        rt("git-branch"),
        rt("git"),
        rt("commit"),
    }
    assert _objects(rt("devcontainer-instance"), CA + "inheritsType") == {rt("container-instance")}
    assert _objects(rt("aws-vpc"), CA + "inheritsType") == {rt("cloud-network")}
    virtual = {
        "file",
        "directory",
        "symlink",
        "commit",
        "branch",
        "tag",
        "remote",
        "submodule",
        "tree",
    }
    for name in virtual:
        assert _objects(rt(name), CA + "isVirtual") == {"true"}, name
    assert _objects(rt("git-checkout"), CA + "sandboxStrategy") == {"git_worktree"}


def test_show_term_reports_definition() -> None:
    info = show_term("uko-code:calls")
    assert info.kind == "object property"
    assert info.label == "calls"
    assert info.supers == (UKO + "dependsOn",)
    assert info.module == "uko-code"
    container = show_term("uko:Container")
    assert container.kind == "class"
    assert show_term("uko-code:Module").iri in container.subs
    individual = show_term("ca:prompt_definition")
    assert individual.kind == "individual"
    assert individual.types == (CA + "DecisionType",)


def test_show_term_suggests_close_matches() -> None:
    with pytest.raises(NotFoundError) as info:
        show_term("uko-code:cals")
    assert show_term("uko-code:calls").iri in info.value.suggestions


def test_load_replaces_graph_content(tmp_path: Path) -> None:
    store = ox.Store(str(tmp_path / "db"))
    graph = ox.NamedNode("https://cleveragents.ai/graph/ontology")
    shapes = ox.NamedNode("https://cleveragents.ai/graph/shapes")
    n = load_ontology(store, graph)
    assert n == len(store) == len(ontology_triples())
    assert load_ontology(store, graph) == n  # reloading replaces: no copies accumulate
    assert len(store) == n
    s = load_shapes(store, shapes)
    assert load_shapes(store, shapes) == s  # shapes have blank nodes; still no copies
    assert len(store) == n + s
    extra = ox.Triple(ox.NamedNode("https://example.org/C"), ox.NamedNode(RDF_TYPE), ox.NamedNode(OWL + "Class"))
    assert load_ontology(store, graph, [extra]) == n + 1
    assert len(store) == n + s + 1


def test_ontology_has_no_blank_nodes() -> None:
    # Stable triples across reloads and exact diffs between ontology versions.
    assert not [
        t for t in ontology_triples() if isinstance(t.subject, ox.BlankNode) or isinstance(t.object, ox.BlankNode)
    ]
