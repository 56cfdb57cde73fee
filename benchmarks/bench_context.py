"""Context assembly benchmark: our ACMS against BM25, Aider's repo map and random, on the
same real corpora (requests 2.32.3 and Django's ``django/`` package), plus ACMS latency.

Quality (every system, every budget, tokens counted with o200k_base):
- budget violations at 1k, 2k, 4k, 8k, 16k: contexts over the budget;
- dependency recall: focus on a function; the reference is what jedi resolves the names of
  its body to (in-project definitions other than the function itself; context_corpus.py);
  recall = the share of them the context shows (a def/class line naming them, or a
  variable's defining line), plus the tokens used;
- localization: docstrings of a sample of functions are blanked in the indexed copy; the
  docstring is the query; file- and function-level Acc@1 and Acc@5.
Performance (Django, ours, medians): breadth-depth-navigator, fusion phases 2-3 (from the
explanation's timings when it has them), a full arce assembly at 8k.

    python benchmarks/bench_context.py --json benchmarks/out/context.json   # 220 functions, 2 corpora
    python benchmarks/bench_context.py --quick             # smoke run: requests, 8 + 8 functions
    python benchmarks/bench_context.py --systems bm25,aider,random     # the baselines alone
    python benchmarks/bench_context.py --corpora requests --functions 30 --localization 20

Run time: the baselines alone take ~15 min on 2 busy cores (jedi ~4 min the first time,
cached in ~/.cache/cleveragents/bench-context; Aider's PageRank over Django ~7 min). Ours
adds ~1.2 s per assembly: 5 per recall function plus 1 per localization query. The first
use creates ~/.cache/cleveragents/aider-venv (aider-chat and bpe-openai from PyPI).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_indexing import progress  # noqa: E402
from benchmarks.context_baselines import (  # noqa: E402
    AiderRepoMap,
    Bm25Files,
    Hit,
    RandomFiles,
    Ranking,
    System,
    aider_python,
)
from benchmarks.context_corpus import (  # noqa: E402
    MIN_BODY_LINES,
    Corpus,
    Definition,
    Function,
    References,
    prepare,
    query_of,
)
from cleveragents.context.model import AssembledContext, ContextRequest  # noqa: E402
from cleveragents.context.tokens import BpeTokenCounter, counter_for  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.services import context as context_service  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402

BUDGETS = [1000, 2000, 4000, 8000, 16000]
ENCODING = "o200k_base"
SYSTEMS = ["cleveragents", "bm25", "aider", "random"]
OURS = "cleveragents"
LOCALIZATION_BUDGET = 8000  # the assembly whose ordered fragments rank files and functions
SOURCE_BASE = "https://cleveragents.ai/id/src/"
# (recall functions, localization functions) per corpus. 150 localization queries (every
# eligible function of requests: 142): at 60, a few queries decided file Acc@1.
DEFAULT_SAMPLES = {"requests": (120, 150), "django": (100, 150)}
QUICK_SAMPLES = {"requests": (8, 8)}
PERF_SAMPLES = (20, 3)  # focus functions timed (Django; requests with --quick): default, quick


# -- our system ----------------------------------------------------------------------------------


def our_assemble(ws: Workspace, request: ContextRequest, *, explain: bool = False) -> AssembledContext:
    """Our system: the context service, as the CLI calls it (a benchmark's assemblies are
    not decisions to cite: not recorded)."""
    return context_service.assemble(ws, request, explain=explain, record=False)


def entity_iri(ulid: str, function: Function) -> str:
    return f"{SOURCE_BASE}{ulid}/{function.path}#{function.qualname}"


def hit_of(iri: str, ulid: str) -> Hit | None:
    """A fragment's UKO node as a ranked function (file nodes and other resources: None)."""
    prefix = f"{SOURCE_BASE}{ulid}/"
    if not iri.startswith(prefix) or "#" not in iri:
        return None
    path, key = iri[len(prefix) :].split("#", 1)
    qualname = key.split("/", 1)[0]  # "Session.send/doc" belongs to Session.send
    return Hit(path, qualname.rsplit(".", 1)[-1], qualname)


class Ours:
    name = OURS

    def __init__(self, ws: Workspace, ulid: str, strategies: list[str]) -> None:
        self.ws = ws
        self.ulid = ulid
        self.strategies = strategies
        self.errors: list[str] = []
        self.seconds: list[float] = []

    def _assemble(self, request: ContextRequest, *, explain: bool = False) -> AssembledContext | None:
        started = time.perf_counter()
        try:
            return our_assemble(self.ws, request, explain=explain)
        except Exception as exc:  # counted and reported: a failed assembly scores zero
            self.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            return None
        finally:
            self.seconds.append(time.perf_counter() - started)

    def contexts(self, function: Function, budgets: list[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for budget in budgets:
            request = ContextRequest(
                query=function.qualname,
                focus=[entity_iri(self.ulid, function)],
                max_tokens=budget,
                resources=[self.ulid],
                preferred_strategies=self.strategies,
            )
            context = self._assemble(request)
            out[budget] = context.render() if context else ""
        return out

    def rank(self, query: str) -> Ranking:
        request = ContextRequest(
            query=query, max_tokens=LOCALIZATION_BUDGET, resources=[self.ulid], preferred_strategies=self.strategies
        )
        context = self._assemble(request, explain=True)
        if context is None:
            return Ranking([], [])
        # The orderer arranges fragments for reading; the ranking is the scorer's composite
        # score (explanation["scores"]), else the strategies' relevance (sorts are stable).
        scores = context.explanation.get("scores") or {}
        fragments = sorted(context.fragments, key=lambda f: -float(scores.get(f.uko_node, f.relevance_score)))
        files = list(dict.fromkeys(f.provenance.path for f in fragments if f.provenance.path))
        hits = [hit_of(f.uko_node, self.ulid) for f in fragments]
        return Ranking(files, list(dict.fromkeys(h for h in hits if h is not None)))


def ours_available(ws: Workspace, ulid: str) -> str | None:
    """None when our system answers a trivial request, else why not."""
    try:
        our_assemble(ws, ContextRequest(query="request", max_tokens=1000, resources=[ulid]))
    except Exception as exc:  # a probe that fails skips our system, with why
        return f"the probe assembly failed: {type(exc).__name__}: {exc}"
    return None


# -- metrics -------------------------------------------------------------------------------------


def recall_rows(
    system: System | AiderRepoMap,
    functions: list[Function],
    references: dict[str, list[Definition]],
    counter: BpeTokenCounter,
    budgets: list[int],
) -> list[dict[str, Any]]:
    if isinstance(system, AiderRepoMap):
        contexts = system.contexts_many(functions, budgets)
    else:
        contexts = [system.contexts(f, budgets) for f in functions]
    rows = []
    for function, by_budget in zip(functions, contexts, strict=True):
        refs = references[function.key]
        for budget in budgets:
            text = by_budget.get(budget, "")
            found = [d for d in refs if d.present_in(text)]
            cross = [d for d in refs if d.path != function.path]
            rows.append(
                {
                    "function": function.key,
                    "budget": budget,
                    "tokens": counter.count(text),
                    "references": len(refs),
                    "found": len(found),
                    "cross_file": len(cross),
                    "cross_file_found": sum(1 for d in found if d.path != function.path),
                }
            )
    return rows


def localization_rows(system: System | AiderRepoMap, functions: list[Function]) -> list[dict[str, Any]]:
    queries = [query_of(f) for f in functions]
    rankings = system.rank_many(queries) if isinstance(system, AiderRepoMap) else [system.rank(q) for q in queries]
    rows = []
    for function, ranking in zip(functions, rankings, strict=True):
        file_rank = ranking.files.index(function.path) + 1 if function.path in ranking.files else None
        function_rank = next((i + 1 for i, h in enumerate(ranking.functions) if h.matches(function)), None)
        rows.append({"function": function.key, "file_rank": file_rank, "function_rank": function_rank})
    return rows


def summarize_recall(rows: list[dict[str, Any]], budgets: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for budget in budgets:
        at = [r for r in rows if r["budget"] == budget]
        if not at:
            continue
        cross = [r for r in at if r["cross_file"]]
        out[str(budget)] = {
            "functions": len(at),
            "recall": round(statistics.mean(r["found"] / r["references"] for r in at), 4),
            # micro: all reference definitions pooled
            "recall_micro": round(sum(r["found"] for r in at) / sum(r["references"] for r in at), 4),
            "recall_cross_file": round(statistics.mean(r["cross_file_found"] / r["cross_file"] for r in cross), 4)
            if cross
            else None,
            "tokens_mean": round(statistics.mean(r["tokens"] for r in at), 1),
            "tokens_median": statistics.median(r["tokens"] for r in at),
            "tokens_max": max(r["tokens"] for r in at),
            "budget_violations": sum(1 for r in at if r["tokens"] > budget),
        }
    return out


def summarize_localization(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {}

    def acc(key: str, k: int) -> float:
        return round(sum(1 for r in rows if r[key] is not None and r[key] <= k) / len(rows), 4)

    return {
        "queries": len(rows),
        "file_acc@1": acc("file_rank", 1),
        "file_acc@5": acc("file_rank", 5),
        "function_acc@1": acc("function_rank", 1),
        "function_acc@5": acc("function_rank", 5),
    }


# -- performance -----------------------------------------------------------------------------------


def timings(explanation: Any, path: str = "") -> dict[str, float]:
    """Every number in the explanation under a key that names a time (``*_ms``,
    ``*seconds``, ``timings``...), flattened to 'a.b.c' paths."""
    out: dict[str, float] = {}
    if isinstance(explanation, dict):
        for key, value in explanation.items():
            sub = f"{path}.{key}" if path else str(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                if _is_time(sub):
                    out[sub] = float(value)
            else:
                out.update(timings(value, sub))
    elif isinstance(explanation, list):
        for number, value in enumerate(explanation):
            out.update(timings(value, f"{path}[{number}]"))
    return out


def _is_time(path: str) -> bool:
    """A key path that names a duration: '*_ms', '*_s', '*seconds', or anything under 'timings*'."""
    last = path.rsplit(".", 1)[-1].lower()
    return (
        last in ("ms", "s", "seconds")
        or last.endswith(("_ms", "_s", "seconds", "latency", "elapsed"))
        or any(part.lower().startswith("timings") for part in path.split(".")[:-1])
    )


def fusion_ms(explanation: dict[str, Any]) -> float | None:
    """Phases 2-3 (fragment fusion + finalization) in ms, from the assembler's
    ``explanation["timings_ms"]`` (phase1, phase2, phase3)."""
    phases = explanation.get("timings_ms") or {}
    if "phase2" in phases and "phase3" in phases:
        return round(float(phases["phase2"]) + float(phases["phase3"]), 2)
    return None


def performance(ws: Workspace, ulid: str, functions: list[Function]) -> dict[str, Any]:
    """Wall time of ``assemble`` per case (the whole pipeline, every strategy the selector
    adds to the preferred one), the phase 2-3 time the assembler reports, and the preferred
    strategy's own time when the explanation reports per-strategy durations."""
    cases: dict[str, Callable[[Function], ContextRequest]] = {
        "breadth-depth-navigator": lambda f: ContextRequest(
            focus=[entity_iri(ulid, f)],
            max_tokens=8000,
            resources=[ulid],
            preferred_strategies=["breadth-depth-navigator"],
        ),
        "arce-8k": lambda f: ContextRequest(
            query=f"how does {f.qualname} work",
            focus=[entity_iri(ulid, f)],
            max_tokens=8000,
            resources=[ulid],
            preferred_strategies=["arce"],
        ),
    }
    out: dict[str, Any] = {}
    for name, make in cases.items():
        started = time.perf_counter()
        first = our_assemble(ws, make(functions[0]), explain=True)  # warms backends (BM25, FAISS)
        first_s = time.perf_counter() - started
        walls: list[float] = []
        fusions: list[float] = []
        strategies: dict[str, int] = {}
        example: dict[str, float] = {}
        own: list[float] = []
        strategy = make(functions[0]).preferred_strategies[0]
        for function in functions:
            started = time.perf_counter()
            context = our_assemble(ws, make(function), explain=True)
            walls.append((time.perf_counter() - started) * 1000)
            flat = timings(context.explanation)
            example = example or flat
            mine = (context.explanation.get("timings_ms") or {}).get("strategies", {}).get(strategy)
            if mine is not None:
                own.append(float(mine))
            fusion = fusion_ms(context.explanation)
            if fusion is not None:
                fusions.append(fusion)
            for used in context.strategies_used:
                strategies[used] = strategies.get(used, 0) + 1
        out[name] = {
            "runs": len(walls),
            "first_call_ms": round(first_s * 1000, 1),
            "first_call_strategies": first.strategies_used,
            "median_ms": round(statistics.median(walls), 1),
            "p90_ms": round(sorted(walls)[int(0.9 * (len(walls) - 1))], 1),
            "fusion_phases_2_3_median_ms": round(statistics.median(fusions), 2) if fusions else None,
            "strategy_own_median_ms": round(statistics.median(own), 1) if own else None,
            "strategies_used": strategies,
            "explanation_timings_example": example,
        }
    return out


# -- the run -------------------------------------------------------------------------------------


def index_corpus(work: Path, corpus: Corpus) -> tuple[Workspace, str, float, float]:
    """Index the prepared tree (a kept ``--work`` store is brought up to date) and build the
    context indexes as ``agents context index`` does: (workspace, ULID, index s, context index s)."""
    ws = Workspace(work / f"data-{corpus.key}")
    name = f"local/{corpus.key}"
    if not ws.exists():
        ws.initialize()
    known = [r for r in resources.list_all(ws) if r.name == name]
    info = known[0] if known else resources.add(ws, corpus.tree, type_name="fs-directory", name=name)[0]
    started = time.perf_counter()
    indexing.index(ws, [info])
    indexed = time.perf_counter()
    context_service.build_indexes(ws)
    return ws, info.ulid, indexed - started, time.perf_counter() - indexed


def recall_sample(corpus: Corpus, references: References, size: int, seed: int) -> dict[str, list[Definition]]:
    """``size`` functions (seeded order) whose body uses at least one in-project definition."""
    # A key defined twice (a property's getter and setter) names no single entity.
    counts = Counter(f.key for f in corpus.functions)
    pool = [f for f in corpus.functions if f.end_line - f.line + 1 > MIN_BODY_LINES and counts[f.key] == 1]
    chosen: dict[str, list[Definition]] = {}
    for function in random.Random(seed).sample(pool, len(pool)):
        if len(chosen) >= size:
            break
        refs = references.of(function)
        if refs:
            chosen[function.key] = refs
    references.save()
    return chosen


def run(args: argparse.Namespace) -> dict[str, Any]:
    counter = counter_for(ENCODING)
    systems = args.systems
    samples = QUICK_SAMPLES if args.quick else DEFAULT_SAMPLES
    if args.corpora:
        samples = {k: samples.get(k, DEFAULT_SAMPLES[k]) for k in args.corpora}
    if args.functions is not None:
        samples = {k: (args.functions, v[1]) for k, v in samples.items()}
    if args.localization is not None:
        samples = {k: (v[0], args.localization) for k, v in samples.items()}
    python = aider_python(progress) if "aider" in systems else None
    perf_corpus = "django" if "django" in samples else list(samples)[-1]  # the spec's numbers are Django's
    result: dict[str, Any] = {
        "config": {
            "budgets": BUDGETS,
            "encoding": ENCODING,
            "systems": systems,
            "quick": args.quick,
            "seed": args.seed,
            "samples": {k: {"recall": v[0], "localization": v[1]} for k, v in samples.items()},
            "our_strategies": args.strategy or "selector default",
        },
        "corpora": {},
        "systems": {},
        "rows": {},
    }
    recall_all: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    local_all: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    seconds: dict[str, float] = {s: 0.0 for s in systems}
    ours_errors: list[str] = []
    unavailable: str | None = None
    with tempfile.TemporaryDirectory(prefix="bench-context-") as tmp:
        work = args.work or Path(tmp)
        for key, (n_recall, n_local) in samples.items():
            corpus = prepare(key, work / f"tree-{key}", localization=n_local, seed=args.seed)
            started = time.perf_counter()
            references = recall_sample(corpus, References(corpus.tree), n_recall, args.seed)
            reference_s = time.perf_counter() - started
            functions = [f for f in corpus.functions if f.key in references]
            progress(
                f"{key}: {len(corpus.files)} files, {len(corpus.functions)} functions; "
                f"{len(functions)} recall functions (jedi {reference_s:.1f} s), {len(corpus.localization)} localization"
            )
            info: dict[str, Any] = {
                "files": len(corpus.files),
                "functions": len(corpus.functions),
                "recall_functions": len(functions),
                "reference_definitions": sum(len(r) for r in references.values()),
                "reference_kinds": _kinds(references),
                "jedi_seconds": round(reference_s, 1),
                "localization_functions": len(corpus.localization),
            }
            instances: dict[str, System | AiderRepoMap] = {}
            if OURS in systems:
                ws, ulid, index_s, context_index_s = index_corpus(work, corpus)
                info["index_seconds"] = round(index_s, 1)
                info["context_index_seconds"] = round(context_index_s, 1)
                progress(f"{key}: indexed in {index_s:.1f} s, context indexes {context_index_s:.1f} s")
                unavailable = unavailable or ours_available(ws, ulid)
                if unavailable is None:
                    instances[OURS] = Ours(ws, ulid, args.strategy)
                else:
                    progress(f"our system is skipped: {unavailable}")
            if "bm25" in systems:
                instances["bm25"] = Bm25Files(corpus, counter)
            if "random" in systems:
                instances["random"] = RandomFiles(corpus, counter, args.seed)
            if python is not None:
                instances["aider"] = AiderRepoMap(corpus, ENCODING, python)
            for name, system in instances.items():
                started = time.perf_counter()
                rows = recall_rows(system, functions, references, counter, BUDGETS)
                local = localization_rows(system, corpus.localization)
                spent = time.perf_counter() - started
                seconds[name] += spent
                for row in rows + local:
                    row["corpus"] = key
                recall_all[name] += rows
                local_all[name] += local
                info.setdefault("systems", {})[name] = {
                    "recall": summarize_recall(rows, BUDGETS),
                    "localization": summarize_localization(local),
                    "seconds": round(spent, 1),
                }
                progress(
                    f"{key} {name}: {spent:.1f} s; recall@8k "
                    f"{info['systems'][name]['recall'].get('8000', {}).get('recall')}; "
                    f"{info['systems'][name]['localization']}"
                )
                if isinstance(system, Ours):
                    ours_errors += system.errors
            if OURS in instances and key == perf_corpus:
                perf_n = PERF_SAMPLES[1] if args.quick else PERF_SAMPLES[0]
                perf_functions = random.Random(args.seed + 1).sample(functions, min(perf_n, len(functions)))
                try:
                    result["performance"] = {"corpus": key, **performance(ws, ulid, perf_functions)}
                except Exception as exc:  # reported, the quality numbers still stand
                    result["performance"] = {"corpus": key, "error": traceback.format_exception_only(exc)[-1].strip()}
                progress(f"performance ({key}): {json.dumps(result['performance'])[:600]}")
            result["corpora"][key] = info
    for name in systems:
        if name == OURS and unavailable:
            result["systems"][name] = {"unavailable": unavailable}
            continue
        result["systems"][name] = {
            "recall": summarize_recall(recall_all[name], BUDGETS),
            "budget_violations": {
                str(b): sum(1 for r in recall_all[name] if r["budget"] == b and r["tokens"] > b) for b in BUDGETS
            },
            "localization": summarize_localization(local_all[name]),
            "seconds": round(seconds[name], 1),
        }
        if name == OURS:
            result["systems"][name]["errors"] = len(ours_errors)
            result["systems"][name]["error_examples"] = sorted(set(ours_errors))[:10]
        result["rows"][name] = {"recall": recall_all[name], "localization": local_all[name]}
    return result


def _kinds(references: dict[str, list[Definition]]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for refs in references.values():
        for d in refs:
            kinds[d.kind] = kinds.get(d.kind, 0) + 1
    return kinds


def table(result: dict[str, Any]) -> str:
    """A plain-text summary of the pooled numbers."""
    lines = []
    budgets = [str(b) for b in BUDGETS]
    lines.append("recall (mean per function) / tokens mean / violations, by budget")
    for name, data in result["systems"].items():
        if "unavailable" in data:
            lines.append(f"  {name:13} unavailable: {data['unavailable']}")
            continue
        cells = [
            f"{data['recall'][b]['recall']:.3f}/{data['recall'][b]['tokens_mean']:.0f}/{data['budget_violations'][b]}"
            for b in budgets
            if b in data["recall"]
        ]
        lines.append(f"  {name:13} " + "  ".join(cells))
    lines.append("localization: file acc@1 acc@5, function acc@1 acc@5")
    for name, data in result["systems"].items():
        loc = data.get("localization") or {}
        if loc:
            lines.append(
                f"  {name:13} {loc['file_acc@1']:.3f} {loc['file_acc@5']:.3f}  "
                f"{loc['function_acc@1']:.3f} {loc['function_acc@5']:.3f}  (n={loc['queries']})"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: requests only, few functions")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {','.join(SYSTEMS)}")
    parser.add_argument("--corpora", default=None, help="comma-separated subset of requests,django")
    parser.add_argument("--functions", type=int, default=None, help="recall functions per corpus")
    parser.add_argument("--localization", type=int, default=None, help="localization queries per corpus")
    parser.add_argument("--strategy", action="append", default=[], help="our preferred strategy (repeatable)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--work", type=Path, default=None, help="keep trees and stores here and reuse them (same --seed and samples)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the summary here")
    parser.add_argument("--rows", type=Path, default=None, help="write per-function rows here (JSON lines, ~1 MB)")
    args = parser.parse_args()
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(args.systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems {', '.join(unknown)}; known: {', '.join(SYSTEMS)}")
    if args.corpora:
        args.corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
        bad = sorted(set(args.corpora) - set(DEFAULT_SAMPLES))
        if bad:
            parser.error(f"unknown corpora {', '.join(bad)}; known: {', '.join(DEFAULT_SAMPLES)}")
    started = time.perf_counter()
    result = run(args)
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(table(result))
    if "performance" in result:
        print(json.dumps(result["performance"], indent=2))
    rows = result.pop("rows")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
        progress(f"wrote {args.json}")
    if args.rows:  # per-function rows, one line each: what every number is made of
        with args.rows.open("w") as out:
            for name, kinds in rows.items():
                for kind, items in kinds.items():
                    for row in items:
                        out.write(json.dumps({"system": name, "metric": kind, **row}) + "\n")
        progress(f"wrote {args.rows}")


if __name__ == "__main__":
    main()
