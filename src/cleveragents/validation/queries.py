"""The SELECT queries the validator runs, assembled from compiled shape bodies.

- audit: per shape, its targets over the whole data graph, then its report groups;
- detect, over a focus set (see detect.py): one *pairs* query scans each focus node's
  outgoing triples once and, joined with small tables, finds the shapes that target the
  node and decides the shapes' scan checks (property shapes that only test and count
  the values of one predicate) by aggregation; then a *check* query per shape with other
  checks, over its targeted nodes, and one query for the sh:class tests of scan checks;
- explain: per failing shape, its report groups over the failing nodes only (a failure
  on counts alone needs none).

Commits are usually valid, so validating a commit costs the pairs query, plus a query
per shape with checks beyond scan checks that targets a node of the commit, plus the
small queries for the subclasses of the target classes and the sub-properties of the
predicates that paths follow backwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyoxigraph as ox

from cleveragents.terms import RDF_TYPE, RDFS_SUBCLASSOF, RDFS_SUBPROPERTYOF
from cleveragents.validation.rdfterms import sparql
from cleveragents.validation.sparql import EXCLUDED

REPORT = "SELECT DISTINCT ?focus ?c ?value ?k WHERE"
TYPE = f"<{RDF_TYPE}>"


def audit_query(targets: str, body: str) -> str:
    return f"{REPORT} {{ {{ SELECT DISTINCT ?this WHERE {{ {targets} }} }} LATERAL {{ {body} }} }}"


# Oxigraph's BIND ignores a substituted variable that no triple pattern matched, so a
# substituted blank node is first matched in any triple of the store.
_ANCHOR = (
    "{ SELECT ?this WHERE { { ?this ?ap ?ao } UNION { ?as ?ap ?this } UNION "
    "{ GRAPH ?ag { ?this ?ap ?ao } } UNION { GRAPH ?ag { ?as ?ap ?this } } } LIMIT 1 }"
)


def explain_query(body: str, nodes: Sequence[Any] | None) -> str:
    """Report groups for the given focus nodes; with ``nodes`` None, ?this is bound by a
    substitution (blank nodes cannot be written in query text) and must be projected."""
    if nodes is None:
        return f"{REPORT.replace('DISTINCT', 'DISTINCT ?this')} {{ {_ANCHOR} LATERAL {{ {body} }} }}"
    values = " ".join(sparql(n) for n in nodes)
    return f"{REPORT} {{ VALUES ?this {{ {values} }} LATERAL {{ {body} }} }}"


def focus_pattern(nodes: Sequence[Any], graphs: Sequence[ox.NamedNode], object_predicates: Sequence[str]) -> str:
    """A group binding ?this to the focus set: the given nodes, every subject of the focus
    graphs, and the (non-literal) objects of their triples whose predicate is one of
    ``object_predicates``. Other objects are left out: a triple changes nothing of its
    object that a shape reads, unless a path goes backwards along its predicate or the
    predicate is a sh:targetObjectsOf."""
    parts = []
    if nodes:
        parts.append("{ VALUES ?this { " + " ".join(sparql(n) for n in nodes) + " } }")
    predicates = " ".join(f"<{p}>" for p in sorted(object_predicates))
    for g in graphs:
        parts.append(f"{{ GRAPH {g} {{ ?this ?fp ?fo }} }}")
        if predicates:
            parts.append(f"{{ VALUES ?fp {{ {predicates} }} GRAPH {g} {{ ?fs ?fp ?this }} FILTER(!isLiteral(?this)) }}")
    return f"{{ SELECT DISTINCT ?this WHERE {{ {' UNION '.join(parts)} }} }}" if parts else ""


def subproperties_query(predicates: Sequence[str]) -> str:
    """The sub-properties of the given predicates, in the data graph."""
    values = " ".join(f"<{p}>" for p in predicates)
    return f"SELECT DISTINCT ?p WHERE {{ VALUES ?q {{ {values} }} ?p <{RDFS_SUBPROPERTYOF}>+ ?q }}"


def closure_query(classes: Sequence[str]) -> str:
    """Every (subclass, class) pair for the target classes, in the data graph."""
    values = " ".join(f"<{c}>" for c in classes)
    return f"SELECT ?sub ?cls WHERE {{ VALUES ?cls {{ {values} }} ?sub <{RDFS_SUBCLASSOF}>* ?cls }}"


# Pseudo-predicates of scan rows that are not triples (see scan_pattern).
ANY = "<urn:cleveragents:validation:any>"
NODE = "<urn:cleveragents:validation:node>"
OBJECT_OF = "<urn:cleveragents:validation:object-of>"


def scan_pattern(
    focus: str,
    *,
    type_as_predicate: bool,
    target_nodes: bool,
    objects_of: Sequence[str],
    excluding: bool,
    kept: Any,
    lateral: bool = False,
) -> str:
    """A sub-SELECT of the scan rows (?this ?p ?key ?o) of the focus set: every outgoing
    triple of each node not held by an excluded graph, with ?key the object of an rdf:type
    triple and ANY otherwise (plus an ANY row per rdf:type triple when ``type_as_predicate``);
    with ``target_nodes``, a row (NODE, the node itself); per ``objects_of`` predicate p,
    a row (OBJECT_OF, p) when the node is an object of p. ``focus`` empty: ?this is
    substituted.

    One lookup of all the node's triples (one seek per graph of the data graph) replaces a
    lookup per shape and predicate. For a big focus set it is a plain join: Oxigraph runs
    it as a loop over the focus nodes at a fraction of LATERAL's cost per node. For a
    small one (``lateral``) it is a LATERAL: the plain join is then planned as a scan of
    the whole data graph (0.7 s against 7 ms for 4 nodes on a million-triple store). The
    excluded triples are subtracted once: MINUS reads the (small) excluded graphs once."""

    def outgoing(predicate: str) -> str:
        return f"LATERAL {{ ?this {predicate} ?o }}" if lateral else f"?this {predicate} ?o"

    # COALESCE makes ?key certainly bound, so that Oxigraph hashes the join on it.
    branches = [f"{{ {focus} {outgoing('?p')} BIND(COALESCE(IF(sameTerm(?p, {TYPE}), ?o, {ANY}), {ANY}) AS ?key) }}"]
    if type_as_predicate:
        branches.append(f"{{ {focus} {outgoing(TYPE)} BIND({TYPE} AS ?p) BIND({ANY} AS ?key) }}")
    if target_nodes:
        branches.append(f"{{ {focus} BIND({NODE} AS ?p) BIND(?this AS ?key) }}")
    for p in objects_of:  # incoming scans can be huge (hubs): stop at the first triple
        sub = f"SELECT ?this WHERE {{ ?dy <{p}> ?this . {kept('?dy', f'<{p}>', '?this')}}} LIMIT 1"
        branches.append(f"{{ {focus} LATERAL {{ {{ {sub} }} }} BIND({OBJECT_OF} AS ?p) BIND(<{p}> AS ?key) }}")
    minus = f"MINUS {{ VALUES ?xg {{ {EXCLUDED} }} GRAPH ?xg {{ ?this ?p ?o }} }} " if excluding else ""
    return f"{{ SELECT ?this ?p ?key ?o WHERE {{ {' UNION '.join(branches)} {minus}}} }}"


def pairs_query(
    scan: str, kinds: Sequence[str], uses: Sequence[str], tests: Sequence[str], later: Sequence[int]
) -> str:
    """The targeted (?this, ?s) pairs of the focus set that fail a scan check, or whose
    shape is in ``later`` (it has checks beyond its scan checks). ?x is the mask of the
    pair's satisfied minimum counts when it fails (?y: the mask of exceeded maximum counts,
    -1 when a value fails a test), else -1 - the number of values of the pair's sampled
    sh:class check (?cv: one of them).

    ``kinds`` are rows (?p ?key ?kd ?tid ?tb ?kc ?kdrop ?kmax): the scan rows of kind ?kd
    are those with that ?p and ?key. They are grouped per node: their distinct values are
    counted (?n), tested with the value test ?tid of ``tests`` (1-based, 0: none; ?tb is
    its block, see _test_switch), and, with ?kc 1, sampled. A kind serves every shape
    that needs it, so a value is tested once per test rather than once per shape. A kind
    with ?kdrop 1 only serves checks that matter when they fail: its groups that pass (no
    failing value, at most ?kmax values, -1: no maximum) are dropped at once.

    ``uses`` are rows (?kd ?s ?lo ?hi ?tg ?nd ?cls ?keep ?bit): kind ?kd is a scan check of
    shape ?s with these counts (?hi -1: no maximum) and this bit in the shape's masks, or a
    target of the shape. ?tg 1: a row makes ?this a target of ?s (a sh:targetClass,
    sh:targetSubjectsOf, ... of the shape, or a value of a checked predicate the shape
    targets the subjects of); ?nd: on a target, the mask of the shape's checks with a
    minimum count; ?cls 1: the check whose values the sh:class test will need. Rows with
    ?keep 0 (checks without a minimum, not sampled) only count when they fail.

    A pair fails on a failing value, on a maximum, or on a minimum, also when no triple
    matched the check (its bit is then missing from the mask of satisfied minimums)."""
    fails = "(sameTerm(?bad, 1) || (?hi >= 0 && ?n > ?hi))"
    per_kind = (
        f"SELECT ?this ?kd ?kdrop ?kmax (COUNT(DISTINCT ?o) AS ?n) (MAX({_test_switch(tests)}) AS ?bad) "
        f"(SAMPLE(IF(sameTerm(?kc, 1), ?o, ?none)) AS ?one) WHERE {{ {scan} "
        f"VALUES (?p ?key ?kd ?tid ?tb ?kc ?kdrop ?kmax) {{ {' '.join(kinds)} }} }} GROUP BY ?this ?kd ?kdrop ?kmax"
    )
    per_pair = (
        "SELECT ?this ?s (MAX(?tg) AS ?t) (MAX(?nd) AS ?need) (MAX(?bad) AS ?vb) "
        "(SUM(IF(?lo > 0 && ?n >= ?lo, ?bit, 0)) AS ?okm) (SUM(IF(?hi >= 0 && ?n > ?hi, ?bit, 0)) AS ?maxm) "
        "(MAX(IF(sameTerm(?cls, 1), ?n, 0)) AS ?cn) (SAMPLE(IF(sameTerm(?cls, 1), ?one, ?none)) AS ?cv) "
        f"WHERE {{ {{ {per_kind} }} FILTER(sameTerm(?kdrop, 0) || sameTerm(?bad, 1) || (?kmax >= 0 && ?n > ?kmax)) "
        f"VALUES (?kd ?s ?lo ?hi ?tg ?nd ?cls ?keep ?bit) {{ {' '.join(uses)} }} "
        f"FILTER(sameTerm(?keep, 1) || {fails}) }} GROUP BY ?this ?s"
    )
    wanted = f" || ?s IN ({', '.join(str(k) for k in later)})" if later else ""
    return (
        f"SELECT ?this ?s ?x ?y ?cv WHERE {{ {{ {per_pair} }} FILTER(sameTerm(?t, 1)) "
        f"BIND(sameTerm(?vb, 1) || ?maxm != 0 || ?okm != ?need AS ?sf) FILTER(?sf{wanted}) "
        "BIND(IF(?sf, ?okm, -1 - ?cn) AS ?x) BIND(IF(sameTerm(?vb, 1), -1, ?maxm) AS ?y) }"
    )


TEST_BLOCK = 8  # tests per block of _test_switch


def _test_switch(tests: Sequence[str]) -> str:
    """1 when the value test numbered ?tid (in block ?tb = (?tid - 1) // TEST_BLOCK) fails,
    else 0. Tests are chosen with sameTerm, much cheaper in Oxigraph than numeric
    comparisons: at most one comparison per block, then per test of the block."""
    blocks = "0"
    for b in range((len(tests) - 1) // TEST_BLOCK, -1, -1):
        chain = "0"
        for tid in range(min(len(tests), (b + 1) * TEST_BLOCK), b * TEST_BLOCK, -1):
            chain = f"IF(sameTerm(?tid, {tid}), IF({tests[tid - 1]}, 1, 0), {chain})"
        blocks = f"IF(sameTerm(?tb, {b}), {chain}, {blocks})"
    return f"IF(sameTerm(?tid, 0), 0, {blocks})"


def check_query(body: str, nodes: Sequence[Any] | None) -> str:
    """The given nodes that violate a check body; with ``nodes`` None, ?this is substituted
    and the query has a solution when it violates."""
    if nodes is None:
        return f"SELECT DISTINCT ?this WHERE {{ {_ANCHOR} LATERAL {{ {body} }} }}"
    values = " ".join(sparql(n) for n in nodes)
    return f"SELECT DISTINCT ?this WHERE {{ VALUES ?this {{ {values} }} LATERAL {{ {body} }} }}"


def class_failures_query(pairs: Sequence[tuple[Any, str]], kept: Any) -> str:
    """The (?v, ?cls) of the given (value, class) pairs where the value is not a SHACL
    instance of the class."""
    rows = " ".join(f"({sparql(v)} <{c}>)" for v, c in pairs)
    match = f"?v {TYPE} ?t . {kept('?v', TYPE, '?t')}?t <{RDFS_SUBCLASSOF}>* ?cls ."
    return f"SELECT ?v ?cls WHERE {{ VALUES (?v ?cls) {{ {rows} }} OPTIONAL {{ {match} }} FILTER(!BOUND(?t)) }}"


def holders_query(predicate: str, nodes: Sequence[Any], kept: Any) -> str:
    """The (?this, ?v) of the given nodes and their values of ``predicate``."""
    p = f"<{predicate}>"
    these = " ".join(sparql(n) for n in nodes)
    return f"SELECT ?this ?v WHERE {{ VALUES ?this {{ {these} }} ?this {p} ?v . {kept('?this', p, '?v')}}}"
