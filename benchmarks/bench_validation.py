"""Speed of the compiled SHACL validator on a commit-sized delta.

A commit of ~10k triples (1,500 entities of 10 classes, 7 triples each) is validated
against 10 shapes (5 class-targeted, 5 targetSubjectsOf; minCount, maxCount, datatype,
class, nodeKind, pattern, languageIn, in, minInclusive) in three settings:

- staging: an in-memory Store holding the delta, the nodes it references and the
  ontology (the design's "stage the delta plus its neighbourhood");
- disk: an on-disk Store with 100k entities (700k triples) plus the delta in its own graph;
- each with focus_graphs=[delta] and with focus_nodes=<the delta's subjects>.

pyshacl on an rdflib graph of the same staging data is timed for comparison.

With ``--commits``, the product's commit engine runs bear_data histories instead (the
product shapes, the store's six-graph data graph) and each commit's validation time is
printed with its share of the commit: ``uko`` data is targeted by the UKO shapes,
``dbpedia`` data by none.

    PYTHONPATH=src python benchmarks/bench_validation.py [--base 100000] [--repeat 5]
    PYTHONPATH=src python benchmarks/bench_validation.py --commits [--commit-base 10000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import pyoxigraph as ox

from cleveragents.validation import compile_shapes
from cleveragents.validation.reference import pyshacl_validate

EX = "http://example.org/bench/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
SUBCLASS = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#subClassOf")
CLASSES = [f"C{i}" for i in range(10)]

SHAPES = (
    f"""
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <{EX}> .
"""
    + "\n".join(
        f"""
ex:Shape{i} a sh:NodeShape ; sh:targetClass ex:C{i} ;
  sh:property [ sh:path ex:name ; sh:minCount 1 ; sh:maxCount 1 ; sh:datatype xsd:string ] ;
  sh:property [ sh:path ex:size ; sh:datatype xsd:integer ; sh:minInclusive 0 ] ;
  sh:property [ sh:path ex:ref ; sh:class ex:Top ; sh:nodeKind sh:IRI ] ;
  sh:property [ sh:path ex:label ; sh:pattern "^L[0-9]+$" ; sh:languageIn ( "en" ) ] ;
  sh:property [ sh:path ex:status ; sh:in ( "open" "closed" ) ] ."""
        for i in range(5)
    )
    + "\n".join(
        f"""
ex:Sub{p} a sh:NodeShape ; sh:targetSubjectsOf ex:{p} ;
  sh:property [ sh:path ex:{p} ; sh:maxCount 1 ; sh:datatype xsd:string ] ."""
        for p in ("name", "p5", "p6", "status")
    )
    + """
ex:SubLabel a sh:NodeShape ; sh:targetSubjectsOf ex:label ;
  sh:property [ sh:path ex:label ; sh:maxCount 1 ; sh:datatype rdf:langString ] ."""
)


def n(local: str) -> ox.NamedNode:
    return ox.NamedNode(EX + local)


def entity(i: int, graph: ox.NamedNode) -> list[ox.Quad]:
    e = n(f"e{i}")
    return [
        ox.Quad(e, RDF_TYPE, n(CLASSES[i % 10]), graph),
        ox.Quad(e, n("name"), ox.Literal(f"name{i}"), graph),
        ox.Quad(e, n("size"), ox.Literal(str(i), datatype=ox.NamedNode(XSD + "integer")), graph),
        ox.Quad(e, n("ref"), n(f"e{i % 100}"), graph),  # 100 hub nodes
        ox.Quad(e, n("label"), ox.Literal(f"L{i}", language="en"), graph),
        ox.Quad(e, n("p5"), ox.Literal(f"v{i}"), graph),
        ox.Quad(e, n("status"), ox.Literal("open" if i % 2 else "closed"), graph),
    ]


def build(store: ox.Store, *, base: int, delta: int, full_base: bool) -> tuple[list[ox.NamedNode], ox.NamedNode]:
    """Fill ``store``; returns (default graphs, delta graph)."""
    onto, base_g, ctx, commit = n("g/onto"), n("g/base"), n("g/ctx"), n("g/commit")
    quads = [ox.Quad(n(c), SUBCLASS, n("Top"), onto) for c in CLASSES]
    if full_base:
        for i in range(base):
            quads += entity(i, base_g)
    for i in range(base, base + delta):
        quads += entity(i, commit)
    if not full_base:  # staging: the hub nodes the delta references (it touches them too)
        for i in range(100):
            quads += entity(i, ctx)
    store.bulk_extend(quads) if len(quads) > 50_000 else store.extend(quads)
    graphs = [onto, base_g, commit] if full_base else [onto, ctx, commit]
    return graphs, commit


def timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), result


def bench_commits(base: int, versions: int) -> None:
    """Validation's share of the commits of a bear_data history, per kind of data."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from bear_data import history

    from cleveragents.graph.commit import CommitEngine, CommitRequest
    from cleveragents.graph.hierarchy import TBox
    from cleveragents.graph.store import GraphStore
    from cleveragents.graph.workspace import Workspace, shapes_validator

    for kind in ("uko", "dbpedia"):
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(pathlib.Path(tmp))
            ws.initialize()
            store = GraphStore.open(ws.store_dir)
            engine = CommitEngine(store, TBox.from_store(store.raw), shapes_validator(store.raw))
            for version in history(base, versions, kind=kind):
                removed = "\n".join(version.removed).encode()
                remove = [(q.subject, q.predicate, q.object) for q in ox.parse(removed, ox.RdfFormat.N_TRIPLES)]
                added = ("\n".join(version.added) + "\n").encode()
                result = engine.commit(CommitRequest(add_ntriples=added, remove=remove))
                total, validate = sum(result.timings.values()), result.timings["validate"]
                print(
                    f"{kind:8s} rev {result.revision}: +{result.added} -{result.removed}  commit {total * 1000:6.0f} ms"
                    f"  validate {validate * 1000:5.0f} ms ({validate / total:4.0%})  {len(result.warnings)} warnings"
                )
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=int, default=100_000, help="entities already in the disk store")
    parser.add_argument("--delta", type=int, default=1_500, help="entities in the commit (7 triples each)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-pyshacl", action="store_true")
    parser.add_argument("--commits", action="store_true", help="time the commit engine on bear_data histories")
    parser.add_argument("--commit-base", type=int, default=10_000, help="triples of the first commit")
    parser.add_argument("--commit-versions", type=int, default=4)
    args = parser.parse_args()
    if args.commits:
        bench_commits(args.commit_base, args.commit_versions)
        return

    t = time.perf_counter()
    compiled = compile_shapes(SHAPES)
    print(f"compile: {(time.perf_counter() - t) * 1000:.0f} ms, {len(compiled.targeted)} targeted shapes")

    staging = ox.Store()
    graphs, commit = build(staging, base=args.base, delta=args.delta, full_base=False)
    delta_triples = sum(1 for _ in staging.quads_for_pattern(None, None, None, commit))
    subjects = list({q.subject for q in staging.quads_for_pattern(None, None, None, commit)})
    print(f"delta: {delta_triples} triples, {len(subjects)} subjects; staging store: {len(staging)} quads")

    def run(store: ox.Store, **kw: object) -> list:
        return compiled.validate(store, default_graph=graphs, **kw)

    ms, res = timed(lambda: run(staging, focus_graphs=[commit]), args.repeat)
    print(f"staging  focus_graphs : {ms:7.1f} ms  ({len(res)} results)")
    ms, res = timed(lambda: run(staging, focus_nodes=subjects), args.repeat)
    print(f"staging  focus_nodes  : {ms:7.1f} ms  ({len(res)} results)")
    ms, res = timed(lambda: run(staging, focus_graphs=[commit], excluded_graph=n("g/removed")), args.repeat)
    print(f"staging  + excluded   : {ms:7.1f} ms  ({len(res)} results)")
    ms, res = timed(lambda: run(staging), args.repeat)
    print(f"staging  full audit   : {ms:7.1f} ms  ({len(res)} results)")

    if not args.no_pyshacl:
        data = ox.serialize([q.triple for q in staging], format=ox.RdfFormat.N_TRIPLES).decode()
        ms, res = timed(lambda: pyshacl_validate(data, SHAPES), 1)
        print(f"pyshacl  staging data : {ms:7.1f} ms  ({len(res)} results)")

    with tempfile.TemporaryDirectory() as tmp:
        bench_disk(compiled, tmp, args, subjects)


def bench_disk(compiled, path: str, args: argparse.Namespace, subjects: list) -> None:
    disk = ox.Store(path)
    t = time.perf_counter()
    graphs, commit = build(disk, base=args.base, delta=args.delta, full_base=True)
    print(f"disk store: {len(disk)} quads (built in {time.perf_counter() - t:.1f} s)")

    def run(**kw: object) -> list:
        return compiled.validate(disk, default_graph=graphs, **kw)

    ms, res = timed(lambda: run(focus_graphs=[commit]), args.repeat)
    print(f"disk     focus_graphs : {ms:7.1f} ms  ({len(res)} results)")
    ms, res = timed(lambda: run(focus_nodes=subjects), args.repeat)
    print(f"disk     focus_nodes  : {ms:7.1f} ms  ({len(res)} results)")
    ms, res = timed(lambda: run(focus_graphs=[commit], excluded_graph=n("g/removed")), args.repeat)
    print(f"disk     + excluded   : {ms:7.1f} ms  ({len(res)} results)")


if __name__ == "__main__":
    main()
