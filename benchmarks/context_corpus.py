"""Corpus preparation and reference sets for the context benchmark (bench_context.py).

A corpus's Python package is copied into a work tree; the docstrings of the localization
sample are blanked in that copy (line numbers kept, so one copy serves every metric); the
dependency reference of a function is computed with jedi alone, independently of the
system under test: ``Script.goto`` on every name its body uses, keeping in-project
definitions outside the function itself.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import random
import re
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import jedi

from corpora.fetch import corpus_dir

# corpus key -> (corpus name, package directory inside it); the package is copied to
# <tree>/<package name> so relative paths and module names agree.
CORPORA: dict[str, tuple[str, str]] = {"requests": ("requests-2.32.3", "src/requests"), "django": ("django", "django")}
MIN_BODY_LINES = 3  # one-liners have almost nothing to depend on
MIN_DOCSTRING_CHARS = 40  # shorter docstrings ("Return the value.") say too little to localize with
MAX_QUERY_CHARS = 2000
CACHE_FORMAT = 2  # bump when Definition changes
CACHE = Path.home() / ".cache" / "cleveragents" / "bench-context"  # jedi's answers per prepared tree
JEDI_KINDS = {"function", "class", "statement", "instance"}


@dataclass
class Function:
    path: str  # POSIX, relative to the tree
    qualname: str  # "Session.send"
    name: str
    line: int  # 1-based, of the def (decorators excluded)
    end_line: int
    docstring: str | None
    docstring_lines: tuple[int, int] | None  # 1-based inclusive, when it stands on its own lines
    sole_statement: bool  # the docstring is the whole body

    @property
    def key(self) -> str:
        return f"{self.path}#{self.qualname}"


@dataclass
class Definition:
    """A name of one file the function uses; an attribute assigned in several places is one
    definition with several defining lines."""

    path: str
    name: str
    line: int  # the first defining line
    kind: str  # jedi's type: function, class, statement, instance
    texts: list[str]  # the defining lines, stripped

    def present_in(self, context: str) -> bool:
        """Whether a context shows this definition: a def/class line naming it, or, for a
        variable, one of its defining lines verbatim (names alone would match any mention)."""
        if self.kind in ("function", "class"):
            return re.search(rf"\b(?:def|class)\s+{re.escape(self.name)}\b", context) is not None
        return any(text[:80] in context for text in self.texts if text)


@dataclass
class Corpus:
    key: str
    tree: Path  # the prepared copy, the resource root
    files: list[str]  # relative paths of the Python files
    functions: list[Function]
    localization: list[Function] = field(default_factory=list)  # docstrings blanked in the tree


def copy_package(key: str, tree: Path) -> list[str]:
    name, package = CORPORA[key]
    source = corpus_dir(name) / package
    dest = tree / source.name
    shutil.rmtree(tree, ignore_errors=True)
    files: list[str] = []
    for path in sorted(source.rglob("*.py")):
        if path.is_file():
            target = dest / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            files.append(target.relative_to(tree).as_posix())
    return files


def functions_of(tree: Path, rel: str) -> list[Function]:
    """Module-level functions and methods (not functions nested in functions: they have no
    entity of their own to focus on)."""
    text = (tree / rel).read_text(encoding="utf-8")
    try:
        module = ast.parse(text)
    except SyntaxError:
        return []
    lines = text.splitlines()
    out: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append(_function(rel, f"{prefix}{child.name}", child, lines))

    visit(module, "")
    return out


def _function(rel: str, qualname: str, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> Function:
    docstring = ast.get_docstring(node, clean=True)
    doc_lines: tuple[int, int] | None = None
    first = node.body[0]
    if docstring and isinstance(first, ast.Expr) and first.end_lineno is not None:
        own_lines = first.lineno > node.lineno and lines[first.end_lineno - 1].strip().endswith(('"""', "'''"))
        own_lines = own_lines and lines[first.lineno - 1].strip()[:4].lstrip("rbuRBU")[:3] in ('"""', "'''")
        if own_lines:
            doc_lines = (first.lineno, first.end_lineno)
    return Function(
        path=rel,
        qualname=qualname,
        name=node.name,
        line=node.lineno,
        end_line=node.end_lineno or node.lineno,
        docstring=docstring,
        docstring_lines=doc_lines,
        sole_statement=len(node.body) == 1,
    )


def blank_docstrings(tree: Path, functions: list[Function]) -> None:
    """Remove the docstrings from the copy, keeping every line number: the docstring's
    lines become empty (or ``pass`` when it was the whole body)."""
    by_file: dict[str, list[Function]] = {}
    for function in functions:
        by_file.setdefault(function.path, []).append(function)
    for rel, items in by_file.items():
        path = tree / rel
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for function in items:
            assert function.docstring_lines is not None
            start, end = function.docstring_lines
            indent = lines[start - 1][: len(lines[start - 1]) - len(lines[start - 1].lstrip())]
            for number in range(start, end + 1):
                lines[number - 1] = "\n"
            if function.sole_statement:
                lines[start - 1] = f"{indent}pass\n"
        path.write_text("".join(lines), encoding="utf-8")


def prepare(key: str, tree: Path, *, localization: int, seed: int) -> Corpus:
    files = copy_package(key, tree)
    functions = [f for rel in files for f in functions_of(tree, rel)]
    counts = Counter(f.key for f in functions)
    candidates = [
        f
        for f in functions
        if counts[f.key] == 1
        and f.docstring_lines
        and f.docstring
        and len(f.docstring) >= MIN_DOCSTRING_CHARS
        and "/tests/" not in f.path
    ]
    chosen = sorted(random.Random(seed).sample(candidates, min(localization, len(candidates))), key=lambda f: f.key)
    blank_docstrings(tree, chosen)
    return Corpus(key=key, tree=tree, files=files, functions=functions, localization=chosen)


def query_of(function: Function) -> str:
    return inspect.cleandoc(function.docstring or "")[:MAX_QUERY_CHARS]


# -- the dependency reference -----------------------------------------------------------------


class References:
    """jedi's answers for a corpus, one Script per file."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.project = jedi.Project(str(tree), added_sys_path=[str(tree)])
        self._scripts: dict[str, jedi.Script] = {}
        self._texts: dict[str, list[str]] = {}
        # The answers depend on every file of the tree (and jedi's version): cached under their hash.
        digest = hashlib.sha256(f"{jedi.__version__}/{CACHE_FORMAT}".encode())
        for path in sorted(tree.rglob("*.py")):
            digest.update(path.relative_to(tree).as_posix().encode() + b"\0" + path.read_bytes())
        self._cache_file = CACHE / f"references-{digest.hexdigest()[:24]}.json"
        self._cache: dict[str, list[dict[str, object]]] = (
            json.loads(self._cache_file.read_text()) if self._cache_file.exists() else {}
        )
        self._dirty = False

    def save(self) -> None:
        if self._dirty:
            self._cache_file.parent.mkdir(parents=True, exist_ok=True)
            self._cache_file.write_text(json.dumps(self._cache))
            self._dirty = False

    def of(self, function: Function) -> list[Definition]:
        if function.key not in self._cache:
            self._cache[function.key] = [asdict(d) for d in self._resolve(function)]
            self._dirty = True
        return [Definition(**d) for d in self._cache[function.key]]  # type: ignore[arg-type]

    def _script(self, rel: str) -> jedi.Script:
        if rel not in self._scripts:
            text = (self.tree / rel).read_text(encoding="utf-8")
            self._texts[rel] = text.splitlines()
            self._scripts[rel] = jedi.Script(text, path=str(self.tree / rel), project=self.project)
        return self._scripts[rel]

    def _resolve(self, function: Function) -> list[Definition]:
        script = self._script(function.path)
        lines = self._texts[function.path]
        node = _find_def(ast.parse("\n".join(lines)), function)
        found: dict[tuple[str, str], Definition] = {}
        for line, byte_col in _body_name_positions(node):
            column = len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))
            try:
                names = script.goto(line, column, follow_imports=True)
            except Exception:  # jedi fails on some constructs; the site is simply not counted
                continue
            for name in names:
                definition = self._definition(name, function)
                if definition is None:
                    continue
                same = found.setdefault((definition.path, definition.name), definition)
                if same is not definition:  # another assignment of the same name: one definition
                    same.texts = sorted(set(same.texts) | set(definition.texts))
                    same.line = min(same.line, definition.line)
                    if definition.kind in ("function", "class"):
                        same.kind = definition.kind
        return sorted(found.values(), key=lambda d: (d.path, d.line, d.name))

    def _definition(self, name: jedi.api.classes.Name, function: Function) -> Definition | None:
        if name.type not in JEDI_KINDS or name.module_path is None or name.line is None:
            return None
        try:
            rel = Path(name.module_path).resolve().relative_to(self.tree.resolve()).as_posix()
        except ValueError:
            return None  # the standard library or a third-party package
        if rel == function.path and function.line <= name.line <= function.end_line:
            return None  # the function itself, its parameters and locals
        self._script(rel)
        text = self._texts[rel][name.line - 1].strip() if name.line <= len(self._texts[rel]) else ""
        return Definition(path=rel, name=name.name, line=name.line, kind=name.type, texts=[text])


def _find_def(module: ast.Module, function: Function) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == function.line:
            return node
    raise LookupError(f"no def at {function.key}:{function.line}")


def _body_name_positions(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[int, int]]:
    """(line, UTF-8 byte column) of each name the body reads: bare names and attributes."""
    positions: set[tuple[int, int]] = set()
    for statement in node.body:
        for child in ast.walk(statement):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                positions.add((child.lineno, child.col_offset))
            elif isinstance(child, ast.Attribute) and child.end_lineno is not None and child.end_col_offset is not None:
                positions.add((child.end_lineno, child.end_col_offset - len(child.attr)))
    return sorted(positions)


def function_dict(function: Function) -> dict[str, object]:
    return asdict(function)
