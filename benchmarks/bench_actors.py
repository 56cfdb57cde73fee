"""Actor runtime benchmark: orchestration overhead per model turn, and a long session.

The model is the FAKE model server (a local process speaking the OpenAI wire format from a
script), reached through the real client (langchain-openai over HTTP); its round trip is
measured and excluded. Everything else a turn costs is ours:

* context: the ACMS assembly for the turn (BM25 + graph strategies over the store),
* tools: dispatching the model's tool call (reading a file of the corpus, or recording a
  decision),
* checkpoint: the store-backed LangGraph saver (files and the thread index, fsync'd); its
  graph records are one commit per batch (``graph_flush_ms``, also given per turn),
* the rest: LangGraph itself and message handling.

    python benchmarks/bench_actors.py                     # Django's index (built once, cached)
    python benchmarks/bench_actors.py --corpus self       # this repository instead (faster)
    python benchmarks/bench_actors.py --turns 200 --json out.json

Part 2 runs a 200-turn session (no context assembly) and reports the RSS growth and the
checkpointer's storage per turn (files under the data dir and the store's growth).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from cleveragents.actors.checkpointer import StoreCheckpointSaver  # noqa: E402
from cleveragents.actors.providers import ModelRef, ProviderSettings, chat_model  # noqa: E402
from cleveragents.actors.runtime import AgentRuntime, ToolBelt, ToolDescription, TurnContext  # noqa: E402
from cleveragents.context.model import ContextRequest  # noqa: E402
from cleveragents.fakes.model_server import FakeModelServer  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.services import context as context_service  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402

CACHE = Path(os.environ.get("CLEVERAGENTS_BENCH_CACHE", Path.home() / ".cache" / "cleveragents" / "bench-actors"))
QUESTIONS = [
    "how are query sets evaluated lazily",
    "where is the request middleware applied",
    "how does the ORM build a SQL join",
    "how are form fields validated",
    "where are migrations planned",
]


def progress(text: str) -> None:
    print(f"[bench_actors] {text}", file=sys.stderr, flush=True)


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def corpus_tree(name: str, work: Path) -> Path:
    if name == "self":
        return ROOT / "src"
    from benchmarks.bench_indexing import python_sources
    from corpora.fetch import corpus_dir

    tree = work / "django-py"
    python_sources(corpus_dir("django"), tree)
    return tree


def indexed_store(name: str) -> Path:
    """A data dir with the corpus indexed, built once and cached."""
    cached = CACHE / f"{name}-data"
    if (cached / "store").is_dir():
        return cached
    CACHE.mkdir(parents=True, exist_ok=True)
    building = CACHE / f"{name}-building"
    shutil.rmtree(building, ignore_errors=True)
    tree = corpus_tree(name, CACHE)
    ws = Workspace(building / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name=f"local/{name}")
    started = time.perf_counter()
    indexing.index(ws, [info], analyzers=indexing.analyzer_set())
    progress(f"indexed {name} in {time.perf_counter() - started:.0f} s")
    (building / "data").rename(cached)
    shutil.rmtree(building, ignore_errors=True)
    return cached


class Tools:
    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.decisions = 0

    def call(self, name: str, args: dict) -> object:
        if name == "read_file":
            return self.files[int(args["index"]) % len(self.files)].read_text(errors="replace")[:4000]
        self.decisions += 1
        return {"recorded": self.decisions}

    def belt(self) -> ToolBelt:
        return ToolBelt([
            ToolDescription("read_file", "Read a file by index.", {
                "type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]}),
            ToolDescription("record_decision", "Record a decision.", {
                "type": "object", "properties": {"type": {"type": "string"}, "chosen": {"type": "string"},
                                                 "context_hash": {"type": "string"}},
                "required": ["type", "chosen"]}),
        ], self.call)


def script(turns: int) -> dict:
    out = []
    for i in range(turns - 1):
        if i % 2 == 0:
            out.append({"text": f"Reading file {i}.", "tool_calls": [{"name": "read_file", "arguments": {"index": i}}],
                        "usage": {"input_tokens": 1000 + 50 * i, "output_tokens": 20}})
        else:
            out.append({"tool_calls": [{"name": "record_decision", "arguments": {
                "type": "implementation_choice", "chosen": f"choice {i}"}}],
                "usage": {"input_tokens": 1000 + 50 * i, "output_tokens": 30}})
    out.append({"text": "Done.", "usage": {"input_tokens": 1000 + 50 * turns, "output_tokens": 2}})
    return {"turns": out}


def run_session(ws: Workspace, session: object, server: FakeModelServer, turns: int, files: list[Path], *,
                with_context: bool, thread: str) -> dict[str, object]:
    """One thread of ``turns`` model turns; per-turn timings from LangGraph's update stream."""
    server.set_script(script(turns))
    env = {"OPENAI_API_KEY": "fake", "OPENAI_BASE_URL": server.openai_base_url}
    model = chat_model(ModelRef("openai", "fake"), ProviderSettings(max_retries=0, timeout=60), env=env)
    tools = Tools(files)
    context_seconds: list[float] = []

    def context(question: str, budget: int) -> TurnContext:
        started = time.perf_counter()
        request = ContextRequest(query=QUESTIONS[len(context_seconds) % len(QUESTIONS)],
                                 max_tokens=min(budget, 4000))
        assembled = context_service.assemble(ws, request, record=False)
        context_seconds.append(time.perf_counter() - started)
        return TurnContext(context_service.markdown(assembled), assembled.context_hash, assembled.total_tokens)

    if True:  # one writer session for the whole benchmark (the store has one writer)
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        runtime = AgentRuntime(model, system_prompt="You work on the codebase.", tools=tools.belt(),
                               checkpointer=saver, context_provider=context if with_context else None,
                               max_turns=turns + 5)
        config = {"configurable": {"thread_id": thread}, "recursion_limit": 2 * turns + 10}
        turn_walls: list[float] = []
        turn_start = time.perf_counter()
        puts_before = 0
        per_turn_checkpoint: list[float] = []
        for update in runtime.graph.stream({"messages": [("user", "Improve the code.")], "failures": 0}, config,
                                           stream_mode="updates"):
            if "tools" in update or ("model" in update and not update["model"]["messages"][-1].tool_calls):
                now = time.perf_counter()
                turn_walls.append(now - turn_start)
                turn_start = now
                per_turn_checkpoint.append(sum(saver.put_seconds[puts_before:]))
                puts_before = len(saver.put_seconds)
        saver.flush()
        model_s = runtime.timings["model"]
        tools_s = runtime.timings["tools"] + [0.0]
        ctx_s = runtime.timings["context"]
        n = min(len(turn_walls), len(model_s))
        overhead = [turn_walls[i] - model_s[i] for i in range(n)]
        result = {
            "turns": n,
            "overhead_ms": _dist(overhead),
            "model_round_trip_ms": _dist(model_s[:n]),
            "context_ms": _dist(ctx_s[:n]),
            "tools_ms": _dist(tools_s[:n]),
            "checkpoint_ms": _dist(per_turn_checkpoint[:n]),
            "checkpoints": len(saver.put_seconds),
            "graph_flushes": saver.commits,
            "graph_flush_ms": _dist(saver.flush_seconds),
            "graph_flush_ms_per_turn": round(sum(saver.flush_seconds) * 1000 / max(1, n), 2),
            "langgraph_and_rest_ms": _dist([overhead[i] - ctx_s[i] - tools_s[i] - per_turn_checkpoint[i]
                                            for i in range(n)]),
        }
    return result


def _dist(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered) * 1000, 2),
            "p90": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 2),
            "mean": round(statistics.fmean(ordered) * 1000, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=["django", "self"], default="django")
    parser.add_argument("--overhead-turns", type=int, default=40)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    source = indexed_store(args.corpus)
    files = sorted((CACHE / "django-py").rglob("*.py"))[:500] if args.corpus == "django" else sorted(
        (ROOT / "src").rglob("*.py"))
    results: dict[str, object] = {"corpus": args.corpus, "shared_machine_load": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="bench-actors-") as tmp, FakeModelServer() as server:
        data = Path(tmp) / "data"
        progress(f"copying the {args.corpus} store")
        shutil.copytree(source, data)
        ws = Workspace(data)
        store_before = disk_bytes(data / "store")
        writer = ws.writer()
        session_handle = writer.__enter__()
        progress(f"overhead: {args.overhead_turns} turns with context assembly")
        results["overhead"] = run_session(ws, session_handle, server, args.overhead_turns, files,
                                          with_context=True, thread="overhead")
        progress(f"session: {args.turns} turns")
        gc.collect()
        rss_before = rss_mb()
        store_mid = disk_bytes(data / "store")
        files_mid = disk_bytes(data / "checkpoints")
        started = time.perf_counter()
        session = run_session(ws, session_handle, server, args.turns, files, with_context=False, thread="long-session")
        gc.collect()
        session["wall_s"] = round(time.perf_counter() - started, 1)
        session["rss_before_mb"] = round(rss_before, 1)
        session["rss_after_mb"] = round(rss_mb(), 1)
        session["rss_growth_mb"] = round(rss_mb() - rss_before, 1)
        session["checkpoint_files_bytes_per_turn"] = round(
            (disk_bytes(data / "checkpoints") - files_mid) / max(1, session["turns"]))
        session["store_growth_bytes_per_turn"] = round(
            (disk_bytes(data / "store") - store_mid) / max(1, session["turns"]))
        results["session"] = session
        writer.__exit__(None, None, None)
        results["store_bytes_before"] = store_before
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
