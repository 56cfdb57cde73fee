"""Parity on the W3C SHACL Core test suite (as bundled in the pyshacl 0.40.1 sdist).

For every sht:Validate case under core/ (complex, misc, node, path, property, targets,
validation-reports) the compiled validator must report the same set of
(focus node, result path, constraint component, value) as pyshacl on the same data, and
as the manifest's expected report. Blank node labels are compared exactly against pyshacl
(both see the same stored data) and as ``_:*`` against the manifest (whose blank nodes
are the manifest file's own when the data is a separate file).

Every case also runs in the commit-validation modes: with all terms of the data as
focus_nodes (the result must equal the full audit), with the data graph as focus graph
(a subset: literal target nodes are not in a graph's node set), and with empty excluded
graphs (the expanded path patterns must not change anything).
"""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from cleveragents.validation import compile_shapes
from cleveragents.validation.rdfterms import to_ox
from tests.validation.conftest import w3c_cases
from tests.validation.w3c import DATA, Case, keys, run_case

# Cases not run at all. There are none: every core case passes.
EXCLUDED: dict[str, str] = {}

# Cases where pyshacl disagrees with the W3C expected report; the compiled validator
# follows the manifest and the pyshacl comparison is inverted (it must still differ, so
# that a pyshacl fix is noticed).
PYSHACL_DEVIATIONS = {
    "property/uniqueLang-002": (
        'pyshacl activates sh:uniqueLang for "1"^^xsd:boolean; the manifest (and the spec: only the '
        "term true activates it) expects no result"
    ),
}


def _case(case_id: str) -> Case:
    cases = w3c_cases()
    if not cases:
        pytest.skip("W3C SHACL test suite unavailable")
    if case_id in EXCLUDED:
        pytest.skip(EXCLUDED[case_id])
    return cases[case_id]  # type: ignore[return-value]


def test_suite_is_complete(shacl_core_dir: Path) -> None:
    cases = w3c_cases()
    sections = {case_id.split("/")[0] for case_id in cases}
    assert {"complex", "misc", "node", "path", "property", "targets", "validation-reports"} <= sections
    assert len(cases) >= 98
    assert set(PYSHACL_DEVIATIONS) | set(EXCLUDED) <= set(cases)


def test_w3c_case(w3c_case_id: str, shacl_core_dir: Path) -> None:
    case = _case(w3c_case_id)
    out = run_case(case)
    assert keys(out.ours, blank_wildcard=True) == keys(out.expected, blank_wildcard=True), "differs from manifest"
    if w3c_case_id in PYSHACL_DEVIATIONS:
        assert keys(out.ours) != keys(out.reference), "pyshacl now agrees: drop the deviation entry"
    else:
        assert keys(out.ours) == keys(out.reference), "differs from pyshacl"
    assert (not out.ours) == out.expected_conforms
    for expected in out.expected:
        if expected.message:  # core/misc/message-001: sh:message is copied into the result
            wanted = keys([expected], blank_wildcard=True)
            matching = [v for v in out.ours if keys([v], blank_wildcard=True) == wanted]
            assert any(v.message == expected.message for v in matching)


def test_w3c_case_in_commit_modes(w3c_case_id: str, shacl_core_dir: Path, tmp_path: Path) -> None:
    case = _case(w3c_case_id)
    store = ox.Store(str(tmp_path / "store"))  # a real on-disk store
    store.load(path=case.data_path, format=ox.RdfFormat.TURTLE, base_iri=case.data_path.as_uri(), to_graph=DATA)
    compiled = compile_shapes(case.shapes_path.read_bytes(), base_iri=case.shapes_path.as_uri())
    audit = compiled.validate(store, default_graph=[DATA])
    full = keys(audit)

    terms: set[object] = set()
    for q in store.quads_for_pattern(None, None, None, DATA):
        terms.update((q.subject, q.object))
    terms.update(to_ox(n) for s in compiled.targeted for n in s.targets.nodes)
    by_nodes = compiled.validate(store, default_graph=[DATA], focus_nodes=list(terms))
    assert keys(by_nodes) == full
    assert set(by_nodes) == set(audit)  # messages, severities and shapes too

    by_graph = compiled.validate(store, default_graph=[DATA], focus_graphs=[DATA])
    assert keys(by_graph) <= full

    empty = [ox.NamedNode("urn:test:removed"), ox.NamedNode("urn:test:removed-too")]
    assert keys(compiled.validate(store, default_graph=[DATA], excluded_graph=empty[0])) == full
    assert keys(compiled.validate(store, default_graph=[DATA], excluded_graphs=empty, focus_graphs=[DATA])) == keys(
        by_graph
    )
