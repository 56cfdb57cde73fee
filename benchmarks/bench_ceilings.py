"""Write ceilings: what raw Oxigraph loads of the product's own quads cost, in one run.

These are lower bounds on commit time. A commit writes at least its quads into the
store's layout. Validation, inference and bookkeeping only add to that.

- ``layout``: 1M new triples (the data of bench_graph_core's big commit). Baseline:
  ``bulk_load`` into the default graph, the denominator of issue 2's throughput
  target. It is compared with a ``bulk_load`` of the same triples into one named graph,
  the least any layout that keeps a start revision per triple in a named graph writes
  (Oxigraph keeps 3 indexes for the default graph and 6 for named graphs). Then the
  named graph plus the current-state mirror (this product's layout).
- ``django``: Django's Python sources indexed into a fresh store, its quads exported
  and bulk-loaded into fresh stores. First the interval graphs alone, then the whole
  layout (interval graphs and mirrors); and the commit-time SHACL validator over the same
  data, commit by commit, alone. Set against the time issue 3's target allows
  for the same files (10,000 files/min).

    python benchmarks/bench_ceilings.py                  # both sections
    python benchmarks/bench_ceilings.py --only layout --size 200000
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bear_data import history  # noqa: E402
from bench_indexing import python_sources  # noqa: E402

from cleveragents.graph import layout  # noqa: E402
from cleveragents.graph.store import GraphStore  # noqa: E402
from cleveragents.graph.workspace import Workspace, shapes_validator  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

TARGET_FILES_PER_MIN = 10_000


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


Load = tuple[bytes, ox.RdfFormat, ox.NamedNode | ox.DefaultGraph | None]


def timed_load(root: Path, loads: list[Load]) -> float:
    """Seconds for these bulk loads into one fresh on-disk store, flushed."""
    path = Path(tempfile.mkdtemp(dir=root))
    store = ox.Store(str(path))
    start = time.perf_counter()
    for data, fmt, graph in loads:
        if graph is None:
            store.bulk_load(data, fmt)
        else:
            store.bulk_load(data, fmt, to_graph=graph)
    store.flush()
    seconds = time.perf_counter() - start
    del store
    shutil.rmtree(path)
    return seconds


def median_of(runs: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(runs))


def bench_layout(root: Path, size: int, runs: int) -> dict[str, object]:
    data = ("\n".join(history(size, 1, seed=11)[0].added) + "\n").encode()
    nt = ox.RdfFormat.N_TRIPLES
    interval = layout.interval_graph("iv", 1)
    default = median_of(runs, lambda: timed_load(root, [(data, nt, layout.LIVE)]))
    named = median_of(runs, lambda: timed_load(root, [(data, nt, interval)]))
    mirrored = median_of(runs, lambda: timed_load(root, [(data, nt, interval), (data, nt, layout.LIVE)]))
    progress(f"layout: default {default:.2f} s, named {named:.2f} s, named + mirror {mirrored:.2f} s")
    return {
        "triples": size,
        "runs": runs,
        "default_graph_s_median": round(default, 3),
        "named_graph_s_median": round(named, 3),
        "named_plus_mirror_s_median": round(mirrored, 3),
        "ceiling_any_named_graph_layout": round(default / named, 3),
        "ceiling_named_plus_mirror": round(default / mirrored, 3),
    }


def _graph_family(graph: ox.NamedNode | ox.DefaultGraph) -> str:
    if isinstance(graph, ox.DefaultGraph):
        return "mirror"
    if graph == layout.LIVE_INFERRED:
        return "mirror"
    parsed = layout.parse_graph(graph)
    return "interval" if parsed is not None else "other"


def _validate_once(store: GraphStore) -> float:
    """Seconds for the commit-time validator over the data of every published commit,
    each commit's graphs as one focus set (the work SHACL does across an index run)."""
    validator = shapes_validator(store.raw)
    view = list(store.view().graphs)
    batches = sorted({iv.start for iv in store.interval_graphs().values() if iv.is_open and iv.family == "iv"})
    start = time.perf_counter()
    for rev in batches:
        focus = [layout.interval_graph("iv", rev)]
        found = validator.validate(store.raw, default_graph=view, focus_graphs=focus)
        if any(v.is_violation for v in found):
            raise AssertionError(f"revision {rev} no longer validates: {found[:3]}")
    return time.perf_counter() - start


def bench_django(root: Path, runs: int) -> dict[str, object]:
    tree = root / "django-py"
    files = python_sources(corpus_dir("django"), tree)
    ws = Workspace(root / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="local/django")
    start = time.perf_counter()
    indexing.index(ws, [info], analyzers=indexing.analyzer_set())
    index_s = time.perf_counter() - start
    progress(f"django: {len(files)} files indexed in {index_s:.1f} s")

    store = GraphStore.open_read_only(ws.store_dir)
    counts: Counter[str] = Counter()
    predicates: Counter[str] = Counter()
    for quad in store.raw.quads_for_pattern(None, None, None, None):
        family = _graph_family(quad.graph_name)
        counts[family] += 1
        if family == "interval":
            predicates[quad.predicate.value] += 1
    shacl_s = _validate_once(store)
    progress(f"django: SHACL over every indexed graph, as the commits validate them: {shacl_s:.1f} s")
    nq = ox.RdfFormat.N_QUADS
    everything = store.raw.dump(format=nq)
    del store
    marks = tuple(f" <{layout.GRAPH_BASE}{family}/".encode() for family in ("iv", "inf"))
    interval = b"".join(line for line in everything.splitlines(keepends=True) if any(m in line for m in marks))
    interval_s = median_of(runs, lambda: timed_load(root, [(interval, nq, None)]))
    layout_s = median_of(runs, lambda: timed_load(root, [(everything, nq, None)]))
    budget = len(files) / TARGET_FILES_PER_MIN * 60
    progress(f"django: interval graphs {interval_s:.2f} s, whole layout {layout_s:.2f} s, budget {budget:.1f} s")
    temporal = sum(
        n
        for p, n in predicates.items()
        if p.rsplit("#", 1)[-1] in ("validFrom", "validUntil", "isCurrent", "isRevisionOf", "revisionOf")
        or p.endswith("prov#wasGeneratedBy")
    )
    return {
        "files": len(files),
        "index_s": round(index_s, 1),
        "index_files_per_min": round(len(files) / index_s * 60),
        "interval_quads": counts["interval"],
        "mirror_quads": counts["mirror"],
        "revision_bookkeeping_quads": temporal,
        "runs": runs,
        "shacl_s": round(shacl_s, 2),
        "ceiling_files_per_min_shacl_only": round(len(files) / shacl_s * 60),
        "bulk_load_interval_graphs_s_median": round(interval_s, 2),
        "bulk_load_whole_layout_s_median": round(layout_s, 2),
        "target_budget_s": round(budget, 1),
        "ceiling_files_per_min_interval_only": round(len(files) / interval_s * 60),
        "ceiling_files_per_min_whole_layout": round(len(files) / layout_s * 60),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("layout", "django"))
    parser.add_argument("--size", type=int, default=1_000_000, help="triples of the layout section")
    parser.add_argument("--runs", type=int, default=3, help="loads per measurement (median)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ceilings-") as tmp:
        work = Path(tmp)
        if args.only in (None, "layout"):
            results["layout"] = bench_layout(work, args.size, args.runs)
        if args.only in (None, "django"):
            results["django"] = bench_django(work, args.runs)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
