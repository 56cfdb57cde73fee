"""Python's own ``ast`` as the oracle for the Python analyzer, on pinned real corpora.

For every file ``ast`` parses, every class and function ``ast`` finds must be in the
analysis under the same qualified name, with the same parameters (names and kinds:
positional-only, ``*args``, keyword-only, ``**kw``) and the same base-class expressions.

Qualified names: the analyzer keys a nested definition by its dotted path without
``<locals>`` (``outer.inner``, ``Class.method.Helper``), so the oracle builds the same
dotted path from ``ast``; several definitions of one name (property setters, overloads,
conditional definitions) are compared in source order. Base classes are compared as
``ast.unparse`` of the bases from the file and from the analyzer's one-line signature
(which therefore has to be valid Python).
"""

from __future__ import annotations

import ast
import json
import time
from collections import defaultdict
from pathlib import Path

from cleveragents.analyzers.python import (
    CALLS,
    CLASS,
    FUNCTION,
    INHERITS_FROM,
    METHOD,
    PARAMETERS,
    PROTOCOL,
    QUALIFIED_NAME,
    SIGNATURE,
    TESTS_CALLABLE,
    PythonAnalyzer,
    module_name,
)
from cleveragents.indexing.link import SymbolTable
from cleveragents.indexing.model import FileAnalysis
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze

PY = PythonAnalyzer()
DEFINITIONS = {CLASS, PROTOCOL, FUNCTION, METHOD}
Found = dict[str, list[tuple[str, tuple[object, ...]]]]  # qualified name -> (kind, details) in source order


def from_ast(tree: ast.Module) -> Found:
    items: list[tuple[tuple[int, int], str, tuple[str, tuple[object, ...]]]] = []
    stack: list[tuple[ast.stmt, str]] = [(statement, "") for statement in tree.body]
    while stack:  # definitions are statements: expressions need no visit
        node, prefix = stack.pop()
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + node.name
            info = ("class", bases(node)) if isinstance(node, ast.ClassDef) else ("def", parameters(node.args))
            items.append(((node.lineno, node.col_offset), name, info))
            stack += [(statement, name + ".") for statement in node.body]
            continue
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, block, ()):
                if isinstance(child, ast.ExceptHandler | ast.match_case):
                    stack += [(statement, prefix) for statement in child.body]
                else:
                    stack.append((child, prefix))
    found: Found = defaultdict(list)
    for _, name, info in sorted(items):
        found[name].append(info)
    return found


def bases(node: ast.ClassDef) -> tuple[str, ...]:
    return tuple(ast.unparse(base) for base in node.bases)


def parameters(args: ast.arguments) -> tuple[tuple[str, str], ...]:
    return (
        *((a.arg, "positional_only") for a in args.posonlyargs),
        *((a.arg, "positional") for a in args.args),
        *([(args.vararg.arg, "var_positional")] if args.vararg else []),
        *((a.arg, "keyword_only") for a in args.kwonlyargs),
        *([(args.kwarg.arg, "var_keyword")] if args.kwarg else []),
    )


def from_analysis(analysis: FileAnalysis, module: str) -> Found:
    found: Found = defaultdict(list)
    for entity in analysis.entities:
        if not DEFINITIONS & set(entity.types):
            continue
        qualified = str(entity.values[QUALIFIED_NAME][0])
        name = qualified.removeprefix(module + ".") if module else qualified
        if CLASS in entity.types or PROTOCOL in entity.types:
            header = ast.parse(f"{entity.values[SIGNATURE][0]}: pass").body[0]
            assert isinstance(header, ast.ClassDef)
            found[name].append(("class", bases(header)))
        else:
            listed = json.loads(str(entity.values[PARAMETERS][0]))
            found[name].append(("def", tuple((p["name"], p["kind"]) for p in listed)))
    return found


def compare(root: Path, files: list[Path]) -> tuple[int, int, list[str], float, dict[str, FileAnalysis]]:
    """(matched, expected, mismatches, seconds spent analyzing, analyses by path)."""
    matched = expected = 0
    mismatches: list[str] = []
    elapsed = 0.0
    analyses: dict[str, FileAnalysis] = {}
    for path in files:
        data = path.read_bytes()
        relative = path.relative_to(root).as_posix()
        started = time.perf_counter()
        analysis = analyze(PY, relative, data)
        elapsed += time.perf_counter() - started
        analyses[relative] = analysis
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), relative
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue  # not Python 3 (Django keeps a few deliberately broken fixtures)
        want, got = from_ast(tree), from_analysis(analysis, module_name(relative))
        for name, infos in want.items():
            for index, info in enumerate(infos):
                expected += 1
                have = got.get(name, [])
                if index < len(have) and have[index] == info:
                    matched += 1
                else:
                    mismatches.append(f"{relative}: {name} {info} != {have[index] if index < len(have) else None}")
        mismatches += [f"{relative}: {name} not in ast" for name in got if name not in want]
    return matched, expected, mismatches, elapsed, analyses


def check(name: str, subdirectory: str = "", every: int = 1) -> dict[str, FileAnalysis]:
    """Compare every ``every``-th file of the corpus (or of one of its folders) with ``ast``."""
    root = corpus_dir(name)
    files = sorted((root / subdirectory).rglob("*.py"))[::every]
    matched, expected, mismatches, elapsed, analyses = compare(root, files)
    print(
        f"\n{name}/{subdirectory}: {len(files)} files, {matched}/{expected} definitions match ast "
        f"({100 * matched / max(expected, 1):.2f}%), analyzed at {len(files) / elapsed:.0f} files/s"
    )
    assert mismatches == [], mismatches[:20]
    assert expected > 0
    return analyses


def test_requests_matches_ast() -> None:
    analyses = check("requests-2.32.3")
    assert len(analyses) == 34 and all(a.problems == [] for a in analyses.values())
    names = {str(e.values[QUALIFIED_NAME][0]) for e in analyses["src/requests/sessions.py"].entities if e.symbols}
    assert {"requests.sessions", "requests.sessions.Session.request", "requests.sessions.Session.headers"} <= names


def test_requests_references_link_across_files() -> None:
    """The names the analyzer emits are the names other files define: known edges of requests resolve."""
    analyses = check("requests-2.32.3")
    table = SymbolTable()
    for path, analysis in analyses.items():
        for entity in analysis.entities:
            for namespace, symbol in entity.symbols:
                table.define(namespace, symbol, f"{path}#{entity.key}")

    def edges(path: str, predicate: str, source: str) -> set[str]:
        found = set()
        for reference in analyses[path].references:
            if reference.predicate == predicate and reference.source == source:
                found.update(target for target, _ in table.resolve(reference))
        return found

    assert "src/requests/sessions.py#Session" in edges("src/requests/api.py", CALLS, "request")
    assert "src/requests/api.py#request" in edges("src/requests/api.py", CALLS, "get")
    assert "src/requests/sessions.py#Session.prepare_request" in edges(
        "src/requests/sessions.py", CALLS, "Session.request"
    )
    assert "src/requests/sessions.py#SessionRedirectMixin" in edges(
        "src/requests/sessions.py", INHERITS_FROM, "Session"
    )
    assert "src/requests/exceptions.py#RequestException" in edges(
        "src/requests/exceptions.py", INHERITS_FROM, "HTTPError"
    )
    tested = edges("tests/test_utils.py", TESTS_CALLABLE, "TestSuperLen.test_super_len_correctly_calculates_len")
    assert tested <= {"src/requests/utils.py#super_len"}
    resolved = total = 0
    for analysis in analyses.values():
        for reference in analysis.references:
            if reference.predicate == CALLS and reference.targets:
                total += 1
                resolved += bool(table.resolve(reference))
    print(f"\nrequests: {resolved}/{total} qualified call references resolve inside the corpus")
    assert resolved > 200


def test_django_matches_ast() -> None:
    """The whole django package and a fixed sample of Django's own test suite (every 8th file).

    The complete corpus (2,788 files, about 40,000 definitions; 100% at the time of writing)
    takes too long for the suite: ``python -m tests.analyzers.test_python_oracle django``.
    """
    assert len(check("django", "django")) > 850
    assert len(check("django", "tests", every=8)) > 200


if __name__ == "__main__":
    import sys

    for corpus in sys.argv[1:]:
        check(corpus)
