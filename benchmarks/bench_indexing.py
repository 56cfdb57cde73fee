"""Indexing benchmark: Django's Python sources, incremental re-index, git history import.

Every throughput is reported with its ratio against tree-sitter parsing alone of the same
files, measured in the same run.

    python benchmarks/bench_indexing.py                 # Django + history of this repository
    python benchmarks/bench_indexing.py --only django   # or: history
    python benchmarks/bench_indexing.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tree_sitter_python  # noqa: E402

from analyzers import _treesitter  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

EDIT = "\n\ndef added_by_the_benchmark(x):\n    return x + 1\n"


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def peak_rss_mb() -> float:
    """Peak resident set of this process and of its (joined) worker processes, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def python_sources(source: Path, dest: Path) -> list[Path]:
    files = sorted(p for p in source.rglob("*.py") if p.is_file())
    for path in files:
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return files


def parse_only(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        _treesitter.parse(tree_sitter_python.language, path.read_bytes())
    return time.perf_counter() - start


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bench_django(work: Path) -> dict[str, object]:
    tree = work / "django-py"
    files = python_sources(corpus_dir("django"), tree)
    progress(f"django: {len(files)} Python files")
    parse_runs = [parse_only(files) for _ in range(3)]
    parse_s = statistics.median(parse_runs)
    ws = Workspace(work / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name="local/django")
    analyzers = indexing.analyzer_set()
    start = time.perf_counter()
    full = indexing.index(ws, [info], analyzers=analyzers)[0]
    full_s = time.perf_counter() - start
    progress(f"django full index: {full_s:.1f} s, timings {full.timings}")
    unchanged = []
    for _ in range(3):
        start = time.perf_counter()
        again = indexing.index(ws, [info], analyzers=analyzers)[0]
        unchanged.append(time.perf_counter() - start)
        assert again.revision is None, "an unchanged tree must not commit"
    edits = []
    edited = tree / "django/db/models/base.py"
    original = edited.read_text()
    for round_ in range(3):
        edited.write_text(original + EDIT.replace("benchmark", f"benchmark_{round_}"))
        start = time.perf_counter()
        changed = indexing.index(ws, [info], analyzers=analyzers)[0]
        edits.append(time.perf_counter() - start)
        assert changed.revision is not None and changed.analyzed >= 1
    progress(f"django one-file edit: {statistics.median(edits):.2f} s, timings {changed.timings}")
    edited.write_text(original)
    cli = bench_cli(ws.data_dir, edited)
    progress(f"django from the CLI (wall, medians): {cli}")
    return {
        "files": len(files),
        "parse_only_s_median": round(parse_s, 2),
        "parse_only_files_per_min": round(len(files) / parse_s * 60),
        "full_index_s": round(full_s, 2),
        "full_index_files_per_min": round(len(files) / full_s * 60),
        "full_index_vs_parse_only": round(parse_s / full_s, 3),
        "full_index_phases_s": full.timings,
        "entities": full.entities_added,
        "triples": full.triples_added,
        "edges": full.edges,
        "peak_rss_mb": round(peak_rss_mb()),
        "unchanged_reindex_s_median": round(statistics.median(unchanged), 3),
        "one_file_edit_reindex_s_median": round(statistics.median(edits), 3),
        "one_file_edit_phases_s": changed.timings,
        "store_mb": round(disk_bytes(ws.data_dir / "store") / 1e6, 1),
        "cli_wall_s_median": cli,
    }


def bench_cli(data_dir: Path, edited: Path, rounds: int = 5) -> dict[str, float]:
    """Wall time of `agents` in a fresh process, as a user runs it: interpreter start,
    imports (bytecode cached, as in an installed wheel), opening the store, the run."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CLEVERAGENTS_")}
    agents = [sys.executable, "-m", "cleveragents.cli.main", "--data-dir", str(data_dir)]

    def wall(*args: str) -> float:
        start = time.perf_counter()
        subprocess.run([*agents, *args], env=env, check=True, capture_output=True)
        return time.perf_counter() - start

    wall("--version")  # writes the bytecode of everything the CLI imports
    wall("index", "local/django")
    original = edited.read_text()
    times: dict[str, list[float]] = {"version": [], "unchanged": [], "one_file_edit": []}
    for round_ in range(rounds):
        times["version"].append(wall("--version"))
        times["unchanged"].append(wall("index", "local/django"))
        edited.write_text(original + EDIT.replace("benchmark", f"cli_{round_}"))
        times["one_file_edit"].append(wall("index", "local/django"))
    edited.write_text(original)
    return {name: round(statistics.median(values), 3) for name, values in times.items()}


def bench_history(work: Path, commits: int) -> dict[str, object]:
    repo = work / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    count = int(
        subprocess.run(
            ["git", "-C", str(repo), "rev-list", "--count", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
    )
    commits = min(commits, count)
    ws = Workspace(work / "history-data")
    ws.initialize()
    before = disk_bytes(ws.data_dir / "store")
    info, _ = resources.add(ws, repo, type_name="git-checkout", name="local/self")
    start = time.perf_counter()
    done = indexing.import_history(ws, info, max_commits=commits)
    seconds = time.perf_counter() - start
    after = disk_bytes(ws.data_dir / "store")
    per_commit = [s.seconds for s in done]
    progress(f"history: {len(done)} commits in {seconds:.1f} s")
    return {
        "repository": "this repository (git clone of the checkout)",
        "commits": len(done),
        "seconds": round(seconds, 2),
        "commits_per_s": round(len(done) / seconds, 2),
        "commit_s_median": round(statistics.median(per_commit), 3),
        "first_commit_s": round(per_commit[0], 2),
        "store_growth_mb": round((after - before) / 1e6, 1),
        "storage_per_commit_kb": round((after - before) / len(done) / 1e3, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("django", "history"))
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-indexing-") as tmp:
        work = Path(tmp)
        if args.only in (None, "django"):
            results["django"] = bench_django(work)
        if args.only in (None, "history"):
            results["history"] = bench_history(work, args.commits)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
