"""The SELECT queries the validator runs, assembled from compiled shape bodies.

- audit: per shape, its targets over the whole data graph, then its report groups;
- detect: one query for all shapes over a focus set: the focus nodes are computed once,
  dispatched to the shapes that target them (one rdf:type lookup and one scan of the
  node's outgoing triples, joined with small tables), and each (node, shape) pair runs
  the shape's merged check groups; the result is the failing pairs;
- explain: per failing shape, its report groups over the failing nodes only.

Commits are usually valid, so validating a commit costs one detect query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyoxigraph as ox

from cleveragents.terms import RDF_TYPE, RDFS_SUBCLASSOF
from cleveragents.validation.rdfterms import sparql

REPORT = "SELECT DISTINCT ?focus ?c ?value ?k WHERE"
TYPE = f"<{RDF_TYPE}>"


def audit_query(targets: str, body: str) -> str:
    return f"{REPORT} {{ {{ SELECT DISTINCT ?this WHERE {{ {targets} }} }} LATERAL {{ {body} }} }}"


def explain_query(body: str, nodes: Sequence[Any] | None) -> str:
    """Report groups for the given focus nodes; with ``nodes`` None, ?this is bound by a
    substitution (blank nodes cannot be written in query text) and must be projected."""
    if nodes is None:
        # Oxigraph's BIND ignores a substituted variable that no triple pattern matched, so
        # the blank node is first matched in any triple of the store.
        anchor = (
            "{ SELECT ?this WHERE { { ?this ?ap ?ao } UNION { ?as ?ap ?this } UNION "
            "{ GRAPH ?ag { ?this ?ap ?ao } } UNION { GRAPH ?ag { ?as ?ap ?this } } } LIMIT 1 }"
        )
        return f"{REPORT.replace('DISTINCT', 'DISTINCT ?this')} {{ {anchor} LATERAL {{ {body} }} }}"
    values = " ".join(sparql(n) for n in nodes)
    return f"{REPORT} {{ VALUES ?this {{ {values} }} LATERAL {{ {body} }} }}"


def focus_pattern(nodes: Sequence[Any], graphs: Sequence[ox.NamedNode]) -> str:
    """A group binding ?this to the focus set: the given nodes, plus every subject and
    non-literal object of the focus graphs."""
    parts = []
    if nodes:
        parts.append("{ VALUES ?this { " + " ".join(sparql(n) for n in nodes) + " } }")
    for g in graphs:
        parts.append(f"{{ GRAPH {g} {{ ?this ?fp ?fo }} }}")
        parts.append(f"{{ GRAPH {g} {{ ?fs ?fp ?this }} FILTER(!isLiteral(?this)) }}")
    return f"{{ SELECT DISTINCT ?this WHERE {{ {' UNION '.join(parts)} }} }}" if parts else ""


def closure_query(classes: Sequence[str]) -> str:
    """Every (subclass, class) pair for the target classes, in the data graph."""
    values = " ".join(f"<{c}>" for c in classes)
    return f"SELECT ?sub ?cls WHERE {{ VALUES ?cls {{ {values} }} ?sub <{RDFS_SUBCLASSOF}>* ?cls }}"


def dispatch_pattern(
    classes: Sequence[tuple[str, int]],
    subjects_of: Sequence[tuple[str, int]],
    objects_of: Sequence[tuple[str, int]],
    nodes: Sequence[tuple[str, int]],
    kept: Any,
) -> str:
    """Groups binding ?s to each shape index that targets the bound ?this. ``kept`` is the
    code generator's excluded-graph filter for a triple pattern."""
    groups = []
    if classes:
        rows = " ".join(f"(<{c}> {k})" for c, k in classes)
        groups.append(f"{{ ?this {TYPE} ?dt . {kept('?this', TYPE, '?dt')}VALUES (?dt ?s) {{ {rows} }} }}")
    if subjects_of:
        rows = " ".join(f"(<{p}> {k})" for p, k in subjects_of)
        groups.append(f"{{ ?this ?dp ?dx . {kept('?this', '?dp', '?dx')}VALUES (?dp ?s) {{ {rows} }} }}")
    for p, k in objects_of:  # incoming scans can be huge (hubs): stop at the first triple
        sub = f"SELECT ?this WHERE {{ ?dy <{p}> ?this . {kept('?dy', f'<{p}>', '?this')}}} LIMIT 1"
        groups.append(f"{{ {{ {sub} }} BIND({k} AS ?s) }}")
    for node, k in nodes:
        groups.append(f"{{ FILTER(sameTerm(?this, {node})) BIND({k} AS ?s) }}")
    return " UNION ".join(groups)


def detect_query(focus: str, dispatch: str, checks: Sequence[tuple[int, str]]) -> str:
    """The failing (?this, ?s) pairs of the focus set."""
    switch = " UNION ".join(f"{{ {{ FILTER(?s = {k}) }} LATERAL {{ {body} }} }}" for k, body in checks)
    pairs = f"{{ SELECT DISTINCT ?this ?s WHERE {{ {focus} LATERAL {{ {dispatch} }} }} }}"
    return f"SELECT DISTINCT ?this ?s WHERE {{ {pairs} LATERAL {{ {switch} }} }}"
