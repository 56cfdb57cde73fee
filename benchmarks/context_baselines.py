"""The baselines of the context benchmark, each behind the same two calls as our system:
``contexts(function, budgets)`` (the context text per budget, for dependency recall) and
``rank(query)`` (ranked files and functions, for localization).

- bm25: BM25 (bm25s) over whole files, packed in rank order and cut at the budget; for
  function-level localization, BM25 over function chunks (files have no function ranks).
- aider: Aider's RepoMap from a separate venv (context_aider_driver.py), no LLM.
- random: files in a seeded random order, packed like bm25.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import bm25s

from benchmarks.context_corpus import Corpus, Function
from cleveragents.context.tokens import BpeTokenCounter

AIDER_VENV = Path.home() / ".cache" / "cleveragents" / "aider-venv"
AIDER_PACKAGES = ["aider-chat", "bpe-openai"]  # bpe-openai: the driver counts with our encoding
DRIVER = Path(__file__).resolve().parent / "context_aider_driver.py"
CHARS_PER_TOKEN_CAP = 8  # packing stops adding text past budget * this many characters


@dataclass(frozen=True)
class Hit:
    """One ranked function: the qualified name when the system knows it, else name + line."""

    path: str
    name: str
    qualname: str | None = None
    line: int | None = None

    def matches(self, function: Function) -> bool:
        if self.path != function.path:
            return False
        if self.qualname is not None:
            return self.qualname == function.qualname
        return self.name == function.name and (self.line is None or self.line == function.line)


@dataclass
class Ranking:
    files: list[str]
    functions: list[Hit]


class System(Protocol):
    name: str

    def contexts(self, function: Function, budgets: list[int]) -> dict[int, str]: ...

    def rank(self, query: str) -> Ranking: ...


# -- shared helpers ----------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def tokenize(text: str) -> list[str]:
    """Identifier-aware terms: each identifier lowercased plus its snake_case and camelCase
    parts, so the baseline gets the same tokenization advantage our text backend has."""
    out: list[str] = []
    for ident in _IDENT.findall(text):
        out.append(ident.lower())
        parts = [p.lower() for piece in ident.split("_") for p in _CAMEL.findall(piece)]
        if len(parts) > 1:
            out += parts
    return out


def pack(texts: list[tuple[str, str]], budget: int, counter: BpeTokenCounter) -> str:
    """``# path`` + text of each item in order, cut on a token boundary at the budget."""
    parts: list[str] = []
    size = 0
    for path, text in texts:
        parts.append(f"# {path}\n{text}")
        size += len(parts[-1]) + 2
        if size > budget * CHARS_PER_TOKEN_CAP:
            break
    return counter.truncate("\n\n".join(parts), budget)


def source_of(corpus: Corpus, function: Function) -> str:
    lines = (corpus.tree / function.path).read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[function.line - 1 : function.end_line])


class _Bm25:
    def __init__(self, documents: list[str]) -> None:
        tokens = [tokenize(d) or ["<empty>"] for d in documents]
        self.vocabulary = {t for doc in tokens for t in doc}
        self.size = len(documents)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)

    def search(self, text: str) -> list[int]:
        query = [t for t in tokenize(text) if t in self.vocabulary]
        if not query:
            return []
        ids, scores = self.retriever.retrieve([query], k=self.size, show_progress=False)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


# -- bm25 ----------------------------------------------------------------------------------------


class Bm25Files:
    name = "bm25"

    def __init__(self, corpus: Corpus, counter: BpeTokenCounter) -> None:
        self.corpus = corpus
        self.counter = counter
        self.texts = [(corpus.tree / rel).read_text(encoding="utf-8") for rel in corpus.files]
        self.files = _Bm25(self.texts)
        lines = {rel: text.splitlines() for rel, text in zip(corpus.files, self.texts, strict=True)}
        self.chunks = corpus.functions
        self.functions = _Bm25(["\n".join(lines[f.path][f.line - 1 : f.end_line]) for f in self.chunks])

    def contexts(self, function: Function, budgets: list[int]) -> dict[int, str]:
        order = self.files.search(source_of(self.corpus, function))
        ranked = [(self.corpus.files[i], self.texts[i]) for i in order]
        return {budget: pack(ranked, budget, self.counter) for budget in budgets}

    def rank(self, query: str) -> Ranking:
        files = [self.corpus.files[i] for i in self.files.search(query)]
        functions = [self.chunks[i] for i in self.functions.search(query)]
        return Ranking(files, [Hit(f.path, f.name, f.qualname, f.line) for f in functions])


# -- random --------------------------------------------------------------------------------------


class RandomFiles:
    name = "random"

    def __init__(self, corpus: Corpus, counter: BpeTokenCounter, seed: int) -> None:
        self.corpus = corpus
        self.counter = counter
        self.random = random.Random(seed)
        self.texts = {rel: (corpus.tree / rel).read_text(encoding="utf-8") for rel in corpus.files}

    def contexts(self, function: Function, budgets: list[int]) -> dict[int, str]:
        order = self.random.sample(self.corpus.files, len(self.corpus.files))
        ranked = [(rel, self.texts[rel]) for rel in order]
        return {budget: pack(ranked, budget, self.counter) for budget in budgets}

    def rank(self, query: str) -> Ranking:
        files = self.random.sample(self.corpus.files, len(self.corpus.files))
        functions = self.random.sample(self.corpus.functions, len(self.corpus.functions))
        return Ranking(files, [Hit(f.path, f.name, f.qualname, f.line) for f in functions])


# -- aider ---------------------------------------------------------------------------------------


def aider_python(progress: Any = print) -> Path:
    """The aider venv's python, creating the venv and installing aider-chat (PyPI) on first use."""
    python = AIDER_VENV / "bin" / "python"
    check = [str(python), "-c", "import aider.repomap, bpe_openai"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    progress(f"installing {' '.join(AIDER_PACKAGES)} into {AIDER_VENV} (once; a few minutes)")
    venv.EnvBuilder(with_pip=True, clear=True).create(AIDER_VENV)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *AIDER_PACKAGES], check=True)
    return python


class AiderRepoMap:
    """Jobs are batched: one driver process per corpus and phase keeps aider's tag cache warm."""

    name = "aider"

    def __init__(self, corpus: Corpus, encoding: str, python: Path) -> None:
        self.corpus = corpus
        self.encoding = encoding
        self.python = python
        self.seconds: list[float] = []  # per job, as the driver measured

    def run(self, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        spec = {"root": str(self.corpus.tree), "files": self.corpus.files, "encoding": self.encoding, "jobs": jobs}
        with tempfile.TemporaryDirectory() as work:
            source, target = Path(work) / "in.json", Path(work) / "out.json"
            source.write_text(json.dumps(spec))
            env = {**os.environ, "PYTHONPATH": ""}  # nothing of this checkout in aider's venv
            done = subprocess.run(
                [str(self.python), str(DRIVER), str(source), str(target)], capture_output=True, text=True, env=env
            )
            if done.returncode != 0:
                print(done.stderr[-3000:], file=sys.stderr)
                raise RuntimeError(f"the aider driver failed (exit {done.returncode})")
            results: list[dict[str, Any]] = json.loads(target.read_text())
        self.seconds += [r["seconds"] for r in results]
        return results

    def contexts_many(self, functions: list[Function], budgets: list[int]) -> list[dict[int, str]]:
        jobs = [{"kind": "map", "chat": [f.path], "idents": [f.name], "budgets": budgets} for f in functions]
        return [{int(b): text for b, text in r["maps"].items()} for r in self.run(jobs)]

    def rank_many(self, queries: list[str]) -> list[Ranking]:
        results = self.run([{"kind": "rank", "text": q} for q in queries])
        return [
            Ranking(r["files"], [Hit(path, name, None, line) for path, name, line in r["definitions"]]) for r in results
        ]
