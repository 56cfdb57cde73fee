"""LSP enrichment benchmark: an index run with the language server against one without.

A corpus's Python sources are indexed into a fresh real store twice per repeat: plainly
(the baseline, measured in the same run) and with ``lsp=True`` (the registry's Python
server, basedpyright, resolves every reference; see lsp/enrich.py). Reported: wall times,
definition requests/s, edges resolved/s, how the server's answers compare with name
matching on call edges (``IndexSummary.resolution``), diagnostics, and the peak resident
set of this process and of the server's process tree (``VmHWM``, sampled while it runs).
Precision of the edges is bench_call_accuracy.py's job (``--lsp``).

    python benchmarks/bench_lsp.py                       # requests 2.32.3, median of 3
    python benchmarks/bench_lsp.py --django --repeats 1  # the django/ package of Django
    python benchmarks/bench_lsp.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_indexing import progress, python_sources  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.indexing.indexer import IndexSummary  # noqa: E402
from cleveragents.lsp.runtime import ServerHandle  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

CALLS = "calls"  # the local name of uko-code:calls in IndexSummary.resolution's keys
CORPORA = {"requests": ("requests-2.32.3", "src/requests"), "django": ("django", "django")}


class DescendantPeaks:
    """The peak resident set (``VmHWM``) of each process below this one, polled while it
    lives: a language server runs in its own session but is still our descendant."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self.peaks: dict[int, tuple[str, int]] = {}  # pid -> (command, kB)
        self.parents: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> DescendantPeaks:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            for pid, ppid in _descendants(os.getpid()):
                status = _status(pid)
                if "VmHWM" in status:
                    kb = int(status["VmHWM"].split()[0])
                    self.peaks[pid] = (status.get("Name", "?"), max(kb, self.peaks.get(pid, ("", 0))[1]))
                    self.parents[pid] = ppid

    def tree_peaks_mb(self, root_name: str) -> dict[str, float]:
        """The peak of each process in the trees rooted at processes named ``root_name``
        (the server's launcher and the node process it starts), by name (largest kept)."""
        out: dict[str, float] = {}
        for pid, (name, kb) in self.peaks.items():
            if self._in_tree(pid, root_name):
                out[name] = max(out.get(name, 0.0), round(kb / 1024, 1))
        return out

    def launches(self, root_name: str) -> int:
        """How many processes named ``root_name`` ran: 1 + the server's restarts."""
        return sum(1 for name, _ in self.peaks.values() if name.startswith(root_name))

    def _in_tree(self, pid: int, root_name: str) -> bool:
        ancestor: int | None = pid
        while ancestor is not None and not self.peaks.get(ancestor, ("", 0))[0].startswith(root_name):
            ancestor = self.parents.get(ancestor)
        return ancestor is not None


@contextmanager
def server_phases() -> Iterator[dict[str, float]]:
    """Seconds spent in the runtime's blocking calls, by LSP method (definitions, hovers)
    and for the diagnostics wait: the enricher's time split without touching its code."""
    spent: dict[str, float] = {}
    originals = {name: getattr(ServerHandle, name) for name in ("requests", "diagnostics_many")}

    def timed(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: ServerHandle, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                key = args[0] if name == "requests" else "diagnostics wait"
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

        return wrapper

    for name, original in originals.items():
        setattr(ServerHandle, name, timed(name, original))
    try:
        yield spent
    finally:
        for name, original in originals.items():
            setattr(ServerHandle, name, original)


def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def _descendants(root: int) -> list[tuple[int, int]]:
    """(pid, parent pid) of every process below ``root``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            ppid = _status(int(entry.name)).get("PPid", "0").strip()
            children.setdefault(int(ppid), []).append(int(entry.name))
    out: list[tuple[int, int]] = []
    queue = [root]
    while queue:
        parent = queue.pop()
        out += [(child, parent) for child in children.get(parent, [])]
        queue += children.get(parent, [])
    return out


def index_once(work: Path, tree: Path, name: str, *, lsp: bool) -> tuple[float, IndexSummary]:
    ws = Workspace(work / f"data-{name}")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name=f"local/{name}")
    started = time.perf_counter()
    summary = indexing.index(ws, [info], lsp=lsp, lsp_timeout=30.0)[0]
    return time.perf_counter() - started, summary


def lsp_numbers(seconds: float, summary: IndexSummary, phases: dict[str, float]) -> dict[str, object]:
    (report,) = [r for r in summary.enrichment if not r.get("unavailable")] or summary.enrichment
    if report.get("unavailable"):
        raise SystemExit(f"the language server was not used: {report['unavailable']}")
    calls = next((s.as_dict() for p, s in summary.resolution.items() if p.endswith(CALLS)), {})
    compared = sum(calls.values())
    # Each definition answer is counted once: resolved (a location), unanswered, or failed.
    definitions = int(report["resolved"]) + int(report["unanswered"]) + int(report["failed_requests"])
    edges_resolved = sum(s.confirmed + s.corrected + s.added for s in summary.resolution.values())
    server_s = float(report["seconds"])
    definitions_s = phases.get("textDocument/definition", 0.0)
    return {
        "wall_s": round(seconds, 2),
        "server_s": round(server_s, 2),  # the enricher's share of the run
        "definition_requests": definitions,
        "definition_requests_per_s": round(definitions / server_s, 1),  # of the enricher's whole time
        # ... of the pipelined definition requests alone (the first waits for the server's analysis)
        "definition_requests_per_s_requesting": round(definitions / definitions_s, 1) if definitions_s else None,
        "server_phases_s": {k: round(v, 2) for k, v in sorted(phases.items())},
        "references_resolved": edges_resolved,
        "edges_resolved_per_s": round(edges_resolved / server_s, 1),
        "call_edges": {k: {"count": v, "share": round(v / compared, 4)} for k, v in calls.items()} if compared else {},
        "diagnostics": report["diagnostics"],
        "inferred_return_types": report["typed"],
        "failed_requests": report["failed_requests"],
        "rejected_files": len(report["rejected"]),  # type: ignore[arg-type]
        "edges": summary.edges,
        "timings": summary.timings,
        "report": report,
    }


def bench(work: Path, corpus: str, repeats: int) -> dict[str, object]:
    name, package = CORPORA[corpus]
    tree = work / corpus
    files = python_sources(corpus_dir(name) / package, tree / package)
    progress(f"{corpus}: {len(files)} Python files, {repeats} repeat(s)")
    plain: list[float] = []
    runs: list[dict[str, object]] = []
    servers: list[dict[str, float]] = []
    for number in range(repeats):
        seconds, summary = index_once(work, tree, f"{corpus}-plain-{number}", lsp=False)
        plain.append(seconds)
        progress(f"{corpus} plain index: {seconds:.1f} s")
        with DescendantPeaks() as peaks, server_phases() as phases:
            seconds, summary = index_once(work, tree, f"{corpus}-lsp-{number}", lsp=True)
        runs.append({**lsp_numbers(seconds, summary, phases), "server_launches": peaks.launches("basedpyright")})
        servers.append(peaks.tree_peaks_mb("basedpyright"))
        progress(f"{corpus} LSP index: {seconds:.1f} s, server peaks (MB) {servers[-1]}")
    middle = sorted(runs, key=lambda r: float(r["wall_s"]))[len(runs) // 2]  # type: ignore[arg-type]
    plain_s = statistics.median(plain)
    return {
        "files": len(files),
        "repeats": repeats,
        "plain_index_s_median": round(plain_s, 2),
        "plain_index_s": [round(s, 2) for s in plain],
        "lsp_index_s_median": middle["wall_s"],
        "lsp_index_s": [r["wall_s"] for r in runs],
        "lsp_over_plain": round(float(middle["wall_s"]) / plain_s, 2),  # type: ignore[arg-type]
        "median_run": middle,
        "peak_rss_mb_this_process": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        # VmHWM of the server's processes: its launcher, node ("MainThread"), the helpers it runs.
        "peak_rss_mb_server_max": max(max(s.values(), default=0.0) for s in servers),
        "peak_rss_mb_server_processes": servers,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--django", action="store_true", help="the django/ package of Django instead of requests")
    parser.add_argument("--repeats", type=int, help="default 3 (requests), 1 (django)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = "django" if args.django else "requests"
    repeats = args.repeats or (1 if args.django else 3)
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as tmp:
        results = {corpus: bench(Path(tmp), corpus, repeats)}
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
