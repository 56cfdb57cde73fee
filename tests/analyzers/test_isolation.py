"""No analyzer failure drops a file: a definition whose analysis raises is lost alone, recorded
on the file node with its range and the error; the published-package sweep and the fuzz test
hold every code analyzer to it on real files."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleveragents.analyzers import go, java, python, rust, typescript
from cleveragents.analyzers._isolation import DEFINITION_FAILURE, FILE_FAILURE, PHASE_FAILURE
from cleveragents.indexing.model import Analyzer, FileAnalysis, RenderRequest
from cleveragents.terms import CA
from corpora.fetch import ChecksumError, FetchError, corpus_dir
from tests.analyzers.support import analyze, graph, iri, select

CODE_ANALYZERS: list[Analyzer] = [a for m in (python, typescript, rust, java, go) for a in m.ANALYZERS]


class InjectedBug(Exception):
    """The fake analyzer bug these tests plant in one definition's handler."""


def _failing_on(name: str, original: Callable, pick: Callable) -> Callable:
    def handler(*args: object, **kwargs: object) -> object:
        if pick(*args) == name:
            raise InjectedBug(f"planted in {name}")
        return original(*args, **kwargs)

    return handler


# (analyzer module, path, source with a good and a broken definition, the handler to break,
#  how the handler's arguments name the definition, the key of the good one, of the broken one)
CASES = {
    "python": (
        python,
        "pkg/m.py",
        "def good():\n    broken()\n\nclass Broken:\n    def method(self):\n        good()\n\ndef after():\n    pass\n",
        ("_FileAnalyzer", "definition"),
        lambda self, node, parent: self.text(node.child_by_field_name("name")),
        ["good", "after"],
        ["Broken", "Broken.method"],
    ),
    "rust": (
        rust,
        "src/lib.rs",
        "fn good() { broken(); }\nstruct Broken { x: u8 }\nimpl Broken { fn m(&self) { good(); } }\nfn after() {}\n",
        ("_Builder", "struct"),
        lambda self, node, ctx: node.child_by_field_name("name").text.decode(),
        ["good", "after"],
        ["Broken"],
    ),
    "go": (
        go,
        "pkg/m.go",
        "package pkg\n\nfunc good() { broken() }\n\nfunc broken() { good() }\n\nfunc after() {}\n",
        ("_Builder", "function"),
        lambda self, node: node.child_by_field_name("name").text.decode(),
        ["good", "after"],
        ["broken"],
    ),
    "java": (
        java,
        "src/p/A.java",
        "package p;\nclass A {\n  void good() { broken(); }\n  void broken() { good(); }\n  void after() {}\n}\n",
        ("_FileWalk", "callable"),
        lambda self, node, owner: node.child_by_field_name("name").text.decode(),
        ["A", "A.good", "A.after"],
        ["A.broken"],
    ),
    "typescript": (
        typescript,
        "src/m.ts",
        "export function good() { broken(); }\nclass Broken { method() { good(); } }\nfunction after() {}\n",
        ("_HANDLERS", "class_declaration"),  # the pass dispatches through this table
        lambda self, node, scope: node.child_by_field_name("name").text.decode(),
        ["good", "after"],
        ["Broken", "Broken.method"],
    ),
}


@pytest.mark.parametrize("language", list(CASES))
def test_a_failing_definition_is_lost_alone_and_recorded(language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, path, text, (owner, method), pick, kept, lost = CASES[language]
    holder = getattr(module, owner)
    broken_name = lost[0].rsplit(".", 1)[-1]
    if isinstance(holder, dict):
        monkeypatch.setitem(holder, method, _failing_on(broken_name, holder[method], pick))
    else:
        monkeypatch.setattr(holder, method, _failing_on(broken_name, getattr(holder, method), pick))
    analyzer = module.ANALYZERS[0]
    analysis = analyze(analyzer, path, text)
    keys = {e.key for e in analysis.entities}
    assert set(kept) <= keys, keys
    assert not keys & set(lost), keys
    failures = [p for p in analysis.problems if p.message.startswith(DEFINITION_FAILURE)]
    assert len(failures) == 1 and "InjectedBug: planted in" in failures[0].message
    assert not any(p.message.startswith(FILE_FAILURE) for p in analysis.problems)
    # The range is the broken definition's: it starts on its line.
    line = next(n for n, written in enumerate(text.splitlines(), 1) if broken_name in written.split("(")[0])
    assert failures[0].span is not None and failures[0].span.start_line == line
    # No edge leaves from an entity that is not there.
    assert all(r.source in keys for r in analysis.references)
    # On the file node in the graph: the error with its range, and the definition it lost.
    store = graph(analyzer, path, text)
    rows = select(store, f"SELECT ?e ?h WHERE {{ <{iri(path)}> <{CA}parseError> ?e ; <{CA}hiddenByParseError> ?h }}")
    assert [(r["e"].split(" ", 1)[0], r["h"]) for r in rows] == [(failures[0].span.literal(), broken_name)]


def test_a_failing_phase_keeps_every_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object) -> None:
        raise InjectedBug("calls")

    monkeypatch.setattr(python._FileAnalyzer, "calls", explode)
    analysis = analyze(python.ANALYZERS[0], "pkg/m.py", "def a():\n    b()\n\ndef b():\n    pass\n")
    assert [e.key for e in analysis.entities] == ["", "a", "b"]
    assert [p.message for p in analysis.problems] == [f"{PHASE_FAILURE}: calls: InjectedBug: calls"]


# ── every file of real published packages ─────────────────────────────────────────────────

# Whole packages per language: crates from Debian's librust-*-dev, Go modules from golang-*-dev,
# Java (and TypeScript/JavaScript) from npm packages that ship Android sources, the pinned
# Python, TypeScript and JavaScript corpora. Every file a code analyzer handles is analyzed.
SWEEP = {
    "rust": ["rust-regex-1.7.1", "rust-regex-syntax-0.6.27", "rust-memchr-2.5.0", "rust-semver-1.0.14",
             "rust-itoa-1.0.1", "cryptography-41.0.7"],
    "go": ["go-uuid-1.3.0", "go-errors-0.9.1", "go-pflag-1.0.6", "gojsonnet-0.22.0"],
    "java": ["react-native-svg-15.8.0", "react-native-fs-2.20.0", "jpype1-1.5.2"],
    "typescript": ["react-native-svg-15.8.0", "rxjs-7.8.1", "react-query-5.62.0", "axios-1.7.9", "express-4.21.2"],
    "python": ["requests-2.32.3", "jpype1-1.5.2", "cryptography-41.0.7"],
}  # fmt: skip
# At least this many files per language, so a sweep that silently finds nothing fails.
MINIMUM_FILES = {"rust": 200, "go": 150, "java": 230, "typescript": 2000, "python": 400}


def _corpus(name: str) -> Path:
    try:
        return corpus_dir(name)
    except ChecksumError:
        raise  # a changed archive is a failure, never a skip
    except FetchError as exc:
        pytest.skip(f"corpus {name} could not be fetched (registry unreachable?): {exc}")


def _files(language: str) -> list[tuple[str, bytes]]:
    analyzer = next(a for a in CODE_ANALYZERS if a.name == language)
    found = []
    for name in SWEEP[language]:
        root = _corpus(name)
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            relative = path.relative_to(root).as_posix()
            if analyzer.handles(relative):
                found.append((f"{name}/{relative}", path.read_bytes()))
    return found


@pytest.mark.parametrize("language", list(SWEEP))
def test_every_file_of_published_packages_is_analyzed(language: str) -> None:
    analyzer = next(a for a in CODE_ANALYZERS if a.name == language)
    files = _files(language)
    assert len(files) >= MINIMUM_FILES[language]
    file_failures, definition_failures = [], []
    for path, data in files:
        analysis = analyze(analyzer, path.split("/", 1)[1], data)
        assert analysis.entities and analysis.entities[0].key == ""
        for problem in analysis.problems:
            if problem.message.startswith(FILE_FAILURE):
                file_failures.append(f"{path}: {problem.message}")
            elif problem.message.startswith((DEFINITION_FAILURE, PHASE_FAILURE)):
                definition_failures.append(f"{path}: {problem.message}")
    assert file_failures == []
    # Not required by the property, but each is an analyzer bug worth a look: none today.
    assert definition_failures == []


# ── mutated real files: nothing escapes an analyzer ───────────────────────────────────────


def _samples() -> list[tuple[Analyzer, str, bytes]]:
    """A few real files per language, the seeds the fuzzer mutates."""
    picked = []
    rng = random.Random(19)
    for language in SWEEP:
        analyzer = next(a for a in CODE_ANALYZERS if a.name == language)
        root = _corpus(SWEEP[language][0])
        files = sorted(p for p in root.rglob("*") if p.is_file() and analyzer.handles(p.relative_to(root).as_posix()))
        files = [p for p in files if p.stat().st_size < 20_000]
        for path in rng.sample(files, min(3, len(files))):
            picked.append((analyzer, path.relative_to(root).as_posix(), path.read_bytes()))
    return picked


@st.composite
def _mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """Cut, duplicate, swap or splice pieces of a real file, or insert bytes and tokens."""
    out = bytearray(data)
    tokens = [b"{", b"}", b"(", b")", b"[", b"]", b"<", b">", b":", b";", b",", b"impl ", b"for ", b"&", b"class ",
              b"def ", b"fn ", b"func ", b"function ", b"\n", b"    ", b"\"", b"'", b"/*", b"\\", b"\xff"]  # fmt: skip
    for _ in range(draw(st.integers(1, 6))):
        size = len(out)
        at = draw(st.integers(0, size))
        op = draw(st.sampled_from(["cut", "dup", "token", "bytes", "swap"]))
        length = draw(st.integers(0, min(400, size - at)))
        if op == "cut":
            del out[at : at + length]
        elif op == "dup":
            out[at:at] = out[at : at + length]
        elif op == "token":
            out[at:at] = draw(st.sampled_from(tokens))
        elif op == "bytes":
            out[at:at] = draw(st.binary(max_size=8))
        elif size:
            other = draw(st.integers(0, size - 1))
            out[at:at], out[other : other + length] = out[other : other + length], b""
    return bytes(out)


@pytest.fixture(scope="module")
def samples() -> list[tuple[Analyzer, str, bytes]]:
    return _samples()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_no_exception_escapes_an_analyzer_on_mutated_real_files(samples: list, data: st.DataObject) -> None:
    analyzer, path, original = data.draw(st.sampled_from(samples))
    mutated = data.draw(_mutation(original))
    analysis: FileAnalysis = analyzer.analyze(analyze_source(path, mutated))
    assert analysis.entities and analysis.entities[0].key == ""
    assert not [p.message for p in analysis.problems if p.message.startswith(FILE_FAILURE)]
    for entity in analysis.entities[:3]:  # and what was indexed renders
        request = RenderRequest(entity.key, entity.types, path, mutated, entity.span, "SIGNATURES", 0)
        assert isinstance(analyzer.render(request), str)


def analyze_source(path: str, data: bytes):
    from tests.analyzers.support import source

    return source(path, data)
