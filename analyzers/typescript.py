"""JavaScript and TypeScript files as UKO: modules, types, callables, imports, calls, tests.

One tree-sitter query per grammar finds the nodes that matter (declarations, imports, calls,
JSX elements, anonymous functions) in C; a single pass over them in source order keeps a
stack of enclosing scopes, so Python touches a small share of the tree, not every node.
Names are resolved after the pass (declarations are hoisted): through the file's imports,
its own definitions, ``this`` and the base class.

Module names are paths without extension with "/" -> "." (an index file names its
directory), shared by JavaScript and TypeScript in the "js" symbol namespace.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Final

import tree_sitter as ts
import tree_sitter_javascript
import tree_sitter_typescript

from cleveragents.indexing.model import Entity, FileAnalysis, Reference, RenderRequest, SourceFile, Span
from cleveragents.vocabulary import detail_levels, uko, uko_code, uko_oo, uko_ts

from . import _treesitter
from ._isolation import Isolation, file_failure

# ── Vocabulary ────────────────────────────────────────────────────

MODULE = uko_ts.Module
NAMESPACE = uko_ts.Namespace
CLASS = uko_ts.Class
INTERFACE = uko_ts.Interface
TYPE_ALIAS = uko_ts.TypeAlias
ENUM = uko_ts.Enum
FUNCTION = uko_ts.Function
METHOD = uko_ts.Method
AMBIENT = uko_ts.AmbientDeclaration
CONSTRUCTOR = uko_oo.Constructor
ATTRIBUTE = uko_oo.Attribute
FIELD = uko_code.Field
VARIABLE = uko_code.Variable
IMPORT = uko_code.Import
DOCSTRING = uko_code.Docstring
TEST_CASE = uko_code.TestCase

QUALIFIED_NAME = uko_code.qualifiedName
LANGUAGE = uko_code.language
SIGNATURE = uko_code.signature
DOC = uko_code.docstring
DECORATOR = uko_code.hasDecorator
VISIBILITY = uko_code.visibility
MODIFIERS = uko_code.modifiers
PARAMETERS = uko_code.hasParameters
RETURN_TYPE = uko_code.hasReturnType
IMPORTED_NAME = uko_code.importedName
TYPE_PARAMETERS = uko_ts.typeParameters
DEFAULT_EXPORT = uko_ts.isDefaultExport

CALLS = uko_code.calls
DEPENDS_ON = uko.dependsOn
IMPORTS = uko_code.imports
RE_EXPORTS = uko_ts.reExports
TESTS_CALLABLE = uko_code.testsCallable
INHERITS = uko_oo.inheritsFrom
IMPLEMENTS = uko_oo.implements
HAS_METHOD = uko_oo.hasMethod
HAS_ATTRIBUTE = uko_oo.hasAttribute

NS = "js"
# One encoder: json.dumps with options builds a new one per call.
_JSON = json.JSONEncoder(ensure_ascii=False)
# Confidence by how a name was resolved (contract guidance).
BY_SCOPE = 0.9
BY_THIS = 0.8
INHERITED = 0.7
TESTED = 0.7

# ── Files and grammars ────────────────────────────────────────────

_SUFFIX = re.compile(r"\.(?:d\.[cm]?ts|[cm]?[jt]s|[jt]sx)$")
_TS_SUFFIXES = frozenset({".d.ts", ".d.mts", ".d.cts", ".tsx", ".mts", ".cts", ".ts"})
_DECLARATION_FILE = re.compile(r"\.d\.[cm]?ts$")
_TEST_FILE = re.compile(r"(^|/)__tests__/|\.(test|spec)\.[cm]?[jt]sx?$")


def _suffix(path: str) -> str:
    found = _SUFFIX.search(path)
    return found.group(0) if found else ""


def module_name(path: str) -> str:
    """``src/util/strings.ts`` -> ``src.util.strings``; ``src/util/index.ts`` -> ``src.util``."""
    suffix = _suffix(path)
    stem = path[: -len(suffix)] if suffix else path
    parts = [p for p in stem.split("/") if p and p != "."]
    if len(parts) > 1 and parts[-1] == "index":
        parts.pop()
    return ".".join(parts)


def _file_name(path: str) -> str:
    """The module's own name: the file name without extension, or the directory of an index file."""
    base = posixpath.basename(path)
    suffix = _suffix(base)
    stem = base[: -len(suffix)] if suffix else base
    return module_name(path).rpartition(".")[2] if stem == "index" else stem


def _grammar_factory(path: str) -> Callable[[], object]:
    suffix = _suffix(path)
    if suffix == ".tsx":
        return tree_sitter_typescript.language_tsx
    if suffix in _TS_SUFFIXES:
        return tree_sitter_typescript.language_typescript
    # The JavaScript grammar parses JSX itself; the TSX one would accept type syntax JS lacks.
    return tree_sitter_javascript.language


# Every node kind the pass looks at; kinds a grammar lacks are left out of its query.
_QUERY_KINDS = (
    "class_declaration",
    "abstract_class_declaration",
    "class",
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "function_declaration",
    "generator_function_declaration",
    "function_signature",
    "function_expression",
    "function",
    "arrow_function",
    "generator_function",
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "public_field_definition",
    "field_definition",
    "property_signature",
    "internal_module",
    "module",
    "variable_declarator",
    "import_statement",
    "export_statement",
    "call_expression",
    "new_expression",
    "jsx_opening_element",
    "jsx_self_closing_element",
)


@cache
def _query(factory: Callable[[], object]) -> ts.Query:
    language = ts.Language(factory())
    kinds = [k for k in _QUERY_KINDS if language.id_for_node_kind(k, True) is not None]
    return ts.Query(language, "[" + " ".join(f"({k})" for k in kinds) + "] @n")


# What a parse error swallowed, named like the source does.
_HIDDEN_DEFINITION = re.compile(
    r"\b(?:(?:async\s+)?function\s*\*?\s*[A-Za-z_$][\w$]*|(?:abstract\s+)?class\s+[A-Za-z_$][\w$]*"
    r"|interface\s+[A-Za-z_$][\w$]*|enum\s+[A-Za-z_$][\w$]*|type\s+[A-Za-z_$][\w$]*(?=\s*[<=])"
    r"|namespace\s+[\w$.]+)"
)

# Names too common to guess a target for by bare name: JavaScript globals, test and
# framework functions, and generic verbs that many unrelated modules define.
_COMMON_WORDS = """
require define setTimeout setInterval clearTimeout clearInterval setImmediate queueMicrotask parseInt parseFloat
isNaN isFinite String Number Boolean Object Array Symbol BigInt Promise Error TypeError RangeError SyntaxError
ReferenceError Date RegExp Map Set WeakMap WeakSet WeakRef Proxy Reflect JSON Math Intl URL URLSearchParams Buffer
fetch encodeURIComponent decodeURIComponent encodeURI decodeURI escape unescape structuredClone atob btoa alert
Function eval Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array
ArrayBuffer DataView TextEncoder TextDecoder AbortController Event CustomEvent Headers Request Response FormData
Blob File describe it test expect beforeEach afterEach beforeAll afterAll jest vi assert log push pop map then get
set call apply bind emit next done callback resolve reject forEach filter reduce toString valueOf noop func handler
main init run start stop create update render invariant warning debug print format parse join keys values entries
"""
_COMMON = frozenset(_COMMON_WORDS.split())
_DESCRIBE = frozenset({"describe", "suite", "context", "fdescribe", "xdescribe"})
_TEST = frozenset({"it", "test", "specify", "fit", "xit", "xtest"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_CLASS_KINDS = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_MEMBER_TOKENS = frozenset({"static", "async", "abstract", "readonly", "declare", "get", "set", "const"})


def _text(node: ts.Node | None) -> str:
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw else ""


def _span(first: ts.Node, last: ts.Node) -> Span:
    (sl, sc), (el, ec) = first.start_point, last.end_point
    return Span(sl + 1, sc, el + 1, ec, first.start_byte, last.end_byte)


def _one_line(text: str, limit: int = 0) -> str:
    flat = " ".join(text.split())
    return flat if not limit or len(flat) <= limit else flat[: limit - 1] + "…"


def _annotation(node: ts.Node | None) -> str | None:
    """A type annotation without its leading ':' (``: Promise<T>`` -> ``Promise<T>``)."""
    if node is None:
        return None
    text = _text(node).strip()
    return text[1:].strip() if text.startswith(":") else text


_DOC_MARGIN = re.compile(r"^[ \t]*\*? ?|[ \t\r]+$", re.MULTILINE)


def jsdoc(comment: str) -> str:
    """The text of a ``/** ... */`` comment without the comment markers and leading asterisks."""
    body = comment[3:-2] if comment.endswith("*/") else comment[3:]
    return _DOC_MARGIN.sub("", body).strip()


def _doc_comment(node: ts.Node) -> ts.Node | None:
    """The ``/** */`` comment directly above ``node`` (no blank line between), if any."""
    previous = node.prev_named_sibling
    if (
        previous is not None
        and previous.type == "comment"
        and previous.start_byte + 4 < previous.end_byte
        and (previous.text or b"").startswith(b"/**")
        and previous.end_point[0] + 1 >= node.start_point[0]
    ):
        return previous
    return None


def _string_value(node: ts.Node | None) -> str | None:
    """The content of a string literal or template (substitutions kept as written)."""
    return _text(node)[1:-1] if node is not None and node.type in ("string", "template_string") else None


def resolve_specifier(specifier: str, path: str) -> list[str]:
    """Module names an import specifier may denote: a relative one resolved against ``path``,
    a bare one as the package's own name (and its subpath, if any)."""
    if specifier.startswith("."):
        return list(_relative_module(specifier, posixpath.dirname(path)))
    if specifier.startswith("/") or not specifier:
        return []
    bare = specifier.removeprefix("node:")
    parts = bare.split("/")
    # A package is named as npm names it ('@scope/pkg'); a subpath hangs under it with dots.
    cut = 2 if bare.startswith("@") else 1
    package = "/".join(parts[:cut])
    return [".".join([package, *parts[cut:]]), package] if len(parts) > cut else [package]


@lru_cache(maxsize=8192)
def _relative_module(specifier: str, directory: str) -> tuple[str, ...]:
    """Cached: the files of one directory import the same few siblings over and over."""
    joined = posixpath.normpath(posixpath.join(directory, specifier))
    if joined == ".." or joined.startswith("../"):
        return ()
    name = module_name(joined if joined != "." else "index")
    return (name,) if name else ()


# ── The per-file pass ─────────────────────────────────────────────


@dataclass(slots=True)
class _Scope:
    end: int  # end byte of the scope's node
    key: str  # nearest enclosing entity
    cls: str | None  # what `this` is: the enclosing class's key
    in_body: bool  # inside a function body (locals are not entities)
    ambient: bool  # inside `declare` or a .d.ts file
    locals: frozenset[str]  # parameter names in scope (not call targets)
    tests: tuple[str, ...]  # titles of enclosing describe/it blocks


@dataclass(slots=True)
class _Call:
    """A call, ``new`` or JSX element seen in the pass, resolved once every definition is known."""

    source: str
    cls: str | None
    locals: frozenset[str]
    kind: str  # 'name', 'member', 'this', 'super'
    head: str
    member: str
    line: int
    at: tuple[int, int] | None = None  # (row, byte column) of the name a language server resolves


class _FilePass:
    def __init__(self, source: SourceFile, factory: Callable[[], object]) -> None:
        self.path = source.path
        self.data = source.data
        self.factory = factory
        self.module = module_name(source.path) or source.path
        self.is_ts = _suffix(source.path) in _TS_SUFFIXES
        self.is_test_file = bool(_TEST_FILE.search(source.path))
        self.entities: list[Entity] = []
        self.by_key: dict[str, Entity] = {}
        self.base_key: dict[str, str] = {}  # key -> key without the "~n" suffix
        self.kind: dict[str, str] = {}  # base key -> 'function' | 'class' | ...
        self.counts: dict[str, int] = {}
        self.aliases: dict[str, str] = {}  # local name -> qualified name it was imported as
        self.references: list[Reference] = []
        self.calls: list[_Call] = []
        # (class key, predicate, name, line, position of the name for a language server)
        self.heritage: list[tuple[str, str, str, int, tuple[int, int]]] = []
        self.exported: list[tuple[str, bool]] = []  # (local name, as default) from export clauses
        self.isolation = Isolation(self.entities)

    # ── driver ──

    def run(self) -> FileAnalysis:
        tree = _treesitter.parse(self.factory, self.data)
        root = tree.root_node
        file_node = Entity("", (MODULE,), _file_name(self.path), None, None, symbols=((NS, self.module),))
        file_node.add(QUALIFIED_NAME, self.module)
        file_node.add(LANGUAGE, "typescript" if self.is_ts else "javascript")
        self.entities.append(file_node)
        self.by_key[""] = file_node
        self._module_doc(root)
        ambient = bool(_DECLARATION_FILE.search(self.path))
        stack = [_Scope(root.end_byte, "", None, False, ambient, frozenset(), ())]
        # Single-node patterns match in pre-order: source order, enclosing nodes first.
        matches = ts.QueryCursor(_query(self.factory)).matches(root)
        handlers = _HANDLERS
        isolation = self.isolation
        for _, captured in matches:
            node = captured["n"][0]
            if isolation.failed and isolation.inside_failed(node):
                continue  # part of a definition that failed: it went with it
            start = node.start_byte
            while stack[-1].end <= start and len(stack) > 1:
                stack.pop()
            mark = len(self.entities)
            try:  # a failure loses this definition, not the file
                inner = handlers[node.type](self, node, stack[-1])
            except Exception as exc:  # any analyzer bug
                for dropped in self.entities[mark:]:
                    self.by_key.pop(dropped.key, None)
                isolation.fail(node, exc, mark)
                continue
            if inner is not None:
                stack.append(inner)
        if isolation.failed:  # what the dropped definitions recorded for later goes with them
            self.heritage = [h for h in self.heritage if h[0] in self.by_key]
            self.calls = [c for c in self.calls if c.source in self.by_key]
        with isolation.phase("exports"):
            self._mark_exports()
        with isolation.phase("resolution"):
            self._resolve()
        problems = _treesitter.problems(tree, _HIDDEN_DEFINITION)
        with isolation.phase("fingerprints"):
            prints = _treesitter.comment_fingerprints(self.factory, root, self.data, ("comment",))
            _treesitter.add_fingerprints(self.entities, prints)
        return isolation.finish(FileAnalysis(self.entities, self.references, problems))

    # ── entities ──

    def _add(
        self,
        base: str,
        types: tuple[str, ...],
        name: str,
        parent: str,
        first: ts.Node,
        last: ts.Node,
        kind: str,
        doc_anchor: ts.Node | None = None,
    ) -> Entity:
        count = self.counts.get(base, 0) + 1
        self.counts[base] = count
        key = base if count == 1 else f"{base}~{count}"
        entity = Entity(key, types, name, parent, _span(first, last))
        if kind not in ("test", "import", "doc"):
            qualified = f"{self.module}.{base}"
            entity.symbols = ((NS, qualified),)
            entity.add(QUALIFIED_NAME, qualified)
            self.kind.setdefault(base, kind)
        self.entities.append(entity)
        self.by_key[key] = entity
        self.base_key[key] = base
        if doc_anchor is not None:
            self._attach_doc(entity, doc_anchor)
        return entity

    def _attach_doc(self, owner: Entity, anchor: ts.Node) -> None:
        comment = _doc_comment(anchor)
        if comment is None:
            return
        text = jsdoc(_text(comment))
        if not text:
            return
        owner.add(DOC, text)
        self._add(f"{owner.key}/doc", (DOCSTRING,), "doc", owner.key, comment, comment, "doc")

    def _module_doc(self, root: ts.Node) -> None:
        # The file's doc comment may follow a directive ('use strict') or a shebang.
        first = next((c for c in root.named_children[:3] if c.type == "comment"), None)
        if first is not None:
            raw = _text(first)
            if raw.startswith("/**") and re.search(r"@(file|fileoverview|module|packageDocumentation)\b", raw):
                self.by_key[""].add(DOC, jsdoc(raw))
                self._add("/doc", (DOCSTRING,), "doc", "", first, first, "doc")

    def _child_key(self, scope: _Scope, name: str) -> str:
        return f"{scope.key}.{name}" if scope.key else name

    def _exported(self, outer: ts.Node, entity: Entity) -> None:
        """Export markers of a declaration wrapped in ``export [default]``."""
        if outer.type != "export_statement":
            return
        entity.add(MODIFIERS, "export")
        if any(c.type == "default" for c in outer.children):
            self._make_default(entity)

    def _make_default(self, entity: Entity) -> None:
        if DEFAULT_EXPORT in entity.values:
            return
        entity.add(MODIFIERS, "default")
        entity.add(DEFAULT_EXPORT, True)
        entity.symbols = (*entity.symbols, (NS, f"{self.module}.default"))

    def _declaration_outer(self, node: ts.Node) -> ts.Node:
        """The statement a declaration's source range starts at: its export or declare wrapper."""
        parent = node.parent
        while parent is not None and parent.type in ("export_statement", "ambient_declaration"):
            node, parent = parent, parent.parent
        return node

    def _common(self, entity: Entity, node: ts.Node, scope: _Scope) -> None:
        """Type parameters, and the ambient marker of a module- or namespace-level declaration
        (members of a declared class or interface are part of its declaration)."""
        type_parameters = node.child_by_field_name("type_parameters")
        if type_parameters is not None:
            entity.add(TYPE_PARAMETERS, _text(type_parameters))
        if self.kind.get(self.base_key.get(scope.key, scope.key)) not in (None, "namespace"):
            return
        if scope.ambient or (node.parent is not None and node.parent.type == "ambient_declaration"):
            entity.add(MODIFIERS, "declare")
            entity.types = (*entity.types, AMBIENT)

    def _signature(self, entity: Entity, start: int, end: int) -> None:
        text = _one_line(self.data[start:end].decode("utf-8", errors="replace"), 500)
        entity.add(SIGNATURE, text.rstrip(";=").rstrip())

    def _decorators(self, entity: Entity, nodes: list[ts.Node]) -> None:
        for decorator in nodes:
            entity.add(DECORATOR, _one_line(_text(decorator).lstrip("@")))

    # ── handlers: each returns the scope its node opens, if any ──

    def _class(self, node: ts.Node, scope: _Scope) -> _Scope | None:
        parent = node.parent
        outer = node
        name_node = node.child_by_field_name("name")
        name = _text(name_node)
        if node.type == "class":
            # A class expression is a definition only when bound to a name or default-exported.
            if parent is not None and parent.type == "variable_declarator" and not scope.in_body:
                name = _text(parent.child_by_field_name("name"))
                outer = self._declarator_outer(parent)
            elif parent is not None and parent.type == "export_statement":
                name = name or "default"
                outer = parent
            else:
                return _Scope(node.end_byte, scope.key, None, scope.in_body, scope.ambient, scope.locals, scope.tests)
        else:
            outer = self._declaration_outer(node)
            name = name or "default"
        key = self._child_key(scope, name)
        entity = self._add(key, (CLASS,), name, scope.key, outer, node, "class", outer)
        self._exported(outer, entity)
        if node.type == "abstract_class_declaration":
            entity.add(MODIFIERS, "abstract")
        self._common(entity, node, scope)
        decorators = [c for c in node.children if c.type == "decorator"]
        if outer.type == "export_statement":
            decorators = [c for c in outer.children if c.type == "decorator"] + decorators
        self._decorators(entity, decorators)
        body = node.child_by_field_name("body")
        self._signature(entity, node.start_byte, body.start_byte if body is not None else node.end_byte)
        for child in node.named_children:
            if child.type == "class_heritage":
                self._class_heritage(entity.key, child)
        return _Scope(node.end_byte, entity.key, entity.key, scope.in_body, scope.ambient, scope.locals, scope.tests)

    def _class_heritage(self, key: str, heritage: ts.Node) -> None:
        for clause in heritage.named_children:
            if clause.type == "extends_clause":
                for value in clause.children_by_field_name("value"):
                    self.heritage.append(
                        (key, INHERITS, _type_name(value), value.start_point[0] + 1, _name_position(value))
                    )
            elif clause.type == "implements_clause":
                for value in clause.named_children:
                    self.heritage.append(
                        (key, IMPLEMENTS, _type_name(value), value.start_point[0] + 1, _name_position(value))
                    )
            elif clause.type != "comment":  # JavaScript: `extends <expression>` directly
                self.heritage.append(
                    (key, INHERITS, _type_name(clause), clause.start_point[0] + 1, _name_position(clause))
                )

    def _interface(self, node: ts.Node, scope: _Scope) -> _Scope:
        outer = self._declaration_outer(node)
        name = _text(node.child_by_field_name("name"))
        entity = self._add(self._child_key(scope, name), (INTERFACE,), name, scope.key, outer, node, "interface", outer)
        self._exported(outer, entity)
        self._common(entity, node, scope)
        body = node.child_by_field_name("body")
        self._signature(entity, node.start_byte, body.start_byte if body is not None else node.end_byte)
        for child in node.named_children:
            if child.type == "extends_type_clause":
                for value in child.named_children:
                    line = value.start_point[0] + 1
                    self.heritage.append((entity.key, INHERITS, _type_name(value), line, _name_position(value)))
        return _Scope(node.end_byte, entity.key, None, scope.in_body, scope.ambient, scope.locals, scope.tests)

    def _type_alias(self, node: ts.Node, scope: _Scope) -> _Scope:
        outer = self._declaration_outer(node)
        name = _text(node.child_by_field_name("name"))
        entity = self._add(self._child_key(scope, name), (TYPE_ALIAS,), name, scope.key, outer, node, "type", outer)
        self._exported(outer, entity)
        self._common(entity, node, scope)
        self._signature(entity, node.start_byte, node.end_byte)
        # Nothing inside a type is an entity (object types hold method/property signatures).
        return _Scope(node.end_byte, entity.key, None, True, scope.ambient, scope.locals, scope.tests)

    def _enum(self, node: ts.Node, scope: _Scope) -> _Scope:
        outer = self._declaration_outer(node)
        name = _text(node.child_by_field_name("name"))
        entity = self._add(self._child_key(scope, name), (ENUM,), name, scope.key, outer, node, "enum", outer)
        self._exported(outer, entity)
        if any(c.type == "const" for c in node.children):
            entity.add(MODIFIERS, "const")
        self._common(entity, node, scope)
        body = node.child_by_field_name("body")
        self._signature(entity, node.start_byte, body.start_byte if body is not None else node.end_byte)
        for member in body.named_children if body is not None else ():
            name_node = member.child_by_field_name("name") if member.type == "enum_assignment" else member
            if member.type in ("enum_assignment", "property_identifier", "string"):
                member_name = _text(name_node).strip("'\"")
                field = self._add(
                    f"{entity.key}.{member_name}", (FIELD,), member_name, entity.key, member, member, "field"
                )
                field.add(VISIBILITY, "public")
                entity.links.append((HAS_ATTRIBUTE, field.key))
        return _Scope(node.end_byte, entity.key, None, True, scope.ambient, scope.locals, scope.tests)

    def _callable(
        self,
        node: ts.Node,
        scope: _Scope,
        name: str,
        types: tuple[str, ...],
        outer: ts.Node,
        kind: str,
        first: ts.Node | None = None,
    ) -> tuple[Entity, frozenset[str]]:
        """A function or method entity: parameters, return type, modifiers, signature. Its range
        runs from ``first`` (a leading decorator) or ``outer`` (export, const) to ``outer``'s end."""
        anchor = first or outer
        entity = self._add(self._child_key(scope, name), types, name, scope.key, anchor, outer, kind, anchor)
        parameters = node.child_by_field_name("parameters")
        names: frozenset[str] = frozenset()
        if parameters is not None:
            params = _parameters(parameters)
            names = frozenset(p["name"] or "" for p in params) - {""}
            entity.add(PARAMETERS, _JSON.encode(params))
        else:
            single = node.child_by_field_name("parameter")  # `x => ...`
            if single is not None:
                params = [{"name": _text(single), "type": None, "default": None, "kind": "required"}]
                names = frozenset({params[0]["name"]})
                entity.add(PARAMETERS, _JSON.encode(params))
        returns = _annotation(node.child_by_field_name("return_type"))
        if returns:
            entity.add(RETURN_TYPE, returns)
        for child in node.children:
            kind_ = child.type
            if kind_ in _MEMBER_TOKENS:
                entity.add(MODIFIERS, kind_)
            elif kind_ == "*":
                entity.add(MODIFIERS, "generator")
        self._common(entity, node, scope)
        body = node.child_by_field_name("body")
        holder = node.parent
        # A bound function value's signature starts at the name it is bound to.
        start = holder.start_byte if node.type in _FUNCTION_VALUES and holder is not None else node.start_byte
        self._signature(entity, start, body.start_byte if body is not None else node.end_byte)
        return entity, names

    def _function(self, node: ts.Node, scope: _Scope) -> _Scope:
        outer = self._declaration_outer(node)
        name = _text(node.child_by_field_name("name")) or "default"
        entity, params = self._callable(node, scope, name, (FUNCTION,), outer, "function")
        self._exported(outer, entity)
        return _Scope(node.end_byte, entity.key, None, True, scope.ambient, scope.locals | params, scope.tests)

    def _function_value(self, node: ts.Node, scope: _Scope) -> _Scope:
        """An arrow function or function expression: a Function when bound at declaration level."""
        this = scope.cls if node.type == "arrow_function" else None
        parent = node.parent
        name = ""
        outer = node
        if not scope.in_body and parent is not None:
            ptype = parent.type
            if ptype == "variable_declarator" and parent.child_by_field_name("value") == node:
                name_node = parent.child_by_field_name("name")
                if name_node is not None and name_node.type == "identifier":
                    name = _text(name_node)
                    outer = self._declarator_outer(parent)
            elif ptype == "export_statement":
                name, outer = "default", parent
            elif ptype == "assignment_expression":
                name = _commonjs_export(parent.child_by_field_name("left"))
                outer = (
                    parent.parent
                    if parent.parent is not None and parent.parent.type == "expression_statement"
                    else parent
                )
        if not name:
            params = _parameter_names(node)
            return _Scope(node.end_byte, scope.key, this, True, scope.ambient, scope.locals | params, scope.tests)
        entity, params = self._callable(node, scope, name, (FUNCTION,), outer, "function")
        declaration = parent.parent if parent is not None and parent.type == "variable_declarator" else None
        if declaration is not None and declaration.type in ("lexical_declaration", "variable_declaration"):
            keyword = declaration.child(0)
            if keyword is not None and keyword.type in ("const", "let", "var"):
                entity.add(MODIFIERS, keyword.type)
            self._exported(self._declaration_outer(declaration), entity)
        elif outer.type == "export_statement":
            self._exported(outer, entity)
        else:  # `exports.name = ...`
            entity.add(MODIFIERS, "export")
        return _Scope(node.end_byte, entity.key, this, True, scope.ambient, scope.locals | params, scope.tests)

    def _declarator_outer(self, declarator: ts.Node) -> ts.Node:
        """The whole ``[export] const x = ...`` statement when it declares one name, else the declarator."""
        declaration = declarator.parent
        if declaration is None or declaration.type not in ("lexical_declaration", "variable_declaration"):
            return declarator
        if declaration.named_child_count != 1:
            return declarator
        return self._declaration_outer(declaration)

    def _member_visibility(self, node: ts.Node, name_node: ts.Node | None, entity: Entity) -> None:
        visibility = "public"
        for child in node.children:
            if child.type == "accessibility_modifier":
                visibility = _text(child)
            elif child.type == "override_modifier":
                entity.add(MODIFIERS, "override")
        if name_node is not None and name_node.type == "private_property_identifier":
            visibility = "#private"
        entity.add(VISIBILITY, visibility)

    def _method(self, node: ts.Node, scope: _Scope) -> _Scope | None:
        parent = node.parent
        ptype = parent.type if parent is not None else ""
        if ptype not in ("class_body", "interface_body") or (scope.cls is None and ptype == "class_body"):
            if node.type == "method_definition":  # an object literal's method: `this` is the object
                params = _parameter_names(node)
                return _Scope(node.end_byte, scope.key, None, True, scope.ambient, scope.locals | params, scope.tests)
            return None
        name_node = node.child_by_field_name("name")
        name = _text(name_node)
        decorators: list[ts.Node] = []
        previous = node.prev_named_sibling
        while previous is not None and previous.type == "decorator":
            decorators.insert(0, previous)
            previous = previous.prev_named_sibling
        types = (CONSTRUCTOR, METHOD) if name == "constructor" and ptype == "class_body" else (METHOD,)
        first = decorators[0] if decorators else None
        entity, params = self._callable(node, scope, name, types, node, "method", first)
        self._member_visibility(node, name_node, entity)
        if any(c.type == "?" for c in node.children):
            entity.add(MODIFIERS, "optional")
        self._decorators(entity, decorators)
        self.by_key[scope.key].links.append((HAS_METHOD, entity.key))
        if CONSTRUCTOR in types:
            self._parameter_properties(node, scope.key)
        if node.type != "method_definition":
            return None
        return _Scope(node.end_byte, entity.key, scope.cls, True, scope.ambient, scope.locals | params, scope.tests)

    def _parameter_properties(self, constructor: ts.Node, class_key: str) -> None:
        """``constructor(private readonly x: T)`` declares the field ``x`` too."""
        parameters = constructor.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters is not None else ():
            tokens = [c for c in parameter.children if c.type in ("accessibility_modifier", "readonly")]
            if not tokens:
                continue
            pattern = parameter.child_by_field_name("pattern")
            name = _text(pattern)
            entity = self._add(f"{class_key}.{name}", (ATTRIBUTE,), name, class_key, parameter, parameter, "field")
            entity.add(VISIBILITY, next((_text(t) for t in tokens if t.type != "readonly"), "public"))
            if any(t.type == "readonly" for t in tokens):
                entity.add(MODIFIERS, "readonly")
            entity.add(MODIFIERS, "parameter-property")
            annotation = _annotation(parameter.child_by_field_name("type"))
            if annotation:
                entity.add(SIGNATURE, f"{name}: {annotation}")
            self.by_key[class_key].links.append((HAS_ATTRIBUTE, entity.key))

    def _field(self, node: ts.Node, scope: _Scope) -> _Scope | None:
        if scope.cls is None or node.parent is None or node.parent.type != "class_body":
            return None
        name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
        name = _text(name_node)
        value = node.child_by_field_name("value")
        decorators = [c for c in node.children if c.type == "decorator"]
        if value is not None and value.type in _FUNCTION_VALUES:
            # `handle = () => {...}` is a method bound per instance.
            entity, params = self._callable(value, scope, name, (METHOD,), node, "method")
            self.by_key[scope.key].links.append((HAS_METHOD, entity.key))
        else:
            key = f"{scope.key}.{name}"
            entity = self._add(key, (ATTRIBUTE,), name, scope.key, node, node, "field", node)
            end = value.start_byte if value is not None else node.end_byte
            self._signature(entity, node.start_byte, end)
            params = frozenset()
            self.by_key[scope.key].links.append((HAS_ATTRIBUTE, entity.key))
        for child in node.children:
            if child.type in _MEMBER_TOKENS:
                entity.add(MODIFIERS, child.type)
        self._member_visibility(node, name_node, entity)
        if any(c.type == "?" for c in node.children):
            entity.add(MODIFIERS, "optional")
        self._decorators(entity, decorators)
        return _Scope(node.end_byte, entity.key, scope.cls, True, scope.ambient, scope.locals | params, scope.tests)

    def _property_signature(self, node: ts.Node, scope: _Scope) -> None:
        if node.parent is None or node.parent.type != "interface_body":
            return
        name = _text(node.child_by_field_name("name"))
        entity = self._add(f"{scope.key}.{name}", (ATTRIBUTE,), name, scope.key, node, node, "field", node)
        self._signature(entity, node.start_byte, node.end_byte)
        entity.add(VISIBILITY, "public")
        for child in node.children:
            if child.type == "readonly":
                entity.add(MODIFIERS, "readonly")
            elif child.type == "?":
                entity.add(MODIFIERS, "optional")
        self.by_key[scope.key].links.append((HAS_ATTRIBUTE, entity.key))

    def _namespace(self, node: ts.Node, scope: _Scope) -> _Scope | None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        name = _string_value(name_node) or _text(name_node)
        outer = self._declaration_outer(node)
        entity = self._add(self._child_key(scope, name), (NAMESPACE,), name, scope.key, outer, node, "namespace", outer)
        self._exported(outer, entity)
        self._common(entity, node, scope)
        ambient = scope.ambient or outer.type == "ambient_declaration"
        return _Scope(node.end_byte, entity.key, None, scope.in_body, ambient, scope.locals, scope.tests)

    def _variable(self, node: ts.Node, scope: _Scope) -> None:
        """A module- or namespace-level variable (functions and classes bound to one are handled there)."""
        if scope.in_body or scope.cls is not None:
            return
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "identifier":
            return
        value = node.child_by_field_name("value")
        if value is not None:
            vtype = value.type
            if vtype in _FUNCTION_VALUES or vtype == "class":
                return
            if vtype in ("call_expression", "await_expression") and _import_call(value) is not None:
                return  # `const x = require('y')` is an import
        declaration = node.parent
        if declaration is None or declaration.type not in ("lexical_declaration", "variable_declaration"):
            return
        outer = self._declarator_outer(node)
        name = _text(name_node)
        entity = self._add(self._child_key(scope, name), (VARIABLE,), name, scope.key, outer, node, "variable", outer)
        keyword = declaration.child(0)
        if keyword is not None and keyword.type in ("const", "let", "var"):
            entity.add(MODIFIERS, keyword.type)
        self._exported(self._declaration_outer(declaration), entity)
        self._common(entity, declaration, scope)
        self._signature(entity, node.start_byte, value.start_byte if value is not None else node.end_byte)

    # ── imports ──

    def _import_entity(self, specifier: str, node: ts.Node, predicate: str) -> str | None:
        """One Import node per specifier: the file depends on the module, the import node imports (or
        re-exports) it. Returns the qualified name the module's members hang under."""
        key = f"import/{specifier}"
        known = key in self.by_key
        if not known:
            self._add(key, (IMPORT,), specifier, "", node, node, "import").add(IMPORTED_NAME, specifier)
        names = resolve_specifier(specifier, self.path)
        if not names:
            return None
        targets = tuple((t, BY_SCOPE) for t in names)
        line = node.start_point[0] + 1
        at = _specifier_position(node)
        if not known:
            self.references.append(Reference("", DEPENDS_ON, NS, targets, None, line, at))
        if not known or predicate == RE_EXPORTS:
            self.references.append(Reference(key, predicate, NS, targets, None, line, at))
        return names[0]

    def _import(self, node: ts.Node, scope: _Scope) -> None:
        specifier = _import_specifier(node)
        if specifier is None:
            return
        require = next((c for c in node.named_children if c.type == "import_require_clause"), None)
        base = self._import_entity(specifier, node, IMPORTS)
        if base is None:
            return
        if require is not None:
            local = next((c for c in require.named_children if c.type == "identifier"), None)
            if local is not None:
                self.aliases[_text(local)] = base
            return
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        # A package's default import is mostly the package itself (CommonJS `module.exports`);
        # a relative module's is its `export default` member.
        default = f"{base}.default" if specifier.startswith(".") else base
        for part in clause.named_children if clause is not None else ():
            if part.type == "identifier":
                self.aliases[_text(part)] = default
            elif part.type == "namespace_import":
                local = next((c for c in part.named_children if c.type == "identifier"), None)
                if local is not None:
                    self.aliases[_text(local)] = base
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    imported = _string_value(spec.child_by_field_name("name")) or _text(
                        spec.child_by_field_name("name")
                    )
                    alias = spec.child_by_field_name("alias")
                    self.aliases[_text(alias) if alias is not None else imported] = f"{base}.{imported}"

    def _export(self, node: ts.Node, scope: _Scope) -> None:
        source = node.child_by_field_name("source")
        if source is not None:
            specifier = _string_value(source)
            if specifier is not None:
                self._import_entity(specifier, node, RE_EXPORTS)
            return
        if scope.key:  # export clauses inside namespaces name namespace members
            return
        default = any(c.type == "default" for c in node.children)
        for child in node.named_children:
            if child.type == "export_clause":
                for spec in child.named_children:
                    if spec.type == "export_specifier":
                        local = _text(spec.child_by_field_name("name"))
                        alias = _text(spec.child_by_field_name("alias"))
                        self.exported.append((local, alias == "default"))
            elif child.type == "identifier" and (default or any(c.type == "=" for c in node.children)):
                self.exported.append((_text(child), True))

    def _mark_exports(self) -> None:
        for local, as_default in self.exported:
            entity = self.by_key.get(local)
            if entity is None:
                continue
            if "export" not in entity.values.get(MODIFIERS, []):
                entity.add(MODIFIERS, "export")
            if as_default:
                self._make_default(entity)

    # ── calls ──

    def _call(self, node: ts.Node, scope: _Scope) -> _Scope | None:
        callee = node.child_by_field_name("function")
        if callee is None:
            return None
        ctype = callee.type
        imported = _import_call(node)
        if imported is not None:
            base = self._import_entity(imported, node, IMPORTS)
            if base is not None:
                self._bind_import(node, base)
            return None
        if self.is_test_file and not _is_callee(node):
            opened = self._test_block(node, callee, scope)
            if opened is not None:
                return opened
        self._record(callee, ctype, scope, node.start_point[0] + 1)
        return None

    def _new(self, node: ts.Node, scope: _Scope) -> None:
        constructor = node.child_by_field_name("constructor")
        if constructor is not None:
            self._record(constructor, constructor.type, scope, node.start_point[0] + 1)

    def _jsx(self, node: ts.Node, scope: _Scope) -> None:
        """``<Widget/>`` renders (calls) the component ``Widget``; lower-case tags are HTML."""
        name = node.child_by_field_name("name")
        if name is None:
            return
        if name.type == "identifier":
            text = _text(name)
            if text[:1].isupper():
                line = node.start_point[0] + 1
                self.calls.append(
                    _Call(scope.key, scope.cls, scope.locals, "name", text, "", line, _name_position(name))
                )
        elif name.type in ("member_expression", "nested_identifier"):
            self._record(name, "member_expression", scope, node.start_point[0] + 1)

    def _record(self, callee: ts.Node, ctype: str, scope: _Scope, line: int) -> None:
        if ctype == "identifier":
            at = _name_position(callee)
            self.calls.append(_Call(scope.key, scope.cls, scope.locals, "name", _text(callee), "", line, at))
        elif ctype == "member_expression":
            target = callee.child_by_field_name("object")
            member = _text(callee.child_by_field_name("property"))
            if target is None or not member:
                return
            otype, at = target.type, _name_position(callee)
            if otype == "this":
                self.calls.append(_Call(scope.key, scope.cls, scope.locals, "this", "", member, line, at))
            elif otype == "super":
                self.calls.append(_Call(scope.key, scope.cls, scope.locals, "super", "", member, line, at))
            elif otype == "identifier":
                self.calls.append(_Call(scope.key, scope.cls, scope.locals, "member", _text(target), member, line, at))

    def _bind_import(self, call: ts.Node, base: str) -> None:
        """``const x = require('m')`` / ``const {a, b: c} = await import('m')`` bind local names."""
        holder = call.parent
        if holder is not None and holder.type == "await_expression":
            holder = holder.parent
        if holder is None or holder.type != "variable_declarator":
            return
        pattern = holder.child_by_field_name("name")
        if pattern is None:
            return
        if pattern.type == "identifier":
            self.aliases[_text(pattern)] = base
        elif pattern.type == "object_pattern":
            for part in pattern.named_children:
                if part.type == "shorthand_property_identifier_pattern":
                    self.aliases[_text(part)] = f"{base}.{_text(part)}"
                elif part.type == "pair_pattern":
                    key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                    if value is not None and value.type == "identifier":
                        self.aliases[_text(value)] = f"{base}.{_text(key)}"

    def _test_block(self, node: ts.Node, callee: ts.Node, scope: _Scope) -> _Scope | None:
        """``describe('x', ...)`` / ``it('y', ...)`` in a test file: a TestCase named by its title path."""
        base = callee
        while base.type in ("member_expression", "call_expression"):
            inner = base.child_by_field_name("object") or base.child_by_field_name("function")
            if inner is None:
                break
            base = inner
        if base.type != "identifier":
            return None
        word = _text(base)
        if word not in _DESCRIBE and word not in _TEST:
            return None
        arguments = node.child_by_field_name("arguments")
        first = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
        if first is None:
            return None
        title = _string_value(first)
        if title is None:
            title = _one_line(_text(first), 120)
        path = (*scope.tests, title)
        parent = scope.key
        entity = self._add("test/" + " > ".join(path), (TEST_CASE,), title, parent, node, node, "test")
        entity.add(MODIFIERS, "describe" if word in _DESCRIBE else "test")
        return _Scope(node.end_byte, entity.key, scope.cls, True, scope.ambient, scope.locals, path)

    # ── resolution ──

    def _lexical(self, name: str, source: str) -> str | None:
        """The key a bare name denotes from ``source``: nested functions, namespaces, then the module."""
        key: str | None = source
        while key:
            entity = self.by_key.get(key)
            if entity is None:
                break
            base = self.base_key.get(key, key)
            if self.kind.get(base) in ("function", "namespace"):
                candidate = f"{base}.{name}"
                if candidate in self.kind:
                    return candidate
            key = entity.parent
        return name if name in self.kind else None

    def _name_targets(self, name: str, source: str) -> tuple[tuple[str, float], ...]:
        local = self._lexical(name, source)
        if local is not None:
            return ((f"{self.module}.{local}", BY_SCOPE),)
        if name in self.aliases:
            return ((self.aliases[name], BY_SCOPE),)
        return ()

    def _type_targets(self, dotted: str, source: str) -> tuple[tuple[str, float], ...]:
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            return ((self.aliases[head] + (f".{rest}" if rest else ""), BY_SCOPE),)
        local = self._lexical(head, source)
        if local is not None:
            return ((f"{self.module}.{local}" + (f".{rest}" if rest else ""), BY_SCOPE),)
        return ()

    def _resolve(self) -> None:
        bases: dict[str, str] = {}
        for key, predicate, name, line, at in self.heritage:
            if not name:
                continue
            targets = self._type_targets(name, self.by_key[key].parent or "")
            simple = name.rpartition(".")[2]
            if targets and predicate == INHERITS:
                bases.setdefault(key, targets[0][0])
            if targets or simple not in _COMMON:  # not `extends Error` by bare name
                simple_name = None if targets else simple
                self.references.append(Reference(key, predicate, NS, targets, simple_name, line, at))
        seen: set[tuple[str, str, tuple[tuple[str, float], ...], str | None]] = set()
        tests = {e.key for e in self.entities if TEST_CASE in e.types}
        for call in self.calls:
            targets: tuple[tuple[str, float], ...] = ()
            simple = None
            imported = False
            if call.kind == "name":
                if call.head in call.locals:
                    continue
                targets = self._name_targets(call.head, call.source)
                imported = bool(targets) and self._lexical(call.head, call.source) is None
                if not targets and len(call.head) > 2 and call.head not in _COMMON:
                    simple = call.head
            elif call.kind == "member":
                if call.head in call.locals:
                    continue
                if call.head in self.aliases:
                    targets = ((f"{self.aliases[call.head]}.{call.member}", BY_SCOPE),)
                    imported = True
                else:
                    local = self._lexical(call.head, call.source)
                    if local is not None and self.kind.get(local) in ("class", "namespace", "enum"):
                        targets = ((f"{self.module}.{local}.{call.member}", BY_SCOPE),)
            elif call.kind == "this" and call.cls is not None:
                cls_base = self.base_key.get(call.cls, call.cls)
                if f"{cls_base}.{call.member}" in self.kind:
                    targets = ((f"{self.module}.{cls_base}.{call.member}", BY_THIS),)
                elif call.cls in bases:
                    targets = ((f"{bases[call.cls]}.{call.member}", INHERITED),)
            elif call.kind == "super" and call.cls in bases:
                targets = ((f"{bases[call.cls]}.{call.member}", INHERITED),)
            if not targets and simple is None:
                continue
            marker = (call.source, CALLS, targets, simple)
            if marker in seen:
                continue
            seen.add(marker)
            self.references.append(Reference(call.source, CALLS, NS, targets, simple, call.line, call.at))
            if imported and call.source in tests:
                tested = tuple((t, TESTED) for t, _ in targets)
                self.references.append(Reference(call.source, TESTS_CALLABLE, NS, tested, None, call.line))


# Node kind -> the pass's handler for it; each returns the scope its node opens, if any.
_HANDLERS: dict[str, Callable[[_FilePass, ts.Node, _Scope], _Scope | None]] = {
    "class_declaration": _FilePass._class,
    "abstract_class_declaration": _FilePass._class,
    "class": _FilePass._class,
    "interface_declaration": _FilePass._interface,
    "type_alias_declaration": _FilePass._type_alias,
    "enum_declaration": _FilePass._enum,
    "function_declaration": _FilePass._function,
    "generator_function_declaration": _FilePass._function,
    "function_signature": _FilePass._function,
    "function_expression": _FilePass._function_value,
    "function": _FilePass._function_value,
    "arrow_function": _FilePass._function_value,
    "generator_function": _FilePass._function_value,
    "method_definition": _FilePass._method,
    "method_signature": _FilePass._method,
    "abstract_method_signature": _FilePass._method,
    "public_field_definition": _FilePass._field,
    "field_definition": _FilePass._field,
    "property_signature": _FilePass._property_signature,
    "internal_module": _FilePass._namespace,
    "module": _FilePass._namespace,
    "variable_declarator": _FilePass._variable,
    "import_statement": _FilePass._import,
    "export_statement": _FilePass._export,
    "call_expression": _FilePass._call,
    "new_expression": _FilePass._new,
    "jsx_opening_element": _FilePass._jsx,
    "jsx_self_closing_element": _FilePass._jsx,
}


def _type_name(node: ts.Node) -> str:
    """``Base``, ``ns.Base`` from ``Base<T>``, ``ns.Base<T>``, ``Mixin(Base)`` (-> '')."""
    kind = node.type
    if kind == "generic_type":
        return _type_name(node.child_by_field_name("name") or node)
    if kind in ("identifier", "type_identifier", "member_expression", "nested_type_identifier", "nested_identifier"):
        return "".join(_text(node).split())
    return ""


def _import_specifier(node: ts.Node) -> str | None:
    """What an import or re-export statement names: ``import x from 'm'``, ``import x = require('m')``."""
    source = node.child_by_field_name("source")
    if source is None:
        require = next((c for c in node.named_children if c.type == "import_require_clause"), None)
        source = require.child_by_field_name("source") if require is not None else None
    return _string_value(source) if source is not None else None


_QUALIFIED: Final = frozenset(
    {"member_expression", "nested_identifier", "nested_type_identifier", "generic_type", "call_expression"}
)


def _name_position(node: ts.Node) -> tuple[int, int]:
    """Where the last name of a reference starts (``c`` of ``a.b.c``, ``B`` of ``ns.B<T>``):
    what a language server resolves. Tree-sitter points are (row, byte column)."""
    while node.type in _QUALIFIED:
        inner = node.child_by_field_name("property") or node.child_by_field_name("name")
        if node.type == "call_expression":  # a mixin: `extends Mixin(Base)`
            inner = node.child_by_field_name("function")
        if inner is None:
            break
        node = inner
    return node.start_point.row, node.start_point.column


def _specifier_position(statement: ts.Node) -> tuple[int, int] | None:
    """Inside the module specifier string of an import, re-export or require: a language
    server resolves it to the module's file."""
    pending = [statement]
    while pending:
        node = pending.pop()
        if node.type == "string":
            return node.start_point.row, node.start_point.column + 1
        pending.extend(reversed(node.named_children))
    return None


def _is_callee(node: ts.Node) -> bool:
    """``describe.each(table)`` in ``describe.each(table)('title', fn)``: the block is the outer call."""
    parent = node.parent
    return parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == node


def _commonjs_export(left: ts.Node | None) -> str:
    """``exports.name`` / ``module.exports.name`` -> ``name``; anything else -> ''."""
    if left is None or left.type != "member_expression":
        return ""
    target = left.child_by_field_name("object")
    target_text = "".join(_text(target).split())
    if target_text in ("exports", "module.exports"):
        return _text(left.child_by_field_name("property"))
    return ""


def _import_call(node: ts.Node) -> str | None:
    """The specifier of ``require('x')`` / ``import('x')`` (optionally awaited), if literal."""
    if node.type == "await_expression":
        inner = node.named_child(0) if node.named_child_count else None
        return _import_call(inner) if inner is not None and inner.type == "call_expression" else None
    callee = node.child_by_field_name("function")
    if callee is None:
        return None
    if callee.type == "import" or (callee.type == "identifier" and callee.text == b"require"):
        arguments = node.child_by_field_name("arguments")
        if arguments is not None and arguments.named_child_count >= 1:
            return _string_value(arguments.named_child(0))
    return None


def _parameter_names(node: ts.Node) -> frozenset[str]:
    """Plain parameter names of an anonymous function (enough to tell a parameter call from a global)."""
    parameters = node.child_by_field_name("parameters")
    if parameters is None:
        single = node.child_by_field_name("parameter")
        return frozenset({_text(single)}) if single is not None else frozenset()
    names = []
    for parameter in parameters.named_children:
        if parameter.type == "identifier":
            names.append(_text(parameter))
        elif parameter.type in ("required_parameter", "optional_parameter", "assignment_pattern"):
            pattern = parameter.child_by_field_name("pattern") or parameter.child_by_field_name("left")
            if pattern is not None and pattern.type == "identifier":
                names.append(_text(pattern))
    return frozenset(names)


def _parameters(node: ts.Node) -> list[dict[str, str | None]]:
    """``{"name", "type", "default", "kind"}`` per parameter; kind: required, optional, rest, this."""
    found: list[dict[str, str | None]] = []
    for parameter in node.named_children:
        ptype = parameter.type
        kind = "required"
        annotation = default = None
        pattern: ts.Node | None = parameter
        if ptype in ("required_parameter", "optional_parameter"):
            pattern = parameter.child_by_field_name("pattern")
            annotation = _annotation(parameter.child_by_field_name("type"))
            value = parameter.child_by_field_name("value")
            default = _text(value) if value is not None else None
            if ptype == "optional_parameter" or value is not None:
                kind = "optional"
        elif ptype == "assignment_pattern":
            pattern = parameter.child_by_field_name("left")
            default = _text(parameter.child_by_field_name("right"))
            kind = "optional"
        elif ptype == "comment":
            continue
        if pattern is None:
            continue
        if pattern.type == "rest_pattern":
            kind = "rest"
            inner = pattern.named_child(0) if pattern.named_child_count else None
            name = _text(inner) if inner is not None else _text(pattern).lstrip(".")
        else:
            name = _text(pattern)
            if pattern.type == "this":
                kind = "this"
        found.append({"name": _one_line(name), "type": annotation, "default": default, "kind": kind})
    return found


# ── Rendering ─────────────────────────────────────────────────────

_DECLARATIONS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "function_expression",
        "function",
        "arrow_function",
        "generator_function",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
        "public_field_definition",
        "field_definition",
        "property_signature",
        "internal_module",
        "module",
        "enum_assignment",
        "call_expression",
        "import_statement",
        "export_statement",
        "comment",
        "variable_declarator",
        "required_parameter",
        "optional_parameter",
        "property_identifier",
    }
)
_CONTAINERS = frozenset({"class_body", "interface_body", "statement_block", "program", "enum_body", "object_type"})
_CALLABLE_NODES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "function_expression",
        "function",
        "arrow_function",
        "generator_function",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
    }
)
# Stripped below VISIBILITY_ANNOTATED, which is the level that adds them.
_VISIBILITY_TOKENS = frozenset({"accessibility_modifier", "override_modifier", "readonly", "abstract"})
# Levels rendered from the syntax tree; NEAR_COMPLETE cuts the source, the rest is the source.
_SHAPED = frozenset(detail_levels.UKO_TS[: detail_levels.UKO_TS.index("NEAR_COMPLETE")])
_LOG_OBJECTS = frozenset({"console", "logger", "log", "debug"})
_MAX_NESTING = 60


def _kind_word(node: ts.Node) -> str:
    kind = node.type
    if kind in _CLASS_KINDS:
        return "abstract class" if kind == "abstract_class_declaration" else "class"
    if kind in ("public_field_definition", "field_definition"):
        value = node.child_by_field_name("value")
        return "method" if value is not None and value.type in _FUNCTION_VALUES else "property"
    return {
        "import_statement": "import",
        "export_statement": "re-export",
        "call_expression": "test",
        "comment": "doc",
        "enum_assignment": "member",
        "property_identifier": "member",
        "interface_declaration": "interface",
        "type_alias_declaration": "type",
        "enum_declaration": "enum",
        "internal_module": "namespace",
        "module": "module",
        "method_definition": "method",
        "method_signature": "method",
        "abstract_method_signature": "method",
        "public_field_definition": "property",
        "field_definition": "property",
        "property_signature": "property",
        "variable_declarator": "variable",
    }.get(kind, "function")


@dataclass(frozen=True, slots=True)
class _Level:
    """What one level name shows; each flag switches on at its level and stays on above."""

    graph: bool
    members: bool
    hierarchy: bool
    summary: bool
    signatures: bool
    docs: bool
    visibility: bool
    outline: bool
    logic: bool

    @classmethod
    def of(cls, name: str) -> _Level:
        order = detail_levels.UKO_TS[1 : detail_levels.UKO_TS.index("NEAR_COMPLETE")]
        reached = order.index(name) if name in order else -1
        return cls(*(i <= reached for i in range(len(order))))


class _Renderer:
    def __init__(self, request: RenderRequest) -> None:
        self.request = request
        self.data = request.content
        self.tree = _treesitter.parse(_grammar_factory(request.path), request.content)
        self.is_ts = _suffix(request.path) in _TS_SUFFIXES

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", errors="replace")

    # ── locating the node ──

    def locate(self) -> tuple[ts.Node, int, int]:
        """The declaration node for the request's span, and the span's byte range."""
        root = self.tree.root_node
        span = self.request.span
        if span is None:
            return root, 0, len(self.data)
        start, end = span.start_byte, span.end_byte
        node = root.descendant_for_byte_range(start, end) or root
        while node.parent is not None and (node.start_byte > start or node.end_byte < end):
            node = node.parent
        if (node.start_byte, node.end_byte) != (start, end) or node.type in _CONTAINERS:
            # A member with decorators before it: the range runs from the first decorator.
            node = next((c for c in node.named_children if c.end_byte == end and c.type != "decorator"), node)
        return _unwrap(node), start, end

    # ── entry ──

    def render(self) -> str:
        level_name = self.request.level
        node, start, end = self.locate()
        if level_name == "NEAR_COMPLETE":
            return self.near_complete(node, start, end)
        if level_name not in _SHAPED:
            return self.text(start, end)  # FULL_SOURCE and any level past the named ones
        level = _Level.of(level_name)
        if node.type == "program":
            return "\n".join(self.module_lines(node, level))
        if level_name == "MODULE_LISTING":
            return self.name_of(node)
        if not level.signatures:
            return "\n".join(self.listing(node, level))
        return "\n".join(self.declaration(node, start, level, 0, with_doc=True)).rstrip()

    # ── listing levels ──

    def name_of(self, node: ts.Node) -> str:
        if node.type == "program":
            return module_name(self.request.path) or self.request.path
        if node.type in ("property_identifier", "identifier", "string"):  # an enum member is its name
            return _string_value(node) or _text(node)
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        if name is None and node.type in _FUNCTION_VALUES | {"class"} and node.parent is not None:
            holder = node.parent
            name = holder.child_by_field_name("name") if holder.type == "variable_declarator" else None
        if node.type == "call_expression":
            arguments = node.child_by_field_name("arguments")
            first = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
            return (_string_value(first) or _text(first)) if first is not None else _text(node)
        if node.type == "import_statement" or node.type == "export_statement":
            return _import_specifier(node) or _one_line(_text(node), 120)
        if node.type == "comment":
            return jsdoc(_text(node)).split("\n", 1)[0]
        if name is None:
            return "default" if node.parent is not None and node.parent.type == "export_statement" else node.type
        return _string_value(name) or _text(name)

    def dependencies(self, node: ts.Node) -> list[str]:
        """What a declaration leans on: heritage clauses, then names it calls or instantiates."""
        lines: list[str] = []
        for child in node.named_children:
            if child.type == "class_heritage" or child.type == "extends_type_clause":
                lines.append(_one_line(_text(child)))
        called: dict[str, None] = {}
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("call_expression", "new_expression"):
                callee = current.child_by_field_name("function") or current.child_by_field_name("constructor")
                if callee is not None and callee.type in ("identifier", "member_expression"):
                    called[_one_line(_text(callee), 80)] = None
            stack.extend(reversed(current.named_children))
        if called:
            lines.append("calls " + ", ".join(called))
        return lines

    def summary(self, node: ts.Node) -> str:
        anchor = _outer_of(node)
        comment = _doc_comment(anchor)
        if comment is None and anchor.prev_named_sibling is not None and anchor.prev_named_sibling.type == "decorator":
            first = anchor
            while first.prev_named_sibling is not None and first.prev_named_sibling.type == "decorator":
                first = first.prev_named_sibling
            comment = _doc_comment(first)
        return jsdoc(_text(comment)).split("\n", 1)[0] if comment is not None else ""

    def heading(self, node: ts.Node, level: _Level) -> str:
        line = f"{_kind_word(node)} {self.name_of(node)}"
        if level.hierarchy:
            heritage = [
                _one_line(_text(c)) for c in node.named_children if c.type in ("class_heritage", "extends_type_clause")
            ]
            if heritage:
                line += " " + " ".join(heritage)
        if level.summary:
            summary = self.summary(node)
            if summary:
                line += f"  // {summary}"
        return line

    def listing(self, node: ts.Node, level: _Level) -> list[str]:
        """MODULE_GRAPH: the name and what it depends on; from MEMBER_LISTING: its members' headings."""
        if not level.members:
            return [self.name_of(node), *(f"  {d}" for d in self.dependencies(node))]
        return [self.heading(node, level), *(f"  {self.heading(m, level)}" for m in self.members(node))]

    def members(self, node: ts.Node) -> list[ts.Node]:
        """Declarations directly inside a class, interface, namespace, enum or module."""
        body = node if node.type == "program" else node.child_by_field_name("body")
        found: list[ts.Node] = []
        if body is None:
            return found
        if node.type == "enum_declaration":
            return [c for c in body.named_children if c.type in ("enum_assignment", "property_identifier")]
        if node.type in _CALLABLE_NODES:  # a body's members are its nested functions and classes, not locals
            return [c for c in body.named_children if c.type in _CLASS_KINDS or c.type in _CALLABLE_NODES]
        for child in body.named_children:
            child = _unwrap(child)
            if child.type in _DECLARATIONS and child.type not in ("comment", "call_expression", "export_statement"):
                if child.type not in ("import_statement", "required_parameter", "optional_parameter"):
                    found.append(child)
            elif child.type in ("lexical_declaration", "variable_declaration"):
                for declarator in child.named_children:
                    value = declarator.child_by_field_name("value")
                    if declarator.type == "variable_declarator" and (value is None or _import_call(value) is None):
                        found.append(_unwrap(declarator))
        return found

    # ── module ──

    def module_lines(self, root: ts.Node, level: _Level) -> list[str]:
        lines = [module_name(self.request.path) or self.request.path]
        if level.graph:
            for child in root.named_children:
                if child.type == "import_statement" or (
                    child.type == "export_statement" and child.child_by_field_name("source") is not None
                ):
                    lines.append(f"  imports {self.name_of(child)}")
                elif child.type in ("lexical_declaration", "variable_declaration"):
                    for declarator in child.named_children:
                        value = declarator.child_by_field_name("value")
                        specifier = _import_call(value) if value is not None else None
                        if specifier is not None:
                            lines.append(f"  imports {specifier}")
        if not level.members:
            return lines
        if not level.signatures:
            lines += [f"  {self.heading(m, level)}" for m in self.members(root)]
            return lines
        lines.append("")
        lines += self.block(root.named_children, level, 0)
        return lines

    # ── signature levels ──

    def header(
        self, node: ts.Node, start: int, end: int, level: _Level, pad: str, parameters: ts.Node | None = None
    ) -> list[str]:
        """Source lines from ``start`` to ``end`` as written, re-indented under ``pad``. Below
        VISIBILITY_ANNOTATED the visibility/abstract/readonly markers are cut; at it, a TypeScript
        class member without one is marked ``public``."""
        edits: list[tuple[int, int, str]] = []
        if level.visibility:
            member = node.parent is not None and node.parent.type == "class_body"
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            private = name is not None and name.type == "private_property_identifier"
            if (
                self.is_ts
                and member
                and not private
                and not any(c.type == "accessibility_modifier" for c in node.children)
            ):
                offset = self.first_token(node, start)
                edits.append((offset, offset, "public "))
        else:
            holders = [node]
            parameters = parameters or node.child_by_field_name("parameters")
            if parameters is not None:
                holders += parameters.named_children
            for holder in holders:
                for child in holder.children:
                    if child.type in _VISIBILITY_TOKENS and start <= child.start_byte and child.end_byte <= end:
                        cut_end = child.end_byte
                        while cut_end < end and self.data[cut_end : cut_end + 1] in (b" ", b"\t"):
                            cut_end += 1
                        edits.append((child.start_byte, cut_end, ""))
        pieces: list[str] = []
        position = start
        for edit_start, edit_end, insert in sorted(edits):
            pieces += [self.text(position, edit_start), insert]
            position = edit_end
        pieces.append(self.text(position, end))
        return self.reindent("".join(pieces).rstrip(), start, pad)

    def reindent(self, text: str, start: int, pad: str) -> list[str]:
        """Lines of ``text`` (which begins at byte ``start``) moved from their source column to ``pad``."""
        column = start - (self.data.rfind(b"\n", 0, start) + 1)
        lines = text.split("\n")
        shifted = [pad + lines[0].strip()]
        for line in lines[1:]:
            indent = len(line) - len(line.lstrip(" \t"))
            shifted.append((pad + line[min(indent, column) :]).rstrip())
        return shifted

    def first_token(self, node: ts.Node, start: int) -> int:
        """Where a member's own tokens begin (after its decorators)."""
        for child in node.children:
            if child.type not in ("decorator", "comment"):
                return max(child.start_byte, start)
        return start

    def doc_lines(self, anchor: ts.Node, pad: str) -> list[str]:
        comment = _doc_comment(anchor)
        return self.reindent(_text(comment), comment.start_byte, pad) if comment is not None else []

    def declaration(self, node: ts.Node, start: int, level: _Level, indent: int, with_doc: bool) -> list[str]:
        """One declaration at a signature level (or deeper): its header, then members or a body as the level shows."""
        pad = "  " * indent
        lines = self.doc_lines(_outer_of(node), pad) if with_doc and level.docs else []
        kind = node.type
        body = node.child_by_field_name("body")
        if kind in _CLASS_KINDS or kind in ("interface_declaration", "internal_module", "module"):
            if body is None:
                return lines + self.header(node, start, node.end_byte, level, pad)
            head = self.header(node, start, body.start_byte, level, pad)
            head[-1] += " {"
            if kind in ("internal_module", "module"):
                inner = self.block(body.named_children, level, indent + 1)
            else:
                inner = self.class_members(body, level, indent + 1)
            return [*lines, *head, *inner, pad + "}"]
        holder = node
        if kind in ("public_field_definition", "field_definition", "variable_declarator"):
            value = node.child_by_field_name("value")
            if value is None:
                return lines + self.header(node, start, node.end_byte, level, pad)
            if value.type not in _FUNCTION_VALUES:
                head = self.header(node, start, value.start_byte, level, pad)
                head[-1] += " " + (_one_line(_text(value), 160) if level.logic else "…")
                return lines + head
            node, kind, body = value, value.type, value.child_by_field_name("body")
        if kind in _CALLABLE_NODES:
            parameters = node.child_by_field_name("parameters")
            if body is None:
                return lines + self.header(holder, start, node.end_byte, level, pad, parameters)
            head = self.header(holder, start, body.start_byte, level, pad, parameters)
            if body.type != "statement_block":  # an arrow's expression body
                head[-1] += " " + (_one_line(_text(body), 160) if level.logic else "…")
                return lines + head
            if not level.outline:
                head[-1] += " { … }"
                return lines + head
            head[-1] += " {"
            return [*lines, *head, *self.block(body.named_children, level, indent + 1), pad + "}"]
        if kind == "call_expression" and level.outline:
            return lines + self.callback_outline(node, level, indent)
        return lines + self.reindent(self.text(start, node.end_byte), start, pad)

    def class_members(self, body: ts.Node, level: _Level, indent: int) -> list[str]:
        """Members of a class or interface body, each with its decorators (and docs when the level shows them)."""
        lines: list[str] = []
        pad = "  " * indent
        decorators: list[ts.Node] = []
        for child in body.named_children:
            kind = child.type
            if kind == "comment":
                continue
            if kind == "decorator":
                decorators.append(child)
                continue
            if level.docs:
                lines += self.doc_lines(decorators[0] if decorators else child, pad)
            lines += [pad + _one_line(_text(d)) for d in decorators]
            decorators = []
            if kind in _DECLARATIONS:
                lines += self.declaration(child, child.start_byte, level, indent, with_doc=False)
            elif kind == "class_static_block":
                inner = child.child_by_field_name("body")
                if level.outline and inner is not None:
                    lines += [pad + "static {", *self.block(inner.named_children, level, indent + 1), pad + "}"]
                else:
                    lines.append(pad + "static { … }")
            else:
                lines += self.reindent(_text(child), child.start_byte, pad)
        return lines

    # ── bodies ──

    def block(self, statements: list[ts.Node], level: _Level, indent: int) -> list[str]:
        """Statements as the level shows them: declarations always, control flow from STRUCTURAL_OUTLINE,
        key statements from KEY_LOGIC."""
        pad = "  " * indent
        if indent > _MAX_NESTING:
            return [pad + "…"]
        lines: list[str] = []
        for statement in statements:
            kind = statement.type
            if kind == "comment" or kind == "import_statement":
                continue
            declared = statement.child_by_field_name("declaration") if kind == "export_statement" else statement
            if declared is not None and declared.type in ("lexical_declaration", "variable_declaration"):
                if level.docs:
                    lines += self.doc_lines(statement, pad)
                lines += self.variables(declared, level, indent, statement.start_byte)
                continue
            inner = _unwrap(statement)
            ikind = inner.type
            if ikind in _DECLARATIONS and ikind not in ("comment", "call_expression", "export_statement"):
                lines += self.declaration(inner, statement.start_byte, level, indent, with_doc=True)
            elif kind == "export_statement":
                if statement.child_by_field_name("source") is None and level.logic:
                    lines.append(pad + _one_line(_text(statement), 160))
            elif kind == "ambient_declaration":
                body = next((c for c in statement.named_children if c.type == "statement_block"), None)
                if body is not None:
                    lines.append(pad + "declare global {")
                    lines += self.block(body.named_children, level, indent + 1)
                    lines.append(pad + "}")
                else:
                    lines += self.block(statement.named_children, level, indent)
            elif level.outline:
                lines += self.control(statement, level, indent)
        if not lines and level.outline and any(s.type != "comment" for s in statements):
            lines.append(pad + "…")  # statements the level leaves out
        return lines

    def variables(self, statement: ts.Node, level: _Level, indent: int, start: int) -> list[str]:
        """A ``const``/``let``/``var`` statement from ``start`` (its ``export``): a module's names (with
        types) from SIGNATURES, a body's locals only where they hold callbacks (STRUCTURAL_OUTLINE) or in
        full (KEY_LOGIC). Imports (``require``) are left to the import lines."""
        pad = "  " * indent
        keyword = _text(statement.child(0)) if statement.child(0) is not None else "const"
        declarators = [c for c in statement.named_children if c.type == "variable_declarator"]
        lines: list[str] = []
        local = _inside_callable(statement)
        for declarator in declarators:
            # One declarator is shown from the statement's start (export, keyword); several one by one.
            head_start = start if len(declarators) == 1 else declarator.start_byte
            prefix = "" if len(declarators) == 1 else _one_line(self.text(start, declarators[0].start_byte)) + " "
            value = declarator.child_by_field_name("value")
            if value is not None and (value.type in _FUNCTION_VALUES or value.type == "class"):
                lines += self.declaration(value, head_start, level, indent, with_doc=False)
            elif level.logic:
                lines.append(pad + prefix + _one_line(self.text(head_start, declarator.end_byte), 160))
            elif local or (value is not None and _import_call(value) is not None):
                if level.outline and value is not None and self.has_callback(value):
                    name = _text(declarator.child_by_field_name("name"))
                    lines += self.callback_outline(value, level, indent, f"{keyword} {name} = ")
            else:
                end = value.start_byte if value is not None else declarator.end_byte
                head = _one_line(self.text(head_start, end)).rstrip("= ")
                lines.append(pad + prefix + head + (" = …" if value is not None else ""))
        return lines

    def has_callback(self, node: ts.Node) -> bool:
        return bool(self.callbacks(node))

    def callbacks(self, node: ts.Node) -> list[ts.Node]:
        """Function arguments of a call (``it('x', () => {...})``), unwrapping ``await``."""
        while node.type in ("await_expression", "parenthesized_expression") and node.named_child_count:
            node = node.named_child(0)
        if node.type != "call_expression":
            return []
        arguments = node.child_by_field_name("arguments")
        return [
            a
            for a in (arguments.named_children if arguments is not None else [])
            if a.type in _FUNCTION_VALUES
            and (b := a.child_by_field_name("body")) is not None
            and b.type == "statement_block"
        ]

    def callback_outline(self, node: ts.Node, level: _Level, indent: int, prefix: str = "") -> list[str]:
        pad = "  " * indent
        call = node
        while call.type in ("await_expression", "parenthesized_expression") and call.named_child_count:
            call = call.named_child(0)
        callee = call.child_by_field_name("function")
        name = _one_line(_text(callee), 80) if callee is not None else "…"
        if call.type == "call_expression" and level.logic:
            arguments = call.child_by_field_name("arguments")
            first = arguments.named_child(0) if arguments is not None and arguments.named_child_count else None
            if first is not None and first.type not in _FUNCTION_VALUES:
                name += f"({_one_line(_text(first), 80)}, …"
            else:
                name += "(…"
        else:
            name += "(…"
        lines: list[str] = []
        for function in self.callbacks(node):
            body = function.child_by_field_name("body")
            lines.append(f"{pad}{prefix}{name} => {{")
            lines += self.block(body.named_children if body is not None else [], level, indent + 1)
            lines.append(pad + "})")
            prefix, name = "", "…"
        return lines

    def condition(self, node: ts.Node, field: str, level: _Level) -> str:
        part = node.child_by_field_name(field)
        if part is None:
            return ""
        return _one_line(_text(part), 160) if level.logic else "(…)"

    def control(self, statement: ts.Node, level: _Level, indent: int) -> list[str]:
        """One statement of a body at STRUCTURAL_OUTLINE / KEY_LOGIC."""
        pad = "  " * indent
        kind = statement.type
        nested = indent + 1

        def body_of(node: ts.Node | None) -> list[str]:
            if node is None:
                return []
            if node.type == "statement_block":
                return self.block(node.named_children, level, nested)
            return self.block([node], level, nested)

        if kind == "if_statement":
            lines = [f"{pad}if {self.condition(statement, 'condition', level)} {{"]
            lines += body_of(statement.child_by_field_name("consequence"))
            alternative = statement.child_by_field_name("alternative")
            while alternative is not None:
                inner = alternative.named_child(0) if alternative.named_child_count else None
                if inner is not None and inner.type == "if_statement":
                    lines.append(f"{pad}}} else if {self.condition(inner, 'condition', level)} {{")
                    lines += body_of(inner.child_by_field_name("consequence"))
                    alternative = inner.child_by_field_name("alternative")
                else:
                    lines.append(f"{pad}}} else {{")
                    lines += body_of(inner)
                    alternative = None
            return [*lines, pad + "}"]
        if kind in ("for_statement", "for_in_statement"):
            body = statement.child_by_field_name("body")
            head = self.text(statement.start_byte, body.start_byte) if body is not None else _text(statement)
            shown = _one_line(head.strip()[3:].strip(), 160) if level.logic else "(…)"
            return [f"{pad}for {shown} {{", *body_of(body), pad + "}"]
        if kind == "while_statement":
            shown = self.condition(statement, "condition", level)
            return [f"{pad}while {shown} {{", *body_of(statement.child_by_field_name("body")), pad + "}"]
        if kind == "do_statement":
            shown = self.condition(statement, "condition", level)
            return [f"{pad}do {{", *body_of(statement.child_by_field_name("body")), f"{pad}}} while {shown}"]
        if kind == "switch_statement":
            lines = [f"{pad}switch {self.condition(statement, 'value', level)} {{"]
            body = statement.child_by_field_name("body")
            for case in body.named_children if body is not None else ():
                if case.type == "switch_case":
                    value = case.child_by_field_name("value")
                    shown = _one_line(_text(value), 80) if level.logic and value is not None else "…"
                    lines.append(f"{pad}  case {shown}:")
                elif case.type == "switch_default":
                    lines.append(f"{pad}  default:")
                else:
                    continue
                statements = [c for c in case.named_children if c != case.child_by_field_name("value")]
                lines += self.block(statements, level, nested + 1)
            return [*lines, pad + "}"]
        if kind == "try_statement":
            lines = [f"{pad}try {{", *body_of(statement.child_by_field_name("body"))]
            handler = statement.child_by_field_name("handler")
            if handler is not None:
                parameter = handler.child_by_field_name("parameter")
                caught = f" ({_text(parameter)})" if parameter is not None else ""
                lines += [f"{pad}}} catch{caught} {{", *body_of(handler.child_by_field_name("body"))]
            finalizer = statement.child_by_field_name("finalizer")
            if finalizer is not None:
                lines += [f"{pad}}} finally {{", *body_of(finalizer.child_by_field_name("body"))]
            return [*lines, pad + "}"]
        if kind == "statement_block":
            return [f"{pad}{{", *self.block(statement.named_children, level, nested), pad + "}"]
        if kind == "labeled_statement":
            inner = statement.child_by_field_name("body")
            label = _text(statement.child_by_field_name("label"))
            return [f"{pad}{label}:", *(self.control(inner, level, indent) if inner is not None else [])]
        if kind in ("return_statement", "throw_statement"):
            word = "return" if kind == "return_statement" else "throw"
            if level.logic:
                return [pad + _one_line(_text(statement), 160)]
            value = statement.named_child(0) if statement.named_child_count else None
            lines = [pad + word + (" …" if value is not None else "")]
            if value is not None and self.has_callback(value):
                lines = self.callback_outline(value, level, indent, f"{word} ")
            return lines
        if kind in ("break_statement", "continue_statement"):
            return [pad + _one_line(_text(statement))]
        if kind == "expression_statement":
            expression = statement.named_child(0) if statement.named_child_count else None
            if expression is None:
                return []
            if self.has_callback(expression):
                return self.callback_outline(expression, level, indent)
            if level.logic and self.is_key(expression):
                return [pad + _one_line(_text(statement), 160)]
        return []

    def is_key(self, expression: ts.Node) -> bool:
        """Assignments and assertions: what KEY_LOGIC keeps of plain expression statements."""
        if expression.type in ("assignment_expression", "augmented_assignment_expression", "update_expression"):
            return True
        if expression.type == "await_expression" and expression.named_child_count:
            expression = expression.named_child(0)
        if expression.type == "call_expression":
            callee = _text(expression.child_by_field_name("function"))
            return callee.startswith(("assert", "expect", "console.assert"))
        return False

    # ── NEAR_COMPLETE ──

    def near_complete(self, node: ts.Node, start: int, end: int) -> str:
        """The exact source without comments, imports, directives and logging statements."""
        cuts: list[tuple[int, int]] = []
        stack = [self.tree.root_node]
        while stack:
            current = stack.pop()
            if current.end_byte <= start or current.start_byte >= end:
                continue
            kind = current.type
            boilerplate = (
                kind in ("comment", "import_statement") or self.is_logging(current) or self.is_directive(current)
            )
            # Only what lies within the node is boilerplate: an import or doc node renders itself.
            inside = start <= current.start_byte and current.end_byte <= end
            inside = inside and (current.start_byte, current.end_byte) != (start, end)
            if boilerplate and inside:
                cuts.append(self.whole_lines(current.start_byte, current.end_byte, start, end))
                continue
            stack.extend(current.children)
        pieces: list[str] = []
        position = start
        for cut_start, cut_end in sorted(cuts):
            if cut_start < position:
                continue
            pieces.append(self.text(position, cut_start))
            position = cut_end
        pieces.append(self.text(position, end))
        text = "\n".join(line.rstrip() for line in "".join(pieces).split("\n"))
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")

    def whole_lines(self, cut_start: int, cut_end: int, start: int, end: int) -> tuple[int, int]:
        """Widen a cut to its whole line(s) when nothing else is on them."""
        line_start = self.data.rfind(b"\n", 0, cut_start) + 1
        line_end = self.data.find(b"\n", cut_end)
        line_end = len(self.data) if line_end < 0 else line_end
        if self.data[line_start:cut_start].strip() or self.data[cut_end:line_end].strip():
            return cut_start, cut_end
        return max(line_start, start), min(line_end + 1, end)

    def is_logging(self, node: ts.Node) -> bool:
        if node.type != "expression_statement" or not node.named_child_count:
            return False
        call = node.named_child(0)
        if call.type != "call_expression":
            return False
        callee = call.child_by_field_name("function")
        if callee is None:
            return False
        if callee.type == "member_expression":
            target = callee.child_by_field_name("object")
            return target is not None and target.type == "identifier" and _text(target) in _LOG_OBJECTS
        return callee.type == "identifier" and _text(callee) in ("debug", "log")

    def is_directive(self, node: ts.Node) -> bool:
        if node.type != "expression_statement" or node.named_child_count != 1:
            return False
        only = node.named_child(0)
        return only.type == "string" and _text(only)[1:-1] in ("use strict", "use client", "use server")


def _unwrap(node: ts.Node) -> ts.Node:
    """The declaration inside its wrappers: export, declare, single-name const, CommonJS export."""
    for _ in range(8):
        kind = node.type
        if kind == "export_statement":
            inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
            if inner is None or (inner.type not in _DECLARATIONS and inner.type not in ("lexical_declaration",)):
                return node
            node = inner
        elif kind == "ambient_declaration":
            inner = next((c for c in node.named_children if c.type != "comment"), None)
            if inner is None or inner.type == "statement_block":
                return node
            node = inner
        elif kind in ("lexical_declaration", "variable_declaration"):
            declarators = [c for c in node.named_children if c.type == "variable_declarator"]
            if len(declarators) != 1:
                return node
            node = declarators[0]
        elif kind == "variable_declarator":
            value = node.child_by_field_name("value")
            if value is None or (value.type not in _FUNCTION_VALUES and value.type != "class"):
                return node
            node = value
        elif kind == "expression_statement":
            inner = node.named_child(0) if node.named_child_count else None
            if inner is None or inner.type not in ("assignment_expression", "call_expression", "internal_module"):
                return node
            node = inner
        elif kind == "assignment_expression":
            right = node.child_by_field_name("right")
            if right is None or right.type not in _FUNCTION_VALUES:
                return node
            node = right
        else:
            return node
    return node


def _inside_callable(node: ts.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in _CALLABLE_NODES:
            return True
        parent = parent.parent
    return False


def _outer_of(node: ts.Node) -> ts.Node:
    """The statement a declaration's doc comment sits above."""
    current = node
    for _ in range(6):
        parent = current.parent
        if parent is None or parent.type not in (
            "export_statement",
            "ambient_declaration",
            "lexical_declaration",
            "variable_declaration",
            "variable_declarator",
            "assignment_expression",
            "expression_statement",
        ):
            break
        if parent.type in ("lexical_declaration", "variable_declaration") and parent.named_child_count != 1:
            break
        current = parent
    return current


# ── The plugin ────────────────────────────────────────────────────


class TypeScriptAnalyzer:
    name = "typescript"
    version = "2"

    def handles(self, path: str) -> bool:
        return bool(_suffix(path))

    def file_types(self, path: str) -> tuple[str, ...]:
        return (MODULE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        factory = _grammar_factory(source.path)
        try:
            return _FilePass(source, factory).run()
        except Exception as error:  # only the parse itself: definitions and phases are isolated inside
            module = module_name(source.path) or source.path
            node = Entity("", (MODULE,), _file_name(source.path), None, None, symbols=((NS, module),))
            return file_failure(node, error)

    def render(self, request: RenderRequest) -> str:
        return _Renderer(request).render()


ANALYZERS = [TypeScriptAnalyzer()]
