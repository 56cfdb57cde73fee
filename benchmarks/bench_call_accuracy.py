"""Precision and recall of the Python call edges resolved by name, judged by jedi.

Ours: the Python analyzer's ``uko-code:calls`` references, resolved by the indexer's own
symbol table (``indexer.symbol_table`` over every file of the project, then
``SymbolTable.resolve`` per reference), built in-process from the indexer's analysis step.
The reference: jedi (type inference, no code of ours) ``goto`` on the callee name of each
call site (``f()``: ``f``; ``a.b()``: ``b``), following imports, with jedi's bundled stubs
of an older Django switched off so that it reads the sources at hand.

The unit is a distinct call site: the first call of one callee text in one enclosing
definition (Python's ``ast`` finds them). The analyzer emits one reference per (definition,
callee text) at its first line, so later repeats could only repeat its edge. A site is
matched to our references by (enclosing definition, line, callee name). Sites are sampled
deterministically (a hash of position below ``rate``). jedi's answer puts each site in one class:

* in-corpus: a definition of the project that is one of our symbols, through jedi's
  ``full_name`` (dotted module + qualname): a function, class or method, or a module-level
  alias such as ``builtin_str = str`` (``in_corpus_sites_with_value_target``). Precision
  and recall are measured here. Linking a class's ``__init__`` for ``C()`` counts as right.
* outside: stdlib, builtins, other packages. Not edges we could make: out of recall; any
  edge we made there is wrong (counted in ``precision_with_outside``).
* local: a parameter, local variable or other definition that is no symbol of ours;
  treated like outside.
* unmapped: a project function or class with no symbol of ours; unresolved: jedi found
  nothing. Our edges at these sites are not judged.

``top_errors`` counts one per wrong edge ("false edge") and one per missed site ("miss").

With ``--lsp`` the LSP enrichment (``lsp/enrich.py``'s ``LSPEnricher`` with basedpyright)
also resolves the evaluated files' references, and its edges (``resolvedBy "lsp:..."``) are
judged on the same sites beside the name-match ones: in-corpus targets as above; an edge to
an external symbol (``~external/``) is right where jedi went outside the corpus and wrong
where jedi named a definition of the corpus. ``graph`` judges what the index holds: the
server's answer where it gave one, the name-match edges where it did not.

    python benchmarks/bench_call_accuracy.py                      # requests + django subset
    python benchmarks/bench_call_accuracy.py --corpus requests --json out.json
    python benchmarks/bench_call_accuracy.py --django-rate 0.5     # sample more of django
    python benchmarks/bench_call_accuracy.py --lsp                 # LSP edges judged too
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import multiprocessing
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jedi  # noqa: E402  - pinned in pyproject's dev extra (jedi==0.20.1 when measured)
from jedi.inference.gradual import typeshed as jedi_typeshed  # noqa: E402

from cleveragents import iris  # noqa: E402
from cleveragents.indexing.indexer import (  # noqa: E402
    FileResult,
    IndexOptions,
    OutlineEntry,
    ResolvedFile,
    Target,
    analyze_files,
    symbol_table,
)
from cleveragents.indexing.link import SymbolTable  # noqa: E402
from cleveragents.indexing.model import Reference  # noqa: E402
from cleveragents.indexing.plugins import load_analyzers  # noqa: E402
from cleveragents.terms import UKO_CODE  # noqa: E402
from corpora.fetch import corpus_dir  # noqa: E402

CALLS = UKO_CODE + "calls"
TARGET = Target(iri="urn:bench:call-accuracy", ulid="BENCH", name="bench")
CALLABLE = frozenset({"function", "class"})
BUCKETS = ("0.9", "0.8", "0.7", "0.5", "<0.5")
THRESHOLDS = (0.9, 0.8, 0.7, 0.5, 0.0)
# Python's confidences since the calibration (RESULTS.md, "Calibration against basedpyright"):
# scope/import, self/cls and typed receivers, inherited/super()/star and a unique bare name are
# all 0.95; ambiguous bare names share 0.95 (0.47 / 0.32 each). Before it they were 0.9, 0.8,
# 0.7, 0.5 and 0.3 shared, one bucket each.
MECHANISM = {
    "0.9": "measured 0.95: scope/import, receiver, inherited, unique bare name (before: scope/import 0.9)",
    "0.8": "(before: self/cls receiver 0.8)",
    "0.7": "a test's subject or a star-shadowed builtin base, 0.7 (before: inherited/super/star)",
    "0.5": "(before: unique bare name 0.5)",
    "<0.5": "ambiguous bare name or split target (<0.5)",
}


@dataclass(frozen=True)
class CorpusSpec:
    corpus: str  # name in corpora/manifest.toml
    package: str  # the project: every .py under this folder of the corpus
    evaluated: tuple[str, ...]  # globs (from the corpus root) of the files whose call sites are judged
    sys_path: str  # where jedi imports the package from, relative to the corpus root
    rate: float  # default fraction of distinct call sites sent to jedi


CORPORA = {
    "requests": CorpusSpec("requests-2.32.3", "src/requests", ("src/requests/*.py",), "src", 1.0),
    "django": CorpusSpec("django", "django", ("django/db/models/*.py", "django/utils/*.py"), ".", 0.25),
}


@dataclass(frozen=True)
class Site:
    path: str
    scope: str  # key of the enclosing definition without ~N suffixes ("" at module level)
    line: int  # where the callee starts, as our references count lines
    name_line: int  # where its last name is (a chained call spans lines)
    column: int  # of that name, in characters (jedi's unit)
    name: str  # the callee's last identifier
    text: str  # the callee as written
    form: str  # f() | self.m() | x.m() | a.b.m() | expr.m()


@dataclass(frozen=True)
class Found:
    """One definition jedi went to."""

    type: str
    full_name: str | None
    path: str | None  # relative to the corpus root when inside the project package, else None


@dataclass
class SiteResult:
    site: Site
    category: str = "unresolved"  # in-corpus | outside | local | unmapped | unresolved
    jedi: list[str] = field(default_factory=list)  # what jedi named, for examples
    expected: set[tuple[str, str]] = field(default_factory=set)  # (path, key) of jedi's in-corpus targets
    edges: dict[tuple[str, str], float] = field(default_factory=dict)  # our (path, key) -> confidence
    references: list[Reference] = field(default_factory=list)
    value_target: bool = False  # jedi's in-corpus target is a variable or attribute (an alias), not a def
    covered_elsewhere: bool = False  # no reference here, but an edge of the same definition hits jedi's target
    # --lsp: what the server answered for this site's references (None: no answer for any of them)
    lsp: dict[tuple[str, str], float] | None = None  # in-corpus targets
    lsp_external: set[str] = field(default_factory=set)  # qualified names of external symbols
    graph: dict[tuple[str, str], float] = field(default_factory=dict)  # the server's edges, else name-match

    def correct(self, target: tuple[str, str]) -> bool:
        path, key = target
        # Instantiation runs __init__: the analyzer links both on purpose.
        owner = key.removesuffix(".__init__")
        return target in self.expected or (owner != key and (path, owner) in self.expected)


# -- call sites (Python's own parser, not the analyzer's tree-sitter) ------------------------


class _CallSites(ast.NodeVisitor):
    def __init__(self, path: str, code: str) -> None:
        self.path = path
        self.code = code
        # Python's line ends only (str.splitlines also splits at \f, \x1c, ... and would shift lines).
        self.lines = [line.encode("utf-8") for line in re.split(r"\r\n|\r|\n", code)]
        self.scope: list[tuple[str, int]] = []  # (name, line) of the enclosing definitions
        self.seen: set[tuple[tuple[tuple[str, int], ...], str]] = set()
        self.sites: list[Site] = []
        self.raw = 0

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        # Decorators run in the enclosing scope; defaults, annotations and bases are inside the definition.
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scope.append((node.name, node.lineno))
        for name, value in ast.iter_fields(node):
            if name == "decorator_list":
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(child)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = definition

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name | ast.Attribute):
            self.raw += 1
            text = ast.get_source_segment(self.code, func) or ""
            key = (tuple(self.scope), text)
            if key not in self.seen:
                self.seen.add(key)
                self.sites.append(self.site(func, text))
        self.generic_visit(node)

    def site(self, func: ast.Name | ast.Attribute, text: str) -> Site:
        if isinstance(func, ast.Name):
            line, byte, name, form = func.lineno, func.col_offset, func.id, "f()"
        else:
            line = func.end_lineno or func.lineno  # the attribute name ends the callee
            byte = (func.end_col_offset or 0) - len(func.attr.encode("utf-8"))
            name, value = func.attr, func.value
            if isinstance(value, ast.Name):
                form = "self.m()" if value.id in ("self", "cls") else "x.m()"
            else:
                form = "a.b.m()" if _dotted(value) else "expr.m()"
        column = len(self.lines[line - 1][:byte].decode("utf-8", errors="replace"))
        scope = ".".join(name for name, _ in self.scope)
        return Site(self.path, scope, func.lineno, line, column, name, text, form)


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def call_sites(path: str, code: str) -> tuple[int, list[Site]]:
    """(all call sites, distinct sites) of one file; a file Python cannot parse has none."""
    visitor = _CallSites(path, code)
    try:
        visitor.visit(ast.parse(code))
    except (SyntaxError, ValueError):
        return 0, []
    return visitor.raw, visitor.sites


def sampled(site: Site, rate: float) -> bool:
    """A deterministic sample: the same sites for the same rate on every run and machine."""
    digest = hashlib.sha1(f"{site.path}:{site.name_line}:{site.column}".encode()).digest()
    return int.from_bytes(digest[:4], "big") < rate * 2**32


# -- our edges ----------------------------------------------------------------------------


def package_files(root: Path, folder: str) -> dict[str, bytes]:
    """Every ``.py`` file under ``folder`` of a corpus, by its path from the corpus root."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / folder).rglob("*.py"))}


def analyze_project(files: dict[str, bytes]) -> list[FileResult]:
    """The indexer's analysis step over the project's files."""
    return [
        r
        for r in analyze_files(list(files.items()), load_analyzers(), TARGET, IndexOptions().max_file_bytes, None)
        if isinstance(r, FileResult)
    ]


def link_project(
    files: dict[str, bytes], results: list[FileResult] | None = None
) -> tuple[dict[str, tuple[Reference, ...]], SymbolTable]:
    """The indexer's analysis step and symbol table over the project's files: references by path, the table."""
    results = analyze_project(files) if results is None else results
    table = symbol_table(TARGET, {r.path: r.link for r in results})
    return {r.path: r.references for r in results}, table


def canonical(key: str) -> str:
    """A key without the ~2, ~3 suffixes of repeated definitions."""
    return ".".join(part.split("~", 1)[0] for part in key.split("."))


def entity_of(iri: str) -> tuple[str, str]:
    parts = iris.split_iri(iri)
    assert parts is not None, iri
    return parts[1], parts[2]


def _callee_names(reference: Reference) -> set[str]:
    names = {reference.simple_name} if reference.simple_name else set()
    for target, _ in reference.targets:
        parts = target.split(".")
        names.add(parts[-1])
        if parts[-1] == "__init__" and len(parts) > 1:
            names.add(parts[-2])
    return names


def match_references(sites: list[Site], references: Iterable[Reference]) -> tuple[dict[Site, list[Reference]], int]:
    """Our call references of one file by call site: same definition, same line, same callee name.

    A name bound by ``from m import x as y`` differs from the target's: such a reference goes to the one
    call of that line no other reference named, or else to the one such call of a bare name.
    """
    at: dict[tuple[str, int], list[Site]] = defaultdict(list)
    for site in sites:
        at[site.scope, site.line].append(site)
    matched: dict[Site, list[Reference]] = defaultdict(list)
    aliased: list[Reference] = []
    for reference in references:
        candidates = at.get((canonical(reference.source), reference.line), [])
        named = [s for s in candidates if s.name in _callee_names(reference)]
        if named:
            matched[named[0]].append(reference)
        else:
            aliased.append(reference)
    unmatched = 0
    for reference in aliased:
        left = [s for s in at.get((canonical(reference.source), reference.line), []) if s not in matched]
        bare = [s for s in left if s.form == "f()"]
        chosen = left if len(left) == 1 else bare if len(bare) == 1 else []
        if chosen:
            matched[chosen[0]].append(reference)
        else:
            unmatched += 1
    return matched, unmatched


# -- jedi ---------------------------------------------------------------------------------


def _goto(job: tuple[str, str, str, str, list[tuple[int, int]]]) -> list[list[Found] | None]:
    """jedi's definitions at each position of one file (None where jedi failed)."""
    root, sys_path, package, path, positions = job
    # jedi bundles stubs of an older Django and answers from them (e.g. BaseExpression.as_sql where the
    # sources say Func.as_sql): judge by the sources at hand. A jedi internal, hence the version pin.
    jedi_typeshed.DJANGO_INIT_PATH = Path(root) / "no-bundled-django-stubs" / "__init__.pyi"
    project = jedi.Project(root, added_sys_path=[str(Path(root) / sys_path)])
    full = Path(root) / path
    script = jedi.Script(full.read_text(encoding="utf-8"), path=full, project=project)
    inside = (Path(root) / package).resolve()
    out: list[list[Found] | None] = []
    for line, column in positions:
        try:
            names = script.goto(line, column, follow_imports=True)
        except Exception:  # jedi's own bugs: count them, never abort the run
            out.append(None)
            continue
        found = []
        for name in names:
            module = name.module_path.resolve() if name.module_path else None
            local = module is not None and module.is_relative_to(inside)
            found.append(Found(name.type, name.full_name, module.relative_to(root).as_posix() if local else None))
        out.append(found)
    return out


def jedi_definitions(root: Path, spec: CorpusSpec, sites: list[Site], jobs: int) -> dict[Site, list[Found] | None]:
    by_file: dict[str, list[Site]] = defaultdict(list)
    for site in sites:
        by_file[site.path].append(site)
    # Biggest files first so the workers finish together.
    order = sorted(by_file, key=lambda p: -len(by_file[p]))
    tasks = [(str(root), spec.sys_path, spec.package, p, [(s.name_line, s.column) for s in by_file[p]]) for p in order]
    if jobs > 1 and len(tasks) > 1:
        # A fork server, not fork: the calling process may hold Oxigraph stores (the test
        # suite does), and a forked copy of RocksDB's locks aborts the child in its GC.
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver")) as pool:
            answers = list(pool.map(_goto, tasks))
    else:
        answers = [_goto(task) for task in tasks]
    return {
        s: found for p, answer in zip(order, answers, strict=True) for s, found in zip(by_file[p], answer, strict=True)
    }


# -- LSP enrichment -------------------------------------------------------------------------

LSP_SERVER = "cleveragents/basedpyright"


def lsp_enrich(
    root: Path, files: dict[str, bytes], results: list[FileResult], evaluated: list[str]
) -> tuple[dict[str, ResolvedFile], dict[str, object]]:
    """The LSP enrichment of the evaluated files, as an index run would do it: (answers by path, its report)."""
    from cleveragents.lsp.builtins import find_builtin
    from cleveragents.lsp.enrich import LSPEnricher
    from cleveragents.lsp.runtime import close_shared_runtime, shared_runtime
    from cleveragents.services.lsp_enrichment import launch_of

    entry = find_builtin(LSP_SERVER)
    assert entry is not None, LSP_SERVER
    by_path = {r.path: r for r in results}
    outlines: dict[str, tuple[OutlineEntry, ...]] = {r.path: r.outline for r in results}
    batch = {p: by_path[p].references for p in evaluated if p in by_path}
    enricher = LSPEnricher(shared_runtime(), launch_of(entry, request_timeout=30.0), ["python"], root)
    try:
        answers = enricher.resolve(TARGET, files, batch, lambda path: outlines.get(path, ()))
    finally:
        close_shared_runtime()
    if enricher.report.unavailable:
        raise SystemExit(f"{LSP_SERVER} was not usable: {enricher.report.unavailable}")
    return answers, enricher.report.as_dict()


def _lsp_answer(result: SiteResult, numbers: dict[int, int], resolved: ResolvedFile | None, table: SymbolTable) -> None:
    """The server's edges for this site's references, and what the graph holds there."""
    for reference in result.references:
        answer = resolved.references.get(numbers[id(reference)]) if resolved is not None else None
        if answer is None:  # no answer: the name-match edges stay
            for iri, confidence in table.resolve(reference):
                target = entity_of(iri)
                result.graph[target] = max(confidence, result.graph.get(target, 0.0))
            continue
        if result.lsp is None:
            result.lsp = {}
        for iri, confidence, _ in answer:
            path, key = entity_of(iri)
            if key.startswith("~external/"):
                result.lsp_external.add(key.split("/", 2)[2])
            else:
                result.lsp[path, key] = confidence
                result.graph[path, key] = confidence


# -- evaluation ---------------------------------------------------------------------------


@dataclass
class CorpusRun:
    name: str
    rate: float
    files: int = 0
    project_files: int = 0
    raw_sites: int = 0
    distinct_sites: int = 0
    unmatched_references: int = 0
    jedi_failures: int = 0
    lsp_report: dict[str, object] | None = None
    results: list[SiteResult] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def evaluate(name: str, rate: float | None = None, jobs: int = 2, lsp: bool = False) -> CorpusRun:
    """Judge a deterministic sample (``rate``) of the distinct call sites of one corpus (and,
    with ``lsp``, the LSP enrichment's edges at the same sites)."""
    spec = CORPORA[name]
    root = corpus_dir(spec.corpus).resolve()
    run = CorpusRun(name, spec.rate if rate is None else rate)
    started = time.perf_counter()
    files = package_files(root, spec.package)
    analyzed = analyze_project(files)
    links, table = link_project(files, analyzed)
    run.project_files = len(links)
    run.seconds["analyze_and_link"] = round(time.perf_counter() - started, 2)

    evaluated = sorted({p.relative_to(root).as_posix() for pattern in spec.evaluated for p in root.glob(pattern)})
    reached: dict[str, dict[str, set[tuple[str, str]]]] = {}  # path -> definition -> our call targets
    for path in evaluated:
        if path not in links:
            continue
        run.files += 1
        raw, sites = call_sites(path, files[path].decode("utf-8", errors="replace"))
        run.raw_sites += raw
        run.distinct_sites += len(sites)
        calls = [r for r in links[path] if r.predicate == CALLS]
        matched, unmatched = match_references(sites, calls)
        run.unmatched_references += unmatched
        reached[path] = defaultdict(set)
        for reference in calls:
            reached[path][canonical(reference.source)].update(entity_of(iri) for iri, _ in table.resolve(reference))
        for site in sites:
            if not sampled(site, run.rate):
                continue
            result = SiteResult(site, references=matched.get(site, []))
            for reference in result.references:
                for iri, confidence in table.resolve(reference):
                    target = entity_of(iri)
                    result.edges[target] = max(confidence, result.edges.get(target, 0.0))
            run.results.append(result)

    if lsp:
        started = time.perf_counter()
        resolved, run.lsp_report = lsp_enrich(root, files, analyzed, sorted(reached))
        run.seconds["lsp"] = round(time.perf_counter() - started, 2)
        numbers = {path: {id(r): n for n, r in enumerate(links[path])} for path in reached}
        for result in run.results:
            _lsp_answer(result, numbers[result.site.path], resolved.get(result.site.path), table)

    started = time.perf_counter()
    answers = jedi_definitions(root, spec, [r.site for r in run.results], jobs)
    run.seconds["jedi"] = round(time.perf_counter() - started, 2)
    qualified = table.qualified.get("py", {})
    for result in run.results:
        found = answers[result.site]
        if found is None:
            run.jedi_failures += 1
        _classify(result, found or [], qualified)
        site = result.site
        result.covered_elsewhere = not result.references and bool(result.expected & reached[site.path][site.scope])
    return run


def _classify(result: SiteResult, found: list[Found], qualified: dict[str, list[str]]) -> None:
    result.jedi = [f.full_name or f"<{f.type}>" for f in found]
    if not found:
        result.category = "unresolved"
        return
    local = [f for f in found if f.path is not None]
    if not local:
        result.category = "outside"
        return
    for f in local:
        # A module-level alias (`builtin_str = str`) is a variable of ours too: same target, same edge.
        targets = {t for t in map(entity_of, qualified.get(f.full_name or "", [])) if t[0] == f.path}
        result.expected |= targets
        result.value_target |= bool(targets) and f.type not in CALLABLE
    if result.expected:
        result.category = "in-corpus"
    elif any(f.type in CALLABLE for f in local):
        result.category = "unmapped"
    else:
        result.category = "local"


# -- the summary --------------------------------------------------------------------------


def bucket(confidence: float) -> str:
    label = f"{confidence:g}"
    return label if label in BUCKETS else "<0.5" if confidence < 0.5 else label


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _entity(target: tuple[str, str]) -> str:
    return f"{Path(target[0]).stem}:{target[1]}"


def _example(result: SiteResult, target: tuple[str, str] | None = None) -> str:
    site = result.site
    ours = ", ".join(f"{_entity(t)}@{c:g}" for t, c in sorted(result.edges.items()))
    if not ours and result.references:
        names = [t for r in result.references for t, _ in r.targets] + [
            f"bare {r.simple_name}" for r in result.references if r.simple_name
        ]
        ours = "unresolved " + ", ".join(names)
    wrong = f" (wrong: {_entity(target)})" if target else ""
    jedi_said = ", ".join(result.jedi[:2]) or "-"
    scope = site.scope or "<module>"
    return f"{site.path}:{site.line} [{scope}] {site.text}() ours: {ours or '-'}{wrong}; jedi: {jedi_said}"


def error_kinds(results: list[SiteResult]) -> list[tuple[str, SiteResult, tuple[str, str] | None]]:
    """Each wrong edge (one entry per edge) and each missed site, named by how it came about."""
    errors: list[tuple[str, SiteResult, tuple[str, str] | None]] = []
    where = {"in-corpus": "jedi's target is another", "outside": "jedi: outside the corpus", "local": "jedi: a local"}
    for result in results:
        if result.category not in where:
            continue
        for target, confidence in result.edges.items():
            if not result.correct(target):
                kind = f"false edge, {MECHANISM.get(bucket(confidence), bucket(confidence))}; {where[result.category]}"
                errors.append((kind, result, target))
        if result.category != "in-corpus" or any(map(result.correct, result.edges)) or result.covered_elsewhere:
            continue
        if result.edges:
            kind = "miss: resolved only to other targets"
        elif any(r.targets for r in result.references):
            kind = "miss: qualified target is no symbol (inherited, re-exported), no usable bare name"
        elif result.references:
            kind = "miss: bare name only, more than 3 definitions of it"
        else:
            kind = f"miss: no reference for a {result.site.form} call"
        errors.append((kind, result, None))
    return errors


Edge = tuple[SiteResult, tuple[str, str], float]


def _precision(edges: list[Edge]) -> dict[str, object]:
    good = sum(r.correct(t) for r, t, _ in edges)
    return {"edges": len(edges), "correct": good, "precision": _ratio(good, len(edges))}


def _recalled(result: SiteResult, threshold: float) -> bool:
    hit = any(c >= threshold and result.correct(t) for t, c in result.edges.items())
    return hit or (threshold == 0.0 and result.covered_elsewhere)


def metrics(results: list[SiteResult]) -> dict[str, object]:
    """Precision (edges at in-corpus sites; with_outside adds the edges where jedi went outside or to a
    local, all wrong) and recall (in-corpus sites with a right edge), overall, by bucket, by threshold."""
    categories = Counter(r.category for r in results)
    judged = [r for r in results if r.category in ("in-corpus", "outside", "local")]
    in_corpus = [r for r in results if r.category == "in-corpus"]
    edges = [(r, t, c) for r in judged for t, c in r.edges.items()]
    in_edges = [e for e in edges if e[0].category == "in-corpus"]
    overall = _precision(in_edges)
    return {
        "sites_by_jedi_outcome": dict(sorted(categories.items())),
        "our_edges_by_jedi_outcome": {c: sum(len(r.edges) for r in results if r.category == c) for c in categories},
        "precision": overall["precision"],
        "precision_with_outside": _precision(edges)["precision"],
        "recall": _ratio(sum(_recalled(r, 0.0) for r in in_corpus), len(in_corpus)),
        "edges_judged": overall["edges"],
        "edges_correct": overall["correct"],
        "in_corpus_sites": len(in_corpus),
        "in_corpus_sites_with_value_target": sum(r.value_target for r in in_corpus),
        "recalled_by_another_site": sum(r.covered_elsewhere for r in in_corpus),
        "edges_at_confidence_1": sum(1 for r in results for c in r.edges.values() if c >= 1.0),
        "by_bucket": {
            b: {
                **_precision([e for e in in_edges if bucket(e[2]) == b]),
                "with_outside": _precision([e for e in edges if bucket(e[2]) == b]),
            }
            for b in sorted({bucket(c) for _, _, c in edges} | set(BUCKETS), key=_bucket_order)
        },
        "at_least": {
            f">={t:g}": {
                "precision": _precision([e for e in in_edges if e[2] >= t])["precision"],
                "precision_with_outside": _precision([e for e in edges if e[2] >= t])["precision"],
                "recall": _ratio(sum(_recalled(r, t) for r in in_corpus), len(in_corpus)),
            }
            for t in THRESHOLDS
        },
    }


JUDGED = ("in-corpus", "outside", "local")


def lsp_error_kinds(results: list[SiteResult]) -> list[tuple[str, SiteResult, str | None]]:
    """Each wrong LSP edge and each in-corpus site the server answered without a right edge."""
    errors: list[tuple[str, SiteResult, str | None]] = []
    where = {"in-corpus": "jedi's target is another", "outside": "jedi: outside the corpus", "local": "jedi: a local"}
    for result in results:
        if result.lsp is None or result.category not in where:
            continue
        for target in result.lsp:
            if not result.correct(target):
                errors.append((f"lsp false edge; {where[result.category]}", result, _entity(target)))
        if result.category == "in-corpus":
            for name in sorted(result.lsp_external):
                errors.append(("lsp external symbol; jedi: in the corpus", result, name))
            if not result.lsp_external and not any(map(result.correct, result.lsp)):
                kind = "lsp miss: answered with other targets" if result.lsp else "lsp miss: a local (no edge)"
                errors.append((kind, result, None))
    return errors


def lsp_metrics(results: list[SiteResult]) -> dict[str, object]:
    """The LSP edges judged like the name-match ones; external symbols against jedi's "outside"."""
    answered = [r for r in results if r.lsp is not None]
    judged = [r for r in answered if r.category in JUDGED]
    in_corpus = [r for r in results if r.category == "in-corpus"]
    edges = [(r, t, c) for r in judged for t, c in r.lsp.items()]  # type: ignore[union-attr]
    in_edges = [e for e in edges if e[0].category == "in-corpus"]
    external = Counter(r.category for r in answered for _ in r.lsp_external)
    right = sum(r.correct(t) for r, t, _ in edges) + external["outside"]
    total = len(edges) + external["outside"] + external["in-corpus"]
    graph = [(r, t, c) for r in judged for t, c in r.graph.items()]
    return {
        "sites_answered": len(answered),
        "sites_answered_by_jedi_outcome": dict(sorted(Counter(r.category for r in answered).items())),
        "precision": _precision(in_edges)["precision"],
        "edges_judged": len(in_edges),
        "edges_correct": sum(r.correct(t) for r, t, _ in in_edges),
        "precision_with_outside": _precision(edges)["precision"],
        "external_edges_by_jedi_outcome": dict(sorted(external.items())),
        "external_agreement": _ratio(external["outside"], external["outside"] + external["in-corpus"]),
        "precision_all_lsp_edges": _ratio(right, total),
        "lsp_edges_judged_all": total,
        "recall": _ratio(sum(any(map(r.correct, r.lsp or {})) for r in in_corpus), len(in_corpus)),
        "graph": {
            "precision": _precision([e for e in graph if e[0].category == "in-corpus"])["precision"],
            "precision_with_outside": _precision(graph)["precision"],
            "recall": _ratio(sum(any(map(r.correct, r.graph)) for r in in_corpus), len(in_corpus)),
        },
    }


def _lsp_example(result: SiteResult, wrong: str | None) -> str:
    site = result.site
    ours = [f"{_entity(t)}" for t in sorted(result.lsp or {})] + [f"ext {n}" for n in sorted(result.lsp_external)]
    name_match = ", ".join(f"{_entity(t)}@{c:g}" for t, c in sorted(result.edges.items())) or "-"
    flagged = f" (wrong: {wrong})" if wrong else ""
    jedi_said = ", ".join(result.jedi[:2]) or "-"
    return (
        f"{site.path}:{site.line} [{site.scope or '<module>'}] {site.text}() lsp: {', '.join(ours) or 'local'}"
        f"{flagged}; name-match: {name_match}; jedi: {jedi_said}"
    )


def _top(errors: list[tuple[str, SiteResult, object]], example: Callable[..., str]) -> list[dict[str, object]]:
    kinds: dict[str, list[tuple[SiteResult, object]]] = defaultdict(list)
    for kind, result, target in errors:
        kinds[kind].append((result, target))
    top = sorted(kinds.items(), key=lambda item: (-len(item[1]), item[0]))[:10]
    return [{"kind": k, "count": len(items), "examples": [example(r, t) for r, t in items[:3]]} for k, items in top]


def summarize(runs: list[CorpusRun]) -> dict[str, object]:
    results = [r for run in runs for r in run.results]
    lsp = [run for run in runs if run.lsp_report is not None]
    extra: dict[str, object] = {}
    if lsp:
        extra["lsp"] = {
            "server": LSP_SERVER,
            "corpora": {run.name: {"report": run.lsp_report, **lsp_metrics(run.results)} for run in lsp},
            "total": lsp_metrics([r for run in lsp for r in run.results]),
            "top_errors": _top(lsp_error_kinds([r for run in lsp for r in run.results]), _lsp_example),
        }
    return {
        "jedi": jedi.__version__,
        "corpora": {
            run.name: {
                "rate": run.rate,
                "files": run.files,
                "project_files": run.project_files,
                "call_sites": run.raw_sites,
                "distinct_call_sites": run.distinct_sites,
                "judged_sites": len(run.results),
                "unmatched_references": run.unmatched_references,
                "jedi_failures": run.jedi_failures,
                "seconds": run.seconds,
                **metrics(run.results),
            }
            for run in runs
        },
        "total": metrics(results),
        "top_errors": _top(error_kinds(results), _example),
        **extra,
    }


def _bucket_order(label: str) -> tuple[int, str]:
    return (BUCKETS.index(label), "") if label in BUCKETS else (-1, label)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append", help="default: all")
    parser.add_argument("--requests-rate", type=float, help=f"default {CORPORA['requests'].rate}")
    parser.add_argument("--django-rate", type=float, help=f"default {CORPORA['django'].rate}")
    parser.add_argument("--jobs", type=int, default=2, help="jedi worker processes")
    parser.add_argument("--lsp", action="store_true", help=f"judge the LSP enrichment's edges too ({LSP_SERVER})")
    parser.add_argument("--json", type=Path, help="write the summary here too")
    args = parser.parse_args()
    started = time.perf_counter()
    runs = []
    for name in args.corpus or sorted(CORPORA, key=lambda n: n != "requests"):
        print(f"[{time.strftime('%H:%M:%S')}] {name}", file=sys.stderr, flush=True)
        runs.append(evaluate(name, getattr(args, f"{name}_rate"), args.jobs, args.lsp))
    summary = {**summarize(runs), "seconds": round(time.perf_counter() - started, 1)}
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
