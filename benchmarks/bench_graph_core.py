"""Graph core benchmark: commits, SHACL share, as-of queries, storage, point lookups.

Every number is a ratio against a baseline measured in the same run, plus medians.

    python benchmarks/bench_graph_core.py            # 100k x 10 versions, 1M big load
    python benchmarks/bench_graph_core.py --quick    # 20k x 4 versions, 200k big load
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bear_data import DBR, Version, history

from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace, shapes_validator

VALIDATE = True


def nt(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode() if lines else b""


def triples(lines: list[str]) -> list[tuple]:
    return [(q.subject, q.predicate, q.object) for q in ox.parse(nt(lines), ox.RdfFormat.N_TRIPLES)] if lines else []


def disk(path: Path, suffix: str = "") -> int:
    """Bytes under ``path`` (only files ending in ``suffix``: ".sst" counts data files,
    leaving out RocksDB write-ahead logs that have not been recycled yet)."""
    return sum(f.stat().st_size for f in path.rglob(f"*{suffix}") if f.is_file())


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def product_store(root: Path, *, validate: bool) -> tuple[Workspace, GraphStore, CommitEngine]:
    ws = Workspace(root)
    ws.initialize()
    store = GraphStore.open(ws.store_dir)
    validator = shapes_validator(store.raw) if validate else None
    return ws, store, CommitEngine(store, TBox.from_store(store.raw), validator)


def bench_history(root: Path, versions: list[Version], *, validate: bool) -> dict:
    """Replay a BEAR-B-shaped history: raw Oxigraph operations vs product commits."""
    root.mkdir(parents=True, exist_ok=True)
    raw_store = ox.Store(str(root / "raw"))
    graph = ox.NamedNode("urn:bench:data")
    raw_times, ours_times, changed = [], [], []
    _, store, engine = product_store(root / "ours", validate=validate)
    for version in versions:
        data, removed = nt(version.added), triples(version.removed)

        def raw_ops(data: bytes = data, removed: list[tuple] = removed) -> None:
            raw_store.bulk_load(data, ox.RdfFormat.N_TRIPLES, to_graph=graph)
            for s, p, o in removed:
                raw_store.remove(ox.Quad(s, p, o, graph))

        raw_times.append(timed(raw_ops))
        result: dict = {}

        def ours(data: bytes = data, removed: list[tuple] = removed, result: dict = result) -> None:
            result["r"] = engine.commit(CommitRequest(add_ntriples=data, remove=removed, message="bench"))

        ours_times.append(timed(ours))
        progress(f"  version {len(ours_times)}: raw {raw_times[-1]:.2f}s, commit {ours_times[-1]:.2f}s")
        changed.append(len(version.added) + len(version.removed))
    raw_store.flush()
    store.raw.flush()
    out = {
        "versions": len(versions),
        "triples_changed": sum(changed),
        "raw_seconds": sum(raw_times),
        "commit_seconds": sum(ours_times),
        "throughput_ratio": sum(raw_times) / sum(ours_times),
        "median_version_ratio": statistics.median(r / o for r, o in zip(raw_times, ours_times, strict=True)),
        "last_timings": {k: round(v, 4) for k, v in result["r"].timings.items()},
    }
    # Storage: the same history kept as a full copy per version, in one run.
    full = ox.Store(str(root / "fullcopy"))
    state: set[str] = set()
    for i, version in enumerate(versions):
        state -= set(version.removed)
        state |= set(version.added)
        full.bulk_load(nt(sorted(state)), ox.RdfFormat.N_TRIPLES, to_graph=ox.NamedNode(f"urn:bench:v{i}"))
    full.flush()
    for s in (full, store.raw):
        s.optimize()
    out["disk_bytes"] = disk(root / "ours" / "store")
    out["fullcopy_bytes"] = disk(root / "fullcopy")
    out["storage_ratio"] = out["disk_bytes"] / out["fullcopy_bytes"]
    out["sst_bytes"] = disk(root / "ours" / "store", ".sst")
    out["fullcopy_sst_bytes"] = disk(root / "fullcopy", ".sst")
    out["sst_ratio"] = out["sst_bytes"] / out["fullcopy_sst_bytes"]
    out["quad_ratio"] = len(store.raw) / len(full)
    out["quads"] = len(store.raw)
    out["fullcopy_quads"] = len(full)
    out.update(bench_as_of(store, len(versions)))
    store.close()
    return out


def bench_as_of(store: GraphStore, versions: int) -> dict:
    """The same queries on the current state and as of a middle revision."""
    queries = {
        "scan": "SELECT (COUNT(*) AS ?n) WHERE { ?s <http://dbpedia.org/ontology/birthPlace> ?o }",
        "point": f"SELECT ?p ?o WHERE {{ <{DBR}R42> ?p ?o }}",
        "two_hop": f"SELECT ?x ?y WHERE {{ <{DBR}R42> ?p ?x . ?x ?q ?y }}",
    }
    middle = store.view(max(1, versions // 2))
    out: dict = {}
    for name, query in queries.items():
        current, past = [], []
        for _ in range(15):
            current.append(timed(lambda q=query: list(store.query(q))))
            past.append(timed(lambda q=query: list(store.query(q, view=middle))))
        out[f"as_of_{name}_ms"] = statistics.median(past) * 1000
        out[f"current_{name}_ms"] = statistics.median(current) * 1000
        out[f"as_of_{name}_ratio"] = statistics.median(past) / statistics.median(current)
    return out


def bench_big(root: Path, size: int) -> dict:
    """One commit of ``size`` new triples vs bulk_load of the same N-Triples."""
    root.mkdir(parents=True, exist_ok=True)
    data = nt(history(size, 1, seed=11)[0].added)
    raw = ox.Store(str(root / "raw-big"))
    raw_time = timed(lambda: raw.bulk_load(data, ox.RdfFormat.N_TRIPLES))
    _, store, engine = product_store(root / "ours-big", validate=VALIDATE)
    result: dict = {}
    ours = timed(lambda: result.setdefault("r", engine.commit(CommitRequest(add_ntriples=data))))
    subjects = [ox.NamedNode(f"{DBR}R{i}") for i in random.Random(3).sample(range(size // 10), 200)]
    lookups = []
    for subject in subjects:
        lookups.append(timed(lambda s=subject: list(store.query(f"SELECT ?p ?o WHERE {{ {s} ?p ?o }}"))))
    store.close()
    return {
        "triples": size,
        "bulk_load_seconds": raw_time,
        "commit_seconds": ours,
        "throughput_ratio": raw_time / ours,
        "timings": {k: round(v, 3) for k, v in result["r"].timings.items()},
        "point_lookup_p50_ms": statistics.median(lookups) * 1000,
        "point_lookup_p95_ms": sorted(lookups)[int(len(lookups) * 0.95)] * 1000,
    }


def bench_shacl_share(root: Path, size: int) -> dict:
    """SHACL's share of commit time for UKO-typed commits of ``size`` triples."""
    _, store, engine = product_store(root / "shacl", validate=VALIDATE)
    shares, commits = [], []
    for version in history(size, 4, seed=5, kind="uko"):
        result = engine.commit(CommitRequest(add_ntriples=nt(version.added), remove=triples(version.removed)))
        total = sum(result.timings.values())
        shares.append(result.timings["validate"] / total)
        commits.append(total)
    store.close()
    return {
        "commit_triples": size,
        "median_shacl_share": statistics.median(shares),
        "max_shacl_share": max(shares),
        "median_commit_seconds": statistics.median(commits),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", type=int, default=100_000)
    parser.add_argument("--versions", type=int, default=10)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--uko-base", type=int, default=20_000, help="size of the UKO-shaped history (0: skip)")
    parser.add_argument("--only", default="bear,uko,shacl,big", help="comma-separated sections: bear, uko, shacl, big")
    parser.add_argument("--no-shacl", action="store_true", help="commit without SHACL (to isolate its cost)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    global VALIDATE
    VALIDATE = not args.no_shacl
    if args.quick:
        args.base, args.versions, args.big = 20_000, 4, 200_000
    sections = set(args.only.split(","))
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if "bear" in sections:
            progress(f"BEAR-B-shaped history: {args.base} triples x {args.versions} versions")
            results["bear_b_dbpedia"] = bench_history(
                root / "bear", history(args.base, args.versions), validate=VALIDATE
            )
        if "uko" in sections and args.uko_base:
            progress(f"UKO-shaped history: {args.uko_base} triples x {args.versions} versions")
            results["bear_b_uko"] = bench_history(
                root / "uko", history(args.uko_base, args.versions, kind="uko"), validate=VALIDATE
            )
        if "shacl" in sections and VALIDATE:
            progress("SHACL share of 10k-triple UKO commits")
            results["shacl_10k"] = bench_shacl_share(root, 10_000)
        if "big" in sections:
            progress(f"one commit of {args.big} triples")
            results["big"] = bench_big(root, args.big)
    text = json.dumps(results, indent=2, sort_keys=True)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)


if __name__ == "__main__":
    main()
