"""ca:syntaxFingerprint: equal when only whitespace and comments differ, different when code does."""

from __future__ import annotations

import pytest

from cleveragents.analyzers import go, java, python, rust, typescript
from cleveragents.analyzers._treesitter import SYNTAX_FINGERPRINT
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
