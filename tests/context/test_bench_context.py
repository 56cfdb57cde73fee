"""The context benchmark's own machinery on requests 2.32.3: corpus preparation, the jedi
dependency reference, the presence check, the baselines' packing and rankings, and the
Aider driver (when its venv exists; the benchmark creates it, a test does not install)."""

from __future__ import annotations

import ast

import pytest

pytest.importorskip("jedi", reason="jedi is not installed (the dev extra pins it)")

from benchmarks.bench_context import (
    BUDGETS,
    entity_iri,
    hit_of,
    localization_rows,
    recall_rows,
    summarize_localization,
    summarize_recall,
)
from benchmarks.context_baselines import AIDER_VENV, AiderRepoMap, Bm25Files, RandomFiles, pack, tokenize
from benchmarks.context_corpus import Corpus, Definition, Function, References, functions_of, prepare, query_of
from cleveragents.context.tokens import counter_for

ULID = "01M8QFC9X8GB71MBHWPNP9YNPP"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return prepare("requests", tmp_path_factory.mktemp("bench") / "tree", localization=8, seed=5)


def test_docstrings_are_blanked_and_line_numbers_kept(corpus: Corpus) -> None:
    assert len(corpus.localization) == 8
    for function in corpus.localization:
        again = {f.qualname: f for f in functions_of(corpus.tree, function.path)}[function.qualname]
        assert again.docstring is None  # gone from what is indexed
        assert (again.line, again.end_line) == (function.line, function.end_line)
        assert len(query_of(function)) >= 40
    for rel in {f.path for f in corpus.localization}:
        ast.parse((corpus.tree / rel).read_text())  # still valid Python


@pytest.fixture(scope="module")
def send(corpus: Corpus) -> Function:
    return next(f for f in corpus.functions if f.key == "requests/sessions.py#Session.send")


@pytest.fixture(scope="module")
def send_refs(corpus: Corpus, send: Function) -> list[Definition]:
    return References(corpus.tree).of(send)  # jedi: the slow part of this module


def test_jedi_reference_of_session_send(send: Function, send_refs: list[Definition]) -> None:
    refs = send_refs
    names = {(d.path, d.name) for d in refs}
    assert ("requests/sessions.py", "get_adapter") in names
    assert ("requests/hooks.py", "dispatch_hook") in names
    assert ("requests/cookies.py", "extract_cookies_to_jar") in names
    assert all(not (d.path == send.path and send.line <= d.line <= send.end_line) for d in refs)  # no locals


def test_presence_needs_a_definition_line_not_a_mention() -> None:
    function = Definition(
        "requests/hooks.py", "dispatch_hook", 22, "function", ["def dispatch_hook(key, hooks, hook_data, **kwargs):"]
    )
    assert function.present_in("x\ndef dispatch_hook(key, hooks, hook_data, **kwargs):\n")
    assert not function.present_in("r = dispatch_hook('response', hooks, r)")
    variable = Definition(
        "requests/adapters.py",
        "max_retries",
        190,
        "statement",
        ["self.max_retries = Retry(0, read=False)", "self.max_retries = Retry.from_int(max_retries)"],
    )
    assert variable.present_in("        self.max_retries = Retry(0, read=False)\n")  # one of its assignments
    assert not variable.present_in('__attrs__ = ["max_retries", "config"]')


def test_packing_never_exceeds_the_budget(corpus: Corpus) -> None:
    counter = counter_for("o200k_base")
    texts = [(rel, (corpus.tree / rel).read_text()) for rel in corpus.files]
    for budget in [1, 7, *BUDGETS]:
        assert counter.count(pack(texts, budget, counter)) <= budget


def test_identifier_aware_tokens() -> None:
    assert tokenize("get_adapter HTTPAdapter") == ["get_adapter", "get", "adapter", "httpadapter", "http", "adapter"]


def test_entity_iri_round_trip(corpus: Corpus) -> None:
    function = corpus.functions[0]
    hit = hit_of(entity_iri(ULID, function), ULID)
    assert hit is not None and hit.matches(function)
    assert hit_of(f"https://cleveragents.ai/id/src/{ULID}/requests/api.py", ULID) is None  # a file node


def test_bm25_and_random_baselines(corpus: Corpus, send: Function, send_refs: list[Definition]) -> None:
    counter = counter_for("o200k_base")
    bm25 = Bm25Files(corpus, counter)
    rows = recall_rows(bm25, [send], {send.key: send_refs}, counter, [1000, 8000])
    summary = summarize_recall(rows, [1000, 8000])
    assert summary["8000"]["budget_violations"] == 0 and summary["8000"]["tokens_max"] <= 8000
    assert summary["8000"]["recall"] >= summary["1000"]["recall"] > 0
    local = summarize_localization(localization_rows(bm25, corpus.localization))
    assert local["file_acc@5"] >= 0.5  # measured 1.0 on this sample
    shuffled = summarize_localization(localization_rows(RandomFiles(corpus, counter, seed=1), corpus.localization))
    assert shuffled["queries"] == len(corpus.localization)


@pytest.mark.skipif(not (AIDER_VENV / "bin" / "python").exists(), reason="the aider venv is created by the benchmark")
def test_aider_repo_map_driver(corpus: Corpus, send: Function) -> None:
    counter = counter_for("o200k_base")
    aider = AiderRepoMap(corpus, "o200k_base", AIDER_VENV / "bin" / "python")
    (maps,) = aider.contexts_many([send], [1000, 4000])
    assert "requests/adapters.py:" in maps[4000]  # the map lists other files, not the chat file's
    assert counter.count(maps[4000]) > counter.count(maps[1000]) > 0
    (ranking,) = aider.rank_many([query_of(corpus.localization[0])])
    assert set(ranking.files) == set(corpus.files) and ranking.functions
