"""Context benchmark that measures use: is the code a task needs in the context, whole?

Gold body recall: the fraction of the functions a task needs whose **complete source**
(from the ``def`` line to its last line, decorators excluded) is in the delivered context,
compared line by line with leading whitespace ignored (a method shown under its class and
the same method in a whole file both count). Tokens used and budget violations are counted
on the delivered text with o200k_base, for every system and budget.

Tasks:
- **fix commits**: from a project's git history, every non-merge commit whose message says
  it fixes something (``\\bfix``), that changes the bodies of 1 to MAX_GOLD existing
  functions of the package's non-test ``.py`` files and adds none: the commit message is
  the query, those functions (as they were in the parent) are the gold, and the index is
  the parent commit's package tree. The most recent ``--tasks`` of them (the rule is here,
  not a hand-picked list). The history comes from a git repository passed with ``--repo``
  (for example psf/requests fetched for benchmark use; nothing of it is committed).
- **localization**: the docstrings of a seeded sample of documented functions of a pinned
  corpus (``corpora/``, requests 2.32.3) are blanked in the indexed copy; the docstring is
  the query and the function the gold, scored the same way.

Systems: ours (``agents context assemble`` as documented: the service with the default
configuration and no flags, on a store indexed as ``agents resource add`` does, without
``agents context index``), BM25 over files, BM25 over functions (each function's source a
document, packed by rank until the budget), random files, and Aider's repo map
(``--systems ...,aider``; its venv is created on first use). Budgets 2k to 32k.

    python benchmarks/bench_context_use.py --repo /path/to/requests.git --json benchmarks/out/context_use.json
    python benchmarks/bench_context_use.py --repo ... --tasks 10 --localization 10   # a quick run
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_indexing import progress  # noqa: E402
from benchmarks.context_baselines import (  # noqa: E402
    AiderRepoMap,
    Bm25Files,
    RandomFiles,
    _Bm25,
    aider_python,
    pack,
    source_of,
)
from benchmarks.context_corpus import Corpus, Function, functions_of, prepare, query_of  # noqa: E402
from cleveragents.context.model import ContextRequest  # noqa: E402
from cleveragents.context.tokens import BpeTokenCounter, counter_for  # noqa: E402
from cleveragents.graph.workspace import Workspace  # noqa: E402
from cleveragents.services import context as context_service  # noqa: E402
from cleveragents.services import indexing, resources  # noqa: E402

BUDGETS = [2000, 4000, 8000, 16000, 32000]
ENCODING = "o200k_base"
SYSTEMS = ["cleveragents", "bm25-files", "bm25-functions", "random", "aider"]
DEFAULT_SYSTEMS = ["cleveragents", "bm25-files", "bm25-functions", "random"]
FIX = re.compile(r"\bfix", re.I)
MAX_GOLD = 5
MAX_QUERY_CHARS = 1500
PACKAGE_DIRS = ("src/requests", "requests")  # where a history keeps the package, newest layout first


@dataclass
class Task:
    kind: str  # "fix-commit" or "localization"
    name: str  # the commit or the function
    query: str
    gold: list[Function]
    corpus: Corpus


# -- gold body recall ---------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def body_present(body: str, context_lines: list[str], index: dict[str, list[int]]) -> bool:
    """Whether every non-blank line of ``body`` appears, in order and contiguous (blank
    lines aside), in the context's lines."""
    wanted = _lines(body)
    if not wanted:
        return False
    return any(context_lines[start : start + len(wanted)] == wanted for start in index.get(wanted[0], []))


def recall(context: str, gold: list[Function], corpus: Corpus) -> float:
    lines = _lines(context)
    index: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        index.setdefault(line, []).append(number)
    found = sum(1 for f in gold if body_present(source_of(corpus, f), lines, index))
    return found / len(gold)


# -- task selection ---------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def package_dir(repo: Path, commit: str) -> str | None:
    listed = set(git(repo, "ls-tree", "-d", "--name-only", "-r", commit).split())
    return next((d for d in PACKAGE_DIRS if d in listed), None)


def bodies(repo: Path, commit: str, path: str) -> dict[str, str]:
    """qualname -> source of each function and method of a file at a commit."""
    try:
        text = git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return {}
    try:
        module = ast.parse(text)
    except SyntaxError:
        return {}
    lines = text.splitlines()
    out: dict[str, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out[f"{prefix}{child.name}"] = "\n".join(lines[child.lineno - 1 : child.end_lineno])

    visit(module, "")
    return out


def fix_commits(repo: Path, limit: int) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(commit, parent, message, [(path in package, qualname)]) of the most recent commits
    that satisfy the selection rule (module docstring)."""
    out = []
    log = git(repo, "log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "--", *PACKAGE_DIRS)
    for entry in log.split("\x01"):
        if len(out) >= limit or not entry.strip():
            continue
        commit, parents, message = entry.strip("\n").split("\x00", 2)
        if not FIX.search(message) or " " in parents.strip() or not parents.strip():
            continue
        parent = parents.strip()
        package = package_dir(repo, parent)
        if package is None:
            continue
        changed = git(repo, "diff", "--name-only", parent, commit, "--", package).split()
        sources = [p for p in changed if p.endswith(".py") and "/tests/" not in p and not p.startswith("tests/")]
        gold: list[tuple[str, str]] = []
        added = False
        for path in sources:
            before, after = bodies(repo, parent, path), bodies(repo, commit, path)
            added = added or bool(set(after) - set(before))
            gold += [(path, q) for q in sorted(before) if q in after and before[q] != after[q]]
        if 1 <= len(gold) <= MAX_GOLD and not added:
            out.append((commit, parent, message.strip(), gold))
    return out


def checkout(repo: Path, commit: str, dest: Path) -> tuple[str, Path]:
    """The package of ``commit`` extracted under ``dest`` (tree root, package directory)."""
    package = package_dir(repo, commit)
    assert package is not None
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(repo), "archive", commit, package], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    # The tree's root is the package's parent, so paths read "requests/sessions.py".
    return package, dest / Path(package).parent


def corpus_of(tree: Path, key: str) -> Corpus:
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if p.is_file())
    functions = [f for rel in files for f in functions_of(tree, rel)]
    return Corpus(key=key, tree=tree, files=files, functions=functions)


# -- systems ------------------------------------------------------------------------------------


class Bm25Functions:
    """Each function's source a document, packed by rank until the budget."""

    def __init__(self, corpus: Corpus, counter: BpeTokenCounter) -> None:
        self.corpus, self.counter = corpus, counter
        self.sources = [source_of(corpus, f) for f in corpus.functions]
        self.index = _Bm25(self.sources)

    def context(self, query: str, budget: int) -> str:
        order = self.index.search(query)
        return pack([(self.corpus.functions[i].key, self.sources[i]) for i in order], budget, self.counter)


def index_tree(root: Path, tree: Path, name: str) -> Workspace:
    ws = Workspace(root / "data")
    ws.initialize()
    info, _ = resources.add(ws, tree, type_name="fs-directory", name=name)
    indexing.index(ws, [info])
    return ws


def ours(ws: Workspace) -> Callable[[str, int], tuple[str, float]]:
    def run(query: str, budget: int) -> tuple[str, float]:
        started = time.perf_counter()
        request = ContextRequest(query=query, max_tokens=budget)  # no flags: the default command
        context = context_service.assemble(ws, request, record=False)
        return context.render(), time.perf_counter() - started

    return run


def score_task(task: Task, systems: list[str], work: Path, counter: BpeTokenCounter, python: Path | None) -> list[dict]:
    rows: list[dict[str, Any]] = []
    contexts: dict[str, dict[int, str]] = {}
    seconds: dict[str, list[float]] = {}
    if "cleveragents" in systems:
        ws = index_tree(work, task.corpus.tree, f"local/{task.corpus.key}")
        run = ours(ws)
        contexts["cleveragents"] = {}
        for budget in BUDGETS:
            text, spent = run(task.query, budget)
            contexts["cleveragents"][budget] = text
            seconds.setdefault("cleveragents", []).append(spent)
    if "bm25-files" in systems:
        files = Bm25Files(task.corpus, counter)
        ranked = [(task.corpus.files[i], files.texts[i]) for i in files.files.search(task.query)]
        contexts["bm25-files"] = {b: pack(ranked, b, counter) for b in BUDGETS}
    if "bm25-functions" in systems:
        functions = Bm25Functions(task.corpus, counter)
        contexts["bm25-functions"] = {b: functions.context(task.query, b) for b in BUDGETS}
    if "random" in systems:
        shuffled = RandomFiles(task.corpus, counter, 5)
        order = shuffled.random.sample(task.corpus.files, len(task.corpus.files))
        ranked = [(rel, shuffled.texts[rel]) for rel in order]
        contexts["random"] = {b: pack(ranked, b, counter) for b in BUDGETS}
    if "aider" in systems and python is not None:
        # Aider's map for a query: the identifiers the query names are its "mentioned" ones.
        idents = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", task.query)))[:30]
        job = [{"kind": "map", "chat": [], "idents": idents, "budgets": BUDGETS}]
        [result] = AiderRepoMap(task.corpus, ENCODING, python).run(job)
        contexts["aider"] = {int(b): text for b, text in result["maps"].items()}
    for system, by_budget in contexts.items():
        for budget, text in by_budget.items():
            tokens = counter.count(text)
            rows.append(
                {
                    "kind": task.kind,
                    "task": task.name,
                    "system": system,
                    "budget": budget,
                    "gold": len(task.gold),
                    "recall": recall(text, task.gold, task.corpus),
                    "tokens": tokens,
                    "violation": tokens > budget,
                }
            )
    for system, values in seconds.items():
        for row in rows:
            if row["system"] == system:
                row["seconds_median"] = round(statistics.median(values), 3)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in sorted({r["kind"] for r in rows}):
        for system in sorted({r["system"] for r in rows}):
            for budget in BUDGETS:
                at = [r for r in rows if r["kind"] == kind and r["system"] == system and r["budget"] == budget]
                if not at:
                    continue
                out.setdefault(kind, {}).setdefault(system, {})[str(budget)] = {
                    "tasks": len(at),
                    "gold_body_recall": round(statistics.mean(r["recall"] for r in at), 4),
                    "tokens_mean": round(statistics.mean(r["tokens"] for r in at), 1),
                    "violations": sum(1 for r in at if r["violation"]),
                }
    return out


def table(summary: dict[str, Any]) -> str:
    lines = []
    for kind, systems in summary.items():
        lines.append(f"{kind}: gold body recall / mean tokens / violations at {', '.join(map(str, BUDGETS))}")
        for system, by_budget in systems.items():
            cells = [
                f"{c['gold_body_recall']:.3f}/{c['tokens_mean']:.0f}/{c['violations']}"
                for b in BUDGETS
                if (c := by_budget.get(str(b)))
            ]
            lines.append(f"  {system:15} " + "  ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="a git repository of requests (fix-commit tasks)")
    parser.add_argument("--tasks", type=int, default=30, help="fix-commit tasks (the most recent that qualify)")
    parser.add_argument("--localization", type=int, default=30, help="docstring-blanked localization tasks")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS), help=f"subset of {','.join(SYSTEMS)}")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if set(systems) - set(SYSTEMS):
        parser.error(f"unknown systems {sorted(set(systems) - set(SYSTEMS))}")
    counter = counter_for(ENCODING)
    python = aider_python(progress) if "aider" in systems else None
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    selected: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-context-use-") as tmp:
        work = Path(tmp)
        if args.repo and args.tasks:
            commits = fix_commits(args.repo, args.tasks)
            progress(f"{len(commits)} fix commits qualify (most recent {args.tasks})")
            for number, (commit, parent, message, gold) in enumerate(commits):
                root = work / f"fix-{number}"
                package, tree = checkout(args.repo, parent, root / "tree")
                corpus = corpus_of(tree, "requests")
                prefix = Path(package).parent.as_posix()
                keys = {(Path(p).relative_to(prefix).as_posix() if prefix != "." else p, q) for p, q in gold}
                functions = [f for f in corpus.functions if (f.path, f.qualname) in keys]
                if len(functions) != len(keys):
                    continue
                task = Task("fix-commit", commit[:10], message[:MAX_QUERY_CHARS], functions, corpus)
                rows += score_task(task, systems, root, counter, python)
                selected.append({"commit": commit, "parent": parent, "gold": [f.key for f in functions]})
                progress(f"fix {number + 1}/{len(commits)} {commit[:10]}: {message.splitlines()[0][:60]}")
        if args.localization:
            tree = work / "localization" / "tree"
            corpus = prepare("requests", tree, localization=args.localization, seed=args.seed)
            ws_root = work / "localization"
            ws = index_tree(ws_root, tree, "local/requests")
            run = ours(ws)
            files = Bm25Files(corpus, counter) if "bm25-files" in systems else None
            functions_index = Bm25Functions(corpus, counter) if "bm25-functions" in systems else None
            shuffled = RandomFiles(corpus, counter, args.seed)
            for function in corpus.localization:
                query = query_of(function)
                contexts: dict[str, dict[int, str]] = {}
                if "cleveragents" in systems:
                    contexts["cleveragents"] = {b: run(query, b)[0] for b in BUDGETS}
                if files is not None:
                    ranked = [(corpus.files[i], files.texts[i]) for i in files.files.search(query)]
                    contexts["bm25-files"] = {b: pack(ranked, b, counter) for b in BUDGETS}
                if functions_index is not None:
                    contexts["bm25-functions"] = {b: functions_index.context(query, b) for b in BUDGETS}
                if "random" in systems:
                    order = shuffled.random.sample(corpus.files, len(corpus.files))
                    contexts["random"] = {b: pack([(r, shuffled.texts[r]) for r in order], b, counter) for b in BUDGETS}
                for system, by_budget in contexts.items():
                    for budget, text in by_budget.items():
                        tokens = counter.count(text)
                        rows.append(
                            {
                                "kind": "localization",
                                "task": function.key,
                                "system": system,
                                "budget": budget,
                                "gold": 1,
                                "recall": recall(text, [function], corpus),
                                "tokens": tokens,
                                "violation": tokens > budget,
                            }
                        )
            progress(f"localization: {len(corpus.localization)} queries")
    summary = summarize(rows)
    print(table(summary))
    seconds = [r["seconds_median"] for r in rows if r.get("seconds_median") is not None]
    result = {
        "config": {"budgets": BUDGETS, "encoding": ENCODING, "systems": systems, "seed": args.seed},
        "tasks": selected,
        "summary": summary,
        "ours_seconds_median": statistics.median(seconds) if seconds else None,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
        progress(f"wrote {args.json}")


if __name__ == "__main__":
    main()
