"""What the UKO inference engine costs an index run, and what it derives.

Each corpus is indexed into two fresh stores in the same run: with the engine (the
default: layers and implicit edges derived in every commit) and without it (the baseline:
the RDFS closure alone). Then one file is edited and re-indexed in both, for the
incremental cost. Reported: wall times, their ratio, and the derived facts by predicate.

    python benchmarks/bench_uko_inference.py                  # requests 2.32.3 and Django
    python benchmarks/bench_uko_inference.py --only requests
    python benchmarks/bench_uko_inference.py --json out.json
    python benchmarks/bench_uko_inference.py --only django --repeat 3   # medians of 3 alternated runs
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_indexing import EDIT, progress, python_sources  # noqa: E402
from cleveragents.graph import workspace as workspace_module  # noqa: E402
from cleveragents.graph.commit import CommitEngine  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

CORPORA = {"requests": ("requests-2.32.3", "src/requests"), "django": ("django", "django")}
DERIVED = ("uko:layer", "uko:implicitContains", "uko:implicitDependsOn", "uko:implicitSiblingOf")


def run(work: Path, tree: Path, name: str, *, uko: bool) -> dict[str, object]:
    engine = CommitEngine if uko else functools.partial(CommitEngine, uko=False)
    original = workspace_module.CommitEngine
    workspace_module.CommitEngine = engine  # type: ignore[misc]
    try:
        ws = Workspace(work / f"data-{name}-{'uko' if uko else 'plain'}")
        ws.initialize()
        info, _ = resources.add(ws, tree, type_name="fs-directory", name=f"local/{name}")
        started = time.perf_counter()
        summary = indexing.index(ws, [info])[0]
        first = time.perf_counter() - started
        edited = sorted(tree.rglob("*.py"))[len(list(tree.rglob("*.py"))) // 2]
        original_text = edited.read_text()
        edited.write_text(original_text + EDIT)
        try:
            started = time.perf_counter()
            indexing.index(ws, [info])
            one_file = time.perf_counter() - started
        finally:
            edited.write_text(original_text)
        counts: dict[str, int] = {}
        if uko:
            with ws.reader() as store:
                for predicate in DERIVED:
                    rows = list(store.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s {predicate} ?o }}"))
                    counts[predicate] = int(rows[0]["n"].value)
        return {
            "first_index_s": round(first, 2),
            "commit_s": round(summary.timings.get("commit", 0.0) + summary.timings.get("diff", 0.0), 2),
            "one_file_reindex_s": round(one_file, 2),
            "derived": counts,
        }
    finally:
        workspace_module.CommitEngine = original  # type: ignore[misc]


def _median_of(runs: list[dict[str, object]]) -> dict[str, object]:
    """The last run, with the median of each timing over all runs (and every value)."""
    out = dict(runs[-1])
    for key in ("first_index_s", "commit_s", "one_file_reindex_s"):
        values = [float(r[key]) for r in runs]  # type: ignore[arg-type]
        out[key] = round(statistics.median(values), 2)
        if len(runs) > 1:
            out[key.removesuffix("_s") + "_runs"] = values
    return out


def bench(name: str, work: Path, repeat: int = 1) -> dict[str, object]:
    corpus, sub = CORPORA[name]
    tree = work / f"tree-{name}"
    files = python_sources(corpus_dir(corpus) / sub, tree)
    progress(f"{name}: {len(files)} Python files")
    plains, withs = [], []
    for attempt in range(repeat):  # alternated, so that a noisy machine weighs on both sides
        plains.append(run(work, tree, f"{name}{attempt}", uko=False))
        progress(f"{name} without the engine: {plains[-1]}")
        withs.append(run(work, tree, f"{name}{attempt}", uko=True))
        progress(f"{name} with the engine: {withs[-1]}")
    plain, with_engine = _median_of(plains), _median_of(withs)
    return {
        "files": len(files),
        "without_engine": plain,
        "with_engine": with_engine,
        "first_index_ratio": round(float(with_engine["first_index_s"]) / float(plain["first_index_s"]), 2),  # type: ignore[arg-type]
        "one_file_ratio": round(float(with_engine["one_file_reindex_s"]) / float(plain["one_file_reindex_s"]), 2),  # type: ignore[arg-type]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=sorted(CORPORA))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side, alternated; medians reported")
    args = parser.parse_args()
    names = [args.only] if args.only else list(CORPORA)
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: bench(name, Path(tmp), max(1, args.repeat)) for name in names}
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
