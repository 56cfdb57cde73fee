"""What the syntax fingerprint (``ca:syntaxFingerprint``) costs the Python analyzer.

CPU time of ``PythonAnalyzer.analyze`` over every file of Django's ``django/`` package (880
files, a pinned corpus), in one process, the variants alternating round by round, medians:

* ``current``: the analyzer as it is;
* ``no fingerprints``: the same with its fingerprint phase switched off (the floor);
* ``--against REV``: the analyzer and ``analyzers/_treesitter.py`` as they were at a git
  revision (loaded from ``git show``), to measure a change before/after in the same run.
  Its fingerprints must equal the current ones, entity by entity (checked).

    python benchmarks/bench_fingerprints.py --rounds 5
    python benchmarks/bench_fingerprints.py --rounds 5 --against main
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType

import tree_sitter as ts
import tree_sitter_python

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cleveragents.analyzers.python as current  # noqa: E402
from cleveragents.analyzers import _treesitter  # noqa: E402
from cleveragents.indexing.model import SourceFile  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

FINGERPRINT = str(_treesitter.SYNTAX_FINGERPRINT)


def _module_at(revision: str, path: str, name: str, workdir: Path) -> ModuleType:
    source = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, check=True, capture_output=True).stdout
    file = workdir / f"{name}.py"
    file.write_bytes(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def analyzer_at(revision: str, workdir: Path) -> Callable[[SourceFile], object]:
    """The Python analyzer of ``revision``, with that revision's tree-sitter helpers."""
    helpers = _module_at(revision, "analyzers/_treesitter.py", "_treesitter_then", workdir)
    python = _module_at(revision, "analyzers/python.py", "python_then", workdir)
    python.tsh = helpers  # type: ignore[attr-defined]
    return python.PythonAnalyzer().analyze  # type: ignore[no-any-return]


_GRAMMAR = current._grammar


@cache
def _grammar_without_fingerprints() -> object:
    grammar = _GRAMMAR()
    return type(grammar)(ts.Query(ts.Language(tree_sitter_python.language()), current._QUERY_TEXT), grammar.kinds)


def without_fingerprints(source: SourceFile) -> object:
    """The analyzer with no fingerprint work at all: its query without the fingerprint's
    patterns, no fingerprint built, none added."""
    saved = current._grammar, current._fingerprints, _treesitter.add_fingerprints
    current._grammar = _grammar_without_fingerprints  # type: ignore[assignment]
    current._fingerprints = lambda found, data: None  # type: ignore[assignment]
    _treesitter.add_fingerprints = lambda entities, prints: None  # type: ignore[assignment]
    try:
        return current.PythonAnalyzer().analyze(source)
    finally:
        current._grammar, current._fingerprints, _treesitter.add_fingerprints = saved


def fingerprints(analysis: object) -> list[tuple[str, object]]:
    return [(e.key, e.values.get(FINGERPRINT)) for e in analysis.entities]  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", help="a git revision whose analyzer is measured in the same run")
    options = parser.parse_args()
    root = corpus_dir("django")
    sources = [
        SourceFile(p.relative_to(root).as_posix(), p.read_bytes(), "") for p in sorted((root / "django").rglob("*.py"))
    ]
    variants: dict[str, Callable[[SourceFile], object]] = {
        "current": current.PythonAnalyzer().analyze,
        "no fingerprints": without_fingerprints,
    }
    with tempfile.TemporaryDirectory() as workdir:
        if options.against:
            variants[f"at {options.against}"] = analyzer_at(options.against, Path(workdir))
            then = variants[f"at {options.against}"]
            differing = sum(fingerprints(current.PythonAnalyzer().analyze(s)) != fingerprints(then(s)) for s in sources)
            print(f"files whose fingerprints differ from {options.against}: {differing} of {len(sources)}")
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(options.rounds):
            for name, analyze in variants.items():
                started = time.process_time()
                for source in sources:
                    analyze(source)
                seconds[name].append(time.process_time() - started)
    floor = statistics.median(seconds["no fingerprints"])
    for name, runs in seconds.items():
        median = statistics.median(runs)
        each = ", ".join(f"{r:.2f}" for r in runs)
        print(f"{name}: median {median:.2f} s CPU ({each}); x{median / floor:.2f} the floor")


if __name__ == "__main__":
    main()
