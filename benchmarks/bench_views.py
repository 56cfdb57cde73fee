"""Query latency as commits accumulate: the current-state mirror vs the interval union.

Every commit opens an interval graph; a view over the union of N graphs costs N index
seeks per pattern in Oxigraph. The head is therefore read from the mirror (the default
graph plus the live-inference graph). This measures both, in the same run.

    python benchmarks/bench_views.py --commits 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.commit import CommitEngine, CommitRequest
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.store import GraphStore, View
from cleveragents.graph.workspace import Workspace

EX = "https://example.org/v/"
DEP = ox.NamedNode("https://cleveragents.ai/ontology/uko/code#calls")


def median_ms(store: GraphStore, query: str, view: View, runs: int = 25) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        list(store.query(query, view=view))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--per-commit", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp))
        ws.initialize()
        store = GraphStore.open(ws.store_dir)
        engine = CommitEngine(store, TBox.from_store(store.raw), None)
        checkpoints = sorted({10, 50, 100, args.commits // 2, args.commits})
        rows = []
        for c in range(1, args.commits + 1):
            base = c * args.per_commit
            engine.commit(
                CommitRequest(
                    add=[
                        (ox.NamedNode(f"{EX}n{base + i}"), DEP, ox.NamedNode(f"{EX}n{(base + i) // 3}"))
                        for i in range(args.per_commit)
                    ]
                )
            )
            if c in checkpoints:
                node = f"<{EX}n{base}>"
                queries = {
                    "point": f"SELECT ?p ?o WHERE {{ {node} ?p ?o }}",
                    "two_hop": f"SELECT ?y WHERE {{ {node} ?p ?x . ?x ?q ?y }}",
                    "dependents": f"SELECT ?x WHERE {{ ?x uko:dependsOn <{EX}n{base // 3}> }}",
                }
                head = store.view()
                graphs = store.interval_graphs()
                union = View(
                    store.head,
                    (*(n for n, iv in graphs.items() if iv.is_open), layout.ONTOLOGY, layout.TBOX_CLOSURE),
                )
                row = {"commits": c, "open_graphs": len(union.graphs) - 2}
                for name, q in queries.items():
                    row[f"{name}_mirror_ms"] = median_ms(store, q, head)
                    row[f"{name}_interval_union_ms"] = median_ms(store, q, union)
                    row[f"{name}_as_of_middle_ms"] = median_ms(store, q, store.view(max(1, c // 2)))
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
        store.close()
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
