"""LSP enrichment of an index run: the language's own resolver replaces name guesses.

For the files an index run analyzed, a language server is asked where each reference the
tree-sitter analyzer found (calls, imports, base classes) is defined, pipelined. A
definition inside the resource becomes an edge to the entity defined there, with
``ca:resolvedBy "lsp:<server>"`` and confidence 1.0; one outside the resource (standard
library, dependencies) becomes an edge to an external-symbol node; one at a local
variable or parameter removes the guess. Where the server has no answer, the name-match
edges stay. The server's diagnostics become ``uko-code:Diagnostic`` nodes on the
entities they fall in, and the types it reports for callables the syntax left untyped
are recorded as inferred. It all goes into the run's one commit, so it has history.

The indexer calls ``resolve`` and knows nothing of LSP: see ``indexing.indexer.EdgeResolver``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import quote, unquote, urlparse

from lsprotocol import types as lsp

from cleveragents import iris
from cleveragents.indexing import emit
from cleveragents.indexing.indexer import OutlineEntry, ResolvedFile, Target
from cleveragents.indexing.model import Reference
from cleveragents.terms import CA, RDF_TYPE, UKO, UKO_CODE
from cleveragents.vocabulary import ca, uko_code

from .client import LSPError, ServerGone, ServerLaunch
from .languages import language_of
from .runtime import LSPRuntime, ServerHandle

ENRICHED_BY = ca.enrichedBy
TYPES_INFERRED_BY = ca.typesInferredBy
EXTERNAL_SYMBOL = uko_code.ExternalSymbol
DIAGNOSTIC = uko_code.Diagnostic
CALLS = uko_code.calls
CALLABLE_TYPES = frozenset(UKO_CODE + t for t in ("Function", "Method", "Constructor"))
OPEN_CHUNK = 200  # documents open at once: the server's memory stays bounded
DIAGNOSTICS_WAIT = 10.0
_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass
class EnrichmentReport:
    """What one server did in one run (``agents index --lsp`` prints it)."""

    server: str
    files: int = 0
    requests: int = 0
    resolved: int = 0  # references the server answered with a definition
    external: int = 0  # ... outside the indexed resource
    local: int = 0  # ... at a local variable or parameter (no edge)
    unanswered: int = 0  # no definition: the name-match edges stay
    failed_requests: int = 0
    diagnostics: int = 0
    typed: int = 0  # callables given an inferred return type
    typed_parameters: int = 0  # parameters given an inferred type
    seconds: float = 0.0
    unavailable: str | None = None  # why the server was not used at all
    rejected: list[str] = field(default_factory=list)  # files whose every request failed

    def as_dict(self) -> dict[str, object]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in self.__dict__.items()}


class LSPEnricher:
    """An ``EdgeResolver`` backed by one language server for one resource root."""

    def __init__(self, runtime: LSPRuntime, launch: ServerLaunch, languages: Sequence[str], root: Path) -> None:
        self.runtime = runtime
        self.launch = launch
        self.languages = frozenset(languages)
        self.root = root.resolve()
        self.marker = f"lsp:{launch.name}"
        self.report = EnrichmentReport(launch.name)

    def handles(self, path: str) -> bool:
        return language_of(path, None) in self.languages

    def resolve(
        self,
        target: Target,
        files: Mapping[str, bytes],
        batch: Mapping[str, Sequence[Reference]],
        outline: Callable[[str], Sequence[OutlineEntry]],
    ) -> dict[str, ResolvedFile]:
        import time

        started = time.perf_counter()
        out: dict[str, ResolvedFile] = {}
        if self.report.unavailable:
            return out
        try:
            handle = self.runtime.acquire(self.launch, self.root)
        except ServerGone as exc:
            self.report.unavailable = str(exc)
            return out
        try:
            paths = sorted(batch)
            for start in range(0, len(paths), OPEN_CHUNK):
                chunk = paths[start : start + OPEN_CHUNK]
                out.update(_Pass(self, handle, target, files, outline).run(chunk, batch))
        except ServerGone as exc:
            self.report.unavailable = f"stopped during the run: {exc}"
            out = {}  # all or nothing: a half-enriched run would look complete
        finally:
            handle.release()
            self.report.seconds += time.perf_counter() - started
        self.report.files += len(out)
        return out


class _Pass:
    """One chunk of files: open, ask, collect, close."""

    def __init__(
        self,
        enricher: LSPEnricher,
        handle: ServerHandle,
        target: Target,
        files: Mapping[str, bytes],
        outline: Callable[[str], Sequence[OutlineEntry]],
    ) -> None:
        self.enricher = enricher
        self.report = enricher.report
        self.handle = handle
        self.target = target
        self.files = files
        self.outline = outline
        self.root = enricher.root
        self.by = enricher.marker
        self._texts: dict[Path, list[str] | None] = {}

    def run(self, paths: list[str], batch: Mapping[str, Sequence[Reference]]) -> dict[str, ResolvedFile]:
        texts = {p: self.files[p].decode("utf-8", errors="replace") for p in paths}
        for path in paths:
            self.handle.open(self.root / path, language_of(path, None) or "plaintext", texts[path])
        # One definition request per distinct position (a class call and its __init__ share one).
        asks: list[tuple[str, int, int]] = []
        index: dict[tuple[str, int, int], int] = {}
        for path in paths:
            lines = texts[path].split("\n")
            for reference in batch[path]:
                if reference.position is None:
                    continue
                row, byte_col = reference.position
                key = (path, row, _utf16_column(lines, row, byte_col))
                if key not in index:
                    index[key] = len(asks)
                    asks.append(key)
        params = [
            lsp.DefinitionParams(lsp.TextDocumentIdentifier((self.root / p).as_uri()), lsp.Position(r, c))
            for p, r, c in asks
        ]
        answers = self.handle.requests(lsp.TEXT_DOCUMENT_DEFINITION, params)
        self.report.requests += len(params)
        failures: dict[str, int] = {}
        results: dict[str, ResolvedFile] = {p: ResolvedFile(self.by) for p in paths}
        targets_at: list[tuple[tuple[str, float, str], ...] | None] = []
        for (path, _, _), answer in zip(asks, answers, strict=True):
            if isinstance(answer, LSPError):
                self.report.failed_requests += 1
                failures[path] = failures.get(path, 0) + 1
                targets_at.append(None)
                continue
            targets_at.append(self._targets(path, answer, results[path]))
        for path in paths:
            for number, reference in enumerate(batch[path]):
                if reference.position is None:
                    continue
                row, byte_col = reference.position
                found = targets_at[index[(path, row, _utf16_column(texts[path].split("\n"), row, byte_col))]]
                if found is None:
                    continue
                if reference.predicate == CALLS:
                    found = self._with_initializer(found)
                results[path].references[number] = found
        for path in paths:
            asked = sum(1 for p, _, _ in asks if p == path)
            if asked and failures.get(path) == asked:
                self.report.rejected.append(path)
                results.pop(path)  # nothing usable: not marked enriched, retried next run
        self._diagnostics(paths, results)
        self._types(paths, texts, results)
        for path in paths:
            self.handle.close_document(self.root / path)
            if path in results:
                results[path].lines.append(
                    f"<{iris.file_iri(self.target.ulid, path)}> <{ENRICHED_BY}> {emit.literal(self.by)} ."
                )
        return results

    # -- definitions -------------------------------------------------------------------------

    def _targets(self, path: str, answer: object, result: ResolvedFile) -> tuple[tuple[str, float, str], ...] | None:
        locations = _locations(answer)
        if not locations:
            self.report.unanswered += 1
            return None
        self.report.resolved += 1
        found: list[tuple[str, float, str]] = []
        for uri, start in locations:
            file = _file_of(uri)
            if file is None:
                continue
            try:
                relative = file.resolve().relative_to(self.root).as_posix()
            except ValueError:
                relative = None
            if relative is not None:
                iri = self._internal(relative, start)
                if iri is not None:
                    found.append((iri, 1.0, self.by))
                continue
            key, lines = self._external(path, file, start)
            if key is not None:
                result.lines += lines
                found.append((iris.file_iri(self.target.ulid, path, key), 1.0, self.by))
        if not found:
            self.report.local += 1
        elif all("~external/" in iri for iri, _, _ in found):
            self.report.external += 1
        unique = list(dict.fromkeys(found))
        if len(unique) > 1:  # e.g. os.path: posixpath or ntpath; the server can't say which
            unique = [(iri, round(1.0 / len(unique), 3), by) for iri, _, by in unique]
        return tuple(unique)

    def _internal(self, relative: str, start: lsp.Position) -> str | None:
        """The entity whose name is defined at ``start`` in an indexed file; the file node
        for its first position (a module); None for a local variable or parameter."""
        data = self.files.get(relative)
        if data is None:
            return None
        if start.line == 0 and start.character == 0:
            return iris.file_iri(self.target.ulid, relative)
        name = _identifier_at(data.decode("utf-8", errors="replace").split("\n"), start)
        line = start.line + 1
        best: OutlineEntry | None = None
        for entry in self.outline(relative):
            inside = entry.name == name and entry.start_line <= line <= entry.end_line
            if inside and (best is None or entry.start_line > best.start_line or entry.end_line < best.end_line):
                best = entry
        return iris.file_iri(self.target.ulid, relative, best.key) if best is not None else None

    def _external(self, path: str, file: Path, start: lsp.Position) -> tuple[str | None, list[str]]:
        """An external-symbol node, one per referring file (so it has the file's history and
        goes when the file stops referring to it), named by its qualified name."""
        language = language_of(file.name, None) or "unknown"
        module = _module_name(file, language)
        if start.line == 0 and start.character == 0:
            qualified, name = module, module.rsplit(".", 1)[-1]
        else:
            lines = self._text(file)
            name = _identifier_at(lines, start) if lines is not None else None
            if not name or lines is None:
                return None, []
            # A method is named by its class too (http.cookiejar.CookieJar.set_cookie).
            owners = _enclosing_classes(lines, start.line) if language == "python" else []
            qualified = ".".join(p for p in (module, *owners, name) if p)
        key = f"~external/{language}/{qualified}"
        node = iris.file_iri(self.target.ulid, path, key)
        location = f"{file.as_uri()}#L{start.line + 1}:{start.character}"
        lines = [
            f"<{node}> <{RDF_TYPE}> <{EXTERNAL_SYMBOL}> .",
            f"<{node}> <{UKO}name> {emit.literal(name)} .",
            f"<{node}> <{UKO_CODE}qualifiedName> {emit.literal(qualified)} .",
            f"<{node}> <{UKO_CODE}language> {emit.literal(language)} .",
            f"<{node}> <{CA}externalLocation> {emit.literal(location)} .",
            *emit.provenance_lines(node, self.target.iri, path),
        ]
        return key, lines

    def _text(self, file: Path) -> list[str] | None:
        if file not in self._texts:
            try:
                self._texts[file] = file.read_text("utf-8", errors="replace").split("\n")
            except OSError:
                self._texts[file] = None
        return self._texts[file]

    def _with_initializer(self, found: tuple[tuple[str, float, str], ...]) -> tuple[tuple[str, float, str], ...]:
        """Calling a class runs its ``__init__`` (the analyzer records both edges too)."""
        extra: list[tuple[str, float, str]] = []
        for iri, confidence, by in found:
            parts = iris.split_iri(iri)
            if parts is None or not parts[2] or "~" in parts[2]:
                continue
            _, path, key = parts
            init = f"{key}.__init__"
            if any(entry.key == init for entry in self.outline(path)):
                extra.append((iris.file_iri(self.target.ulid, path, init), confidence, by))
        return (*found, *extra) if extra else found

    # -- diagnostics and types -----------------------------------------------------------------

    def _diagnostics(self, paths: list[str], results: dict[str, ResolvedFile]) -> None:
        published = self.handle.diagnostics_many([self.root / p for p in paths], DIAGNOSTICS_WAIT)
        for path in paths:
            if path not in results:
                continue
            for diagnostic in published.get(self.root / path, []):
                results[path].lines += self._diagnostic_lines(path, diagnostic)
                self.report.diagnostics += 1

    def _diagnostic_lines(self, path: str, diagnostic: lsp.Diagnostic) -> list[str]:
        line = diagnostic.range.start.line + 1
        owner: OutlineEntry | None = None
        for entry in self.outline(path):
            inside = entry.start_line <= line <= entry.end_line and not entry.key.startswith("~")
            within = owner is None or (entry.start_line >= owner.start_line and entry.end_line <= owner.end_line)
            if inside and within:
                owner = entry
        owner_key = owner.key if owner is not None else ""
        r = diagnostic.range
        span = f"{r.start.line + 1}:{r.start.character}-{r.end.line + 1}:{r.end.character}"
        code = "" if diagnostic.code is None else str(diagnostic.code)
        digest = hashlib.sha256(f"{span}|{code}|{diagnostic.message}".encode()).hexdigest()[:12]
        node = iris.file_iri(self.target.ulid, path, f"{owner_key}~diagnostic/{digest}")
        lines = [
            f"<{node}> <{RDF_TYPE}> <{DIAGNOSTIC}> .",
            f"<{node}> <{UKO}name> {emit.literal(diagnostic.message.split(chr(10), 1)[0][:200])} .",
            f"<{node}> <{UKO_CODE}severity> {emit.literal(_SEVERITY.get(diagnostic.severity or 1, 'error'))} .",
            f"<{node}> <{UKO_CODE}message> {emit.literal(diagnostic.message)} .",
            f"<{node}> <{UKO}sourceRange> {emit.literal(span)} .",
            f"<{node}> <{CA}resolvedBy> {emit.literal(self.by)} .",
            f"<{iris.file_iri(self.target.ulid, path, owner_key)}> <{emit.CONTAINS}> <{node}> .",
            *emit.provenance_lines(node, self.target.iri, path),
        ]
        if code:
            lines.append(f"<{node}> <{UKO_CODE}diagnosticCode> {emit.literal(code)} .")
        if diagnostic.source:
            lines.append(f"<{node}> <{UKO_CODE}diagnosticSource> {emit.literal(diagnostic.source)} .")
        return lines

    def _types(self, paths: list[str], texts: dict[str, str], results: dict[str, ResolvedFile]) -> None:
        """Hover on callables the syntax left without a return type or with untyped
        parameters; record the types the server shows for them."""
        capabilities = self.handle.capabilities
        if capabilities is None or not capabilities.hover_provider:
            return
        asks: list[tuple[str, OutlineEntry]] = []
        params: list[lsp.HoverParams] = []
        for path in paths:
            if path not in results:
                continue
            lines = texts[path].split("\n")
            for entry in self.outline(path):
                if not entry.untyped_callable and not entry.untyped_parameters:
                    continue
                position = _name_position(lines, entry)
                if position is not None:
                    asks.append((path, entry))
                    params.append(lsp.HoverParams(lsp.TextDocumentIdentifier((self.root / path).as_uri()), position))
        if not params:
            return
        answers = self.handle.requests(lsp.TEXT_DOCUMENT_HOVER, params)
        self.report.requests += len(params)
        for (path, entry), answer in zip(asks, answers, strict=True):
            if isinstance(answer, LSPError) or answer is None:
                continue
            signature = _signature(_hover_text(answer), entry.name)
            if signature is None:
                continue
            node = iris.file_iri(self.target.ulid, path, entry.key)
            lines: list[str] = []
            parameters, returned = signature
            if returned and entry.untyped_callable:
                lines.append(f"<{node}> <{UKO_CODE}inferredReturnType> {emit.literal(returned)} .")
                self.report.typed += 1
            declared = _parameter_types(parameters)
            inferred = {
                name: declared[name]
                for name in entry.untyped_parameters
                if declared.get(name) and declared[name] not in _NO_TYPE
            }
            if inferred:
                encoded = json.dumps(inferred, sort_keys=True)
                lines.append(f"<{node}> <{UKO_CODE}inferredParameterTypes> {emit.literal(encoded)} .")
                self.report.typed_parameters += len(inferred)
            if lines:
                results[path].lines += [*lines, f"<{node}> <{TYPES_INFERRED_BY}> {emit.literal(self.by)} ."]


# -- helpers ---------------------------------------------------------------------------------


def _utf16_column(lines: list[str], row: int, byte_col: int) -> int:
    """LSP counts UTF-16 code units; tree-sitter counts bytes."""
    if row >= len(lines):
        return byte_col
    head = lines[row].encode("utf-8")[:byte_col].decode("utf-8", errors="replace")
    return len(head.encode("utf-16-le")) // 2


def _identifier_at(lines: list[str], start: lsp.Position) -> str | None:
    if start.line >= len(lines):
        return None
    text = lines[start.line]
    encoded = text.encode("utf-16-le")[: start.character * 2].decode("utf-16-le", errors="replace")
    match = _IDENTIFIER.match(text, len(encoded))
    return match.group(0) if match else None


def _enclosing_classes(lines: list[str], row: int) -> list[str]:
    """The classes a Python definition at ``row`` is nested in, outermost first, by indentation."""
    if row >= len(lines):
        return []
    indent = len(lines[row]) - len(lines[row].lstrip())
    owners: list[str] = []
    for above in range(row - 1, -1, -1):
        if indent == 0:
            break
        text = lines[above]
        stripped = text.lstrip()
        depth = len(text) - len(stripped)
        if not stripped or stripped.startswith(("#", "@")) or depth >= indent:
            continue
        indent = depth  # an enclosing block: a class, a def, or an ``if`` of a stub
        match = _PYTHON_SCOPE.match(stripped)
        if match and stripped.startswith("class"):
            owners.append(match.group(1))
    return owners[::-1]


def _name_position(lines: list[str], entry: OutlineEntry) -> lsp.Position | None:
    """Where a callable's name is written: its first whole-word occurrence in its span."""
    pattern = re.compile(rf"(?<![\w$]){re.escape(entry.name)}(?![\w$])")
    for row in range(entry.start_line - 1, min(entry.end_line, len(lines))):
        match = pattern.search(lines[row])
        if match and not lines[row].lstrip().startswith("@"):
            return lsp.Position(row, len(lines[row][: match.start()].encode("utf-16-le")) // 2)
    return None


def _locations(answer: object) -> list[tuple[str, lsp.Position]]:
    items = answer if isinstance(answer, list) else [answer] if answer is not None else []
    out: list[tuple[str, lsp.Position]] = []
    for item in items:
        if isinstance(item, lsp.Location):
            out.append((item.uri, item.range.start))
        elif isinstance(item, lsp.LocationLink):
            out.append((item.target_uri, item.target_selection_range.start))
    return out


def _file_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


_STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()
_ANCHORS = ("site-packages", "dist-packages", "node_modules")
# Stubs bundled with a server: pyright's are in typeshed-fallback, itself inside site-packages.
_TYPESHED = ("typeshed", "typeshed-fallback")
_PYTHON_SCOPE = re.compile(r"(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")


def _module_name(file: Path, language: str) -> str:
    """A dotted module name for a Python file outside the resource (``os.path``); for other
    languages, the path below ``node_modules`` or the file name."""
    parts = file.parts
    below: tuple[str, ...] = ()
    stubs = [i for i, part in enumerate(parts) if part in _TYPESHED]
    if stubs:  # checked first: the server (and its stubs) may be installed in site-packages
        rest = parts[stubs[-1] + 1 :]
        below = rest[1:] if rest[:1] == ("stdlib",) else rest[2:] if rest[:1] == ("stubs",) else rest
    for anchor in _ANCHORS if not below else ():
        if anchor in parts:
            below = parts[len(parts) - parts[::-1].index(anchor) :]
            break
    if not below:
        try:
            below = file.resolve().relative_to(_STDLIB).parts
        except ValueError:
            below = (file.name,)
    if language != "python":
        return "/".join(below)
    names = [p for p in below if p]
    names[-1] = names[-1].rsplit(".", 1)[0]
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def _hover_text(answer: object) -> str:
    contents = getattr(answer, "contents", None)
    if isinstance(contents, lsp.MarkupContent):
        return contents.value
    if isinstance(contents, list):
        return "\n".join(c.value if hasattr(c, "value") else str(c) for c in contents)
    return getattr(contents, "value", None) or (contents if isinstance(contents, str) else "")


# What servers show for a parameter they know nothing about (pyright, TypeScript).
_NO_TYPE: Final = frozenset({"Unknown", "any"})
_CODE_FENCE = re.compile(r"```\w*\n(.*?)```", re.S)


def _signature(text: str, name: str) -> tuple[str, str | None] | None:
    """The parameter list and the return type in a hover's signature: Python
    ``def f(...) -> T``, TypeScript ``function f(...): T`` / ``(method) C.f(...): T``.
    None if the hover shows no signature of ``name``."""
    fenced = _CODE_FENCE.findall(text)
    signature = (fenced[0] if fenced else text).strip()
    at = re.search(rf"(?<![\w$]){re.escape(name)}\s*(<[^(]*>)?\s*\(", signature)
    if at is None:
        return None
    depth = 0
    end = -1
    for position, char in enumerate(signature[at.end() - 1 :], at.end() - 1):  # the closing parenthesis
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                end = position
                break
    if end < 0:
        return None
    parameters = signature[at.end() : end]
    rest = signature[end + 1 :].split("\n", 1)[0].strip()
    for arrow in ("->", ":", "=>"):
        if rest.startswith(arrow):
            returned = rest[len(arrow) :].strip().rstrip(":").strip()
            return parameters, returned or None
    return parameters, None


def _return_type(text: str, name: str) -> str | None:
    found = _signature(text, name)
    return found[1] if found else None


def _parameter_types(parameters: str) -> dict[str, str]:
    """``name: type`` of each parameter in a signature's parameter list (``*args: int``
    gives ``args``; ``/`` and a bare ``*`` are separators). Commas, colons and '=' inside
    brackets or strings belong to the type or the default."""
    out: dict[str, str] = {}
    for part in _top_level_split(parameters, ","):
        head, colon, annotated = _top_level_partition(part, ":")
        name = head.strip().lstrip("*").rstrip("?").strip()
        if not colon or not name.isidentifier():
            continue
        declared = _top_level_partition(annotated, "=")[0].strip()
        if declared:
            out[name] = declared
    return out


def _top_level_split(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    rest = text
    while True:
        head, found, rest = _top_level_partition(rest, separator)
        parts.append(head)
        if not found:
            return parts


def _top_level_partition(text: str, separator: str) -> tuple[str, str, str]:
    """``str.partition`` at the first ``separator`` outside brackets and quotes."""
    depth = 0
    quote = ""
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "([{<":
            depth += 1
        elif char in ")]}>" and depth:
            depth -= 1
        elif char == separator and depth == 0 and not (separator == "=" and text[i + 1 : i + 2] == ">"):
            return text[:i], separator, text[i + 1 :]
    return text, "", ""


def enrichment_json(reports: Sequence[EnrichmentReport]) -> str:
    return json.dumps([r.as_dict() for r in reports], sort_keys=True)


__all__ = ["EnrichmentReport", "LSPEnricher", "quote"]
