"""ca:syntaxFingerprint: equal when only whitespace and comments differ, different when code does."""

from __future__ import annotations

import random

import pytest
import tree_sitter as ts

from cleveragents.analyzers import go, java, python, rust, typescript
from cleveragents.analyzers._treesitter import SYNTAX_FINGERPRINT
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze

# (module, path, key, text, the same code laid out and commented differently, different code)
CASES = {
    "python": (
        python,
        "pkg/m.py",
        "f",
        "def f(a, b):\n    for (k, v) in a:\n        g('x', k)\n",
        'def f(a,\n      b):\n    # loop\n    for k, v in a:\n\n        g("x", k)  # call\n',
        "def f(a, b):\n    for (k, v) in a:\n        g('y', k)\n",
    ),
    "python-blocks": (
        python,
        "pkg/m.py",
        "f",
        "def f(a):\n    if a:\n        b()\n    c()\n",
        "def f(a):\n    if a:\n\n        b()  # then\n    c()\n",
        "def f(a):\n    if a:\n        b()\n        c()\n",  # same tokens, another block
    ),
    "rust": (rust, "src/lib.rs", "f", "fn f() { g(); }", "fn f() {\n    // note\n    g();\n}", "fn f() { h(); }"),
    "go": (
        go,
        "p/a.go",
        "F",
        "package p\nfunc F() { g() }",
        "package p\nfunc F() {\n\t// x\n\tg()\n}",
        "package p\nfunc F() { h() }",
    ),
    "java": (
        java,
        "p/A.java",
        "A.f",
        "class A { void f() { g(); } }",
        "class A {\n  void f() {\n    /* c */ g();\n  }\n}",
        "class A { void f() { g(1); } }",
    ),
    "typescript": (
        typescript,
        "a.ts",
        "f",
        "function f() { g(); }",
        "function f() {\n  // c\n  g();\n}",
        "function f() { g(); g(); }",
    ),
}


def _fingerprint(module, path: str, text: str, key: str) -> str:
    analysis = analyze(module.ANALYZERS[0], path, text)
    assert not analysis.problems
    return next(e for e in analysis.entities if e.key == key).values[SYNTAX_FINGERPRINT][0]


@pytest.mark.parametrize("case", list(CASES))
def test_fingerprints_ignore_layout_and_comments_only(case: str) -> None:
    module, path, key, text, reformatted, changed = CASES[case]
    original = _fingerprint(module, path, text, key)
    assert _fingerprint(module, path, reformatted, key) == original
    assert _fingerprint(module, path, changed, key) != original


# -- the file-at-once path gives what the region-by-region definition gives ----------------

REAL_FILES = ("src/requests/sessions.py", "src/requests/models.py", "src/requests/utils.py")


def _region_cases(data: bytes) -> list[tuple[int, int]]:
    """Every definition of the file, plus regions that start or end inside a string, a comment
    or a word, and random ones (a fixed seed): where the fast path must step aside."""
    spans = [
        (e.span.start_byte, e.span.end_byte) for e in analyze(python.ANALYZERS[0], "pkg/m.py", data).entities if e.span
    ]
    rng = random.Random(19)
    for _ in range(300):
        start = rng.randrange(len(data))
        spans.append((start, min(len(data), start + rng.randrange(1, 4000))))
    for marker in (b'"', b"#", b"def "):
        at = data.find(marker, len(data) // 3)
        spans += [(at + 1, at + 200), (at - 50, at + 1)]
    return spans


@pytest.mark.parametrize("name", REAL_FILES)
def test_many_equals_the_region_by_region_definition_on_real_files(name: str) -> None:
    data = (corpus_dir("requests-2.32.3") / name).read_bytes()
    # The sentinel byte inside the file sends every region through the definition: both agree too.
    for text in (data, data.replace(b"\n\n", b"\n\x03\n", 3)):
        tree = python._parse(text)
        prints = python._fingerprints(ts.QueryCursor(python._grammar().query).captures(tree.root_node), text)
        regions = _region_cases(text)
        assert prints.many(regions) == [prints._of_region(s, e) for s, e in regions]
