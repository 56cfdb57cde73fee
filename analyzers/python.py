"""Python analyzer: modules, classes, functions, attributes, imports, calls and tests.

Speed is the design constraint (Django's ~2,800 files in a few seconds per core): one
tree-sitter query collects every node of interest (definitions, imports, call targets,
assignments) in C, so Python touches only those captures, never the whole tree. Scopes
come from the definitions' byte ranges (nested definitions nest their ranges), found by
bisection rather than by walking parents.

Names resolve through what the file itself knows, scope by scope as Python does:
each function or class body has its own definitions, imports and local bindings, then
the module's. A name bound locally (assigned, a loop or ``with`` target, a local import)
shadows the outer one, so ``f()`` inside ``def f`` is recursion only when nothing local
rebinds ``f``. A receiver is typed where the file says so plainly (``x = C(...)``,
``x: C`` on a parameter or assignment, ``self.x = C(...)``): a call on an object whose
type is imported from outside the package goes to an ``uko-code:ExternalSymbol``
(``argparse.ArgumentParser.parse_args``), never to a same-named method inside. A call on
a receiver the file cannot type gets no qualified target; its bare name goes to the
linker's last-resort match only when it is distinctive (not a builtin, not a method of
a builtin type, not one of a few names every library defines), so a guess on ``x.get()``
never becomes an edge.

Keys: nested definitions are keyed by their dotted path without ``<locals>``
(``outer.inner``, ``Class.method.Helper``). A redefinition of a key (property setters,
``@overload``, conditional definitions) gets ``~2``, ``~3`` and no symbol, so that the
first definition owns the name and linking stays unambiguous.

Rendering re-parses the file and walks the requested definition; every level of the
uko-py effective map is rendered. WITH_TESTS returns the full source like FULL_SOURCE:
the associated tests live in other files and are appended by whoever follows the
``uko-code:testsCallable`` edges, which an analyzer cannot see.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import concurrent.futures
import hashlib
import inspect
import io
import logging
import pathlib
import re
import textwrap
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache, lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from operator import attrgetter
from pathlib import PurePosixPath

import tree_sitter as ts
import tree_sitter_python

from cleveragents.analyzers import _treesitter as tsh
from cleveragents.analyzers._isolation import Isolation, file_failure
from cleveragents.indexing.link import PRIVATE_SYMBOL
from cleveragents.indexing.model import Entity, FileAnalysis, Reference, RenderRequest, SourceFile, Value
from cleveragents.vocabulary import detail_levels, uko, uko_code, uko_oo, uko_py

# -- vocabulary ---------------------------------------------------------------------------

MODULE = uko_py.Module
STUB_MODULE = uko_py.StubModule
CLASS = uko_py.Class
PROTOCOL = uko_py.Protocol
FUNCTION = uko_py.Function
METHOD = uko_py.Method
TEST_FUNCTION = uko_py.TestFunction
CONSTRUCTOR = uko_oo.Constructor
ATTRIBUTE = uko_oo.Attribute
VARIABLE = uko_code.Variable
IMPORT = uko_code.Import
EXTERNAL_SYMBOL = uko_code.ExternalSymbol
DOCSTRING = uko_code.Docstring

QUALIFIED_NAME = uko_code.qualifiedName
LANGUAGE = uko_code.language
SIGNATURE = uko_code.signature
PARAMETERS = uko_code.hasParameters
RETURN_TYPE = uko_code.hasReturnType
DECORATOR = uko_code.hasDecorator
MODIFIERS = uko_code.modifiers
VISIBILITY = uko_code.visibility
DOC = uko_code.docstring
IMPORTED_NAME = uko_code.importedName
EXPORTS_NAME = uko_py.exportsName

DEPENDS_ON = uko.dependsOn
CALLS = uko_code.calls
IMPORTS = uko_code.imports
TESTS_CALLABLE = uko_code.testsCallable
INHERITS_FROM = uko_oo.inheritsFrom
IMPLEMENTS = uko_oo.implements
HAS_METHOD = uko_oo.hasMethod
HAS_ATTRIBUTE = uko_oo.hasAttribute

NAMESPACE = "py"
# Confidences are measured, not chosen: each mechanism's precision against basedpyright on
# the development packages of benchmarks/bench_calibration.py, rounded to the nearest 0.05
# and capped at 0.95 (a name match is never a language server's certainty); held-out
# packages check them (benchmarks/RESULTS.md, "Calibration"). All three measured 0.997-1.0.
SCOPE_CONFIDENCE = 0.95  # the enclosing scope or an explicit import
RECEIVER_CONFIDENCE = 0.95  # self./cls. on the enclosing class, or a receiver of a class the file names
INHERITED_CONFIDENCE = 0.95  # a base class's member, super(), a star import
# Not measurable against a language server (it has no answer for them): the contract's guidance.
NAMING_CONFIDENCE = 0.7  # a test's subject by its name; a builtin base a star import may shadow
DOC_VALUE_LIMIT = 500

# The uko-py effective DetailLevelMap, in depth order.
LEVELS = detail_levels.UKO_PY
(
    _GRAPH,
    _LISTING,
    _HIERARCHY,
    _SUMMARY,
    _SIGNATURES,
    _DOCS,
    _DECORATED,
    _VISIBILITY,
    _OUTLINE,
    _KEY_LOGIC,
    _TYPE_STUBS,
    _NEAR_COMPLETE,
    _FULL,
) = range(1, 14)

# -- names --------------------------------------------------------------------------------

_DOTTED = re.compile(r"[^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*")
_DOCSTRING = re.compile(r"[rRuU]?(\"\"\"|'''|\"|')(.*)\1", re.S)
_STRING = re.compile(r"[rRuUbB]*(\"\"\"|'''|\"|')(.*)\1", re.S)
_DEFINITION = re.compile(r"(?:async\s+)?(?:def|class)\s+\w+")
_WHITESPACE = re.compile(r"\s+")
_BUILTINS = frozenset(dir(builtins))
# Too common to mean anything as a bare name: builtins, methods of builtin types and a
# few names every library defines. Such a name gets no bare-name fallback.
_COMMON = (
    _BUILTINS
    | frozenset(
        name
        for kind in (
            object,
            dict,
            list,
            str,
            bytes,
            bytearray,
            memoryview,
            set,
            frozenset,
            tuple,
            int,
            float,
            complex,
            type,
            BaseException,
            type(hashlib.sha256()),
        )
        for name in dir(kind)
    )
    # Methods of the standard library's everyday objects (futures, tasks, events, queues,
    # threads, loggers, files, paths): on a receiver the file cannot type, such a name is
    # far more often the library's method than a same-named one inside (measured against
    # basedpyright: benchmarks/RESULTS.md, "Calibration").
    | frozenset(
        name
        for kind in (
            asyncio.Future,
            asyncio.Task,
            asyncio.Event,
            asyncio.Queue,
            asyncio.Lock,
            asyncio.Condition,
            concurrent.futures.Future,
            threading.Event,
            threading.Thread,
            logging.Logger,
            io.IOBase,
            pathlib.PurePath,
            pathlib.Path,
        )
        for name in dir(kind)
    )
    | frozenset(
        re.findall(
            r"\w+",
            "add all any call clear close commit connect copy count create debug delete dump dumps emit error "
            "exception execute exists fetch filter find first flush get info init items join keys last load loads log "
            "main match open parse pop process put read remove render reset run save search send set setup sort split "
            "start stop strip sub update validate values warn warning write",
        )
    )
)
_PROPERTY_DECORATORS = frozenset({"property", "cached_property", "setter", "getter", "deleter", "abstractproperty"})
_ABSTRACT_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "abstractclassmethod", "abstractstaticmethod"})
_PROTOCOL_BASES = frozenset({"Protocol", "typing.Protocol", "typing_extensions.Protocol"})
_ABSTRACT_BASES = frozenset({"ABC", "abc.ABC", "ABCMeta", "abc.ABCMeta"})
_LOGGERS = frozenset({"logger", "log", "logging", "LOGGER", "LOG", "_logger", "_log", "self.logger", "self.log"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_TYPING_MODULES = ("typing", "typing_extensions", "collections.abc")


def module_name(path: str) -> str:
    """Dotted module name of a file: ``src/pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py`` -> ``pkg``."""
    parts = path.split("/")
    if len(parts) > 1 and parts[0] == "src":
        parts = parts[1:]
    stem = parts[-1].rsplit(".", 1)[0]
    parts = [*parts[:-1], stem] if stem != "__init__" else parts[:-1]
    return ".".join(p for p in parts if p)


def absolute_module(module: str, is_package: bool, level: int, name: str) -> str:
    """The absolute name of a relative import (``level`` leading dots) made in ``module``."""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: max(len(parts) - (level - 1), 0)]
    if name:
        parts.append(name)
    return ".".join(parts)


def visibility(name: str) -> str:
    if name.startswith("__") and not name.endswith("__"):
        return "private"
    if name.startswith("_") and not name.startswith("__"):
        return "protected"
    return "public"


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return (
        stem.startswith("test_")
        or stem.endswith("_test")
        or stem == "tests"
        or any(p in ("tests", "test") for p in parts[:-1])
    )


def _join(base: str, name: str) -> str:
    return f"{base}.{name}" if base else name


def _one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _name_position(node: ts.Node | None) -> tuple[int, int] | None:
    """Where the last name of ``a.b.c`` (or of a plain name) starts: what a language
    server resolves. Tree-sitter points are (row, byte column)."""
    while node is not None and node.type == "attribute":
        node = node.child_by_field_name("attribute")
    if node is None:
        return None
    if node.type == "dotted_name" and node.named_child_count:
        node = node.named_children[-1]
    return node.start_point.row, node.start_point.column


def _dotted(text: str) -> str | None:
    """``a.b.c`` (whitespace between the parts dropped), or None for any other expression."""
    if not _DOTTED.fullmatch(text):
        return None
    return text if " " not in text and "\n" not in text else "".join(text.split())


def _json_string(text: str | None) -> str:
    return "null" if text is None else encode_basestring(text)


def _parameter_json(parameter: dict[str, str | None]) -> str:
    """One parameter as JSON, written directly: ``json.dumps`` costs more than the rest of a def."""
    return (
        f'{{"name": {_json_string(parameter["name"])}, "type": {_json_string(parameter["type"])}, '
        f'"default": {_json_string(parameter["default"])}, "kind": "{parameter["kind"]}"}}'
    )


def _modifiers(decorators: list[str], is_async: bool) -> list[str]:
    """``uko-code:modifiers`` of a def from its decorators: static, classmethod, property, abstract."""
    found = ["async"] if is_async else []
    for decorator in decorators:
        last = decorator.split("(", 1)[0].rsplit(".", 1)[-1]
        modifier = {"staticmethod": "static", "classmethod": "classmethod"}.get(last)
        if modifier is None and last in _PROPERTY_DECORATORS:
            modifier = "property"
        if last in _ABSTRACT_DECORATORS and "abstract" not in found:
            found.append("abstract")
        if modifier is not None and modifier not in found:
            found.append(modifier)
    return found


# -- tree-sitter --------------------------------------------------------------------------

_QUERY_TEXT = """
[(function_definition) (class_definition)] @def
[(import_statement) (import_from_statement)] @import
(call function: [(identifier) (attribute)] @callee)
(module (expression_statement (assignment left: (identifier)) @var))
(class_definition body: (block (expression_statement (assignment left: (identifier)) @field)))
(assignment left: (attribute object: (identifier) attribute: (identifier)) @member)
(assignment left: (identifier) @bound)
(augmented_assignment left: (identifier) @bound)
(pattern_list (identifier) @bound)
(tuple_pattern (identifier) @bound)
(list_pattern (identifier) @bound)
(for_statement left: (identifier) @bound)
(as_pattern_target (identifier) @bound)
(as_pattern_target (tuple (identifier) @bound))
(named_expression name: (identifier) @bound)
[(global_statement) (nonlocal_statement)] @declared
"""
# Node kinds compared by id (an int compare) where the analyzer looks at many nodes.
_KIND_NAMES = (
    "class_definition decorated_definition identifier import_statement aliased_import relative_import "
    "wildcard_import string expression_statement comment keyword_argument subscript assignment call attribute"
)


@dataclass(frozen=True)
class _Grammar:
    query: ts.Query
    kinds: dict[str, int]


@cache
def _grammar() -> _Grammar:
    language = ts.Language(tree_sitter_python.language())
    kinds: dict[str, int] = {}
    for name in _KIND_NAMES.split():
        kind = language.id_for_node_kind(name, True)
        if kind is None:  # a grammar upgrade renamed a node kind the analyzer relies on
            raise LookupError(f"tree-sitter-python has no node kind {name!r}")
        kinds[name] = kind
    # One query, one walk of the tree: the analysis's captures and the fingerprint's.
    return _Grammar(ts.Query(language, _QUERY_TEXT + _FINGERPRINT_QUERY), kinds)


def _parse(data: bytes) -> ts.Tree:
    return tsh.parse(tree_sitter_python.language, data)


@lru_cache(maxsize=32)
def _parsed(data: bytes) -> ts.Tree:
    """Rendering parses the same file once per rendered node (a context assembly renders
    dozens of one file's nodes): the tree of a recent content is reused (trees are only read)."""
    return _parse(data)


_POSITION = attrgetter("start_byte", "end_byte")

# What Python's grammar leaves out of a definition's formatting-free token stream: comments,
# the parentheses Black adds or removes where they change nothing (around a whole expression
# or an unpacking target), and the layout of string literals (quotes, escapes): ``ast``
# sees none of these. Blocks, which indentation alone encodes, become tokens.
_FINGERPRINT_QUERY = (
    "(comment) @comment (string) @string (block) @block (tuple) @tuple (tuple_pattern) @tuple"
    " (parenthesized_expression) @paren"
)
_FINGERPRINT_CAPTURES = frozenset({"comment", "string", "block", "tuple", "paren"})  # need no order
_FREE_TUPLE = frozenset({"for_statement", "for_in_clause", "assignment", "return_statement", "expression_statement"})
_WHOLE_EXPRESSION = frozenset(
    {
        "assignment",
        "augmented_assignment",
        "return_statement",
        "expression_statement",
        "argument_list",
        "keyword_argument",
        "if_statement",
        "elif_clause",
        "while_statement",
        "assert_statement",
        "parenthesized_expression",
    }
)


def _string_token(text: bytes) -> bytes:
    """A string literal by its value (quotes and escapes are layout); f-strings as written."""
    if text[:1] in (b"'", b'"') and b"\\" not in text:  # no prefix, no escape: the value is the inside
        quote = 3 if text[:3] in (b"'''", b'"""') else 1
        return b"str:" + repr(text[quote:-quote].decode("utf-8", "replace")).encode()  # as literal_eval would
    prefix = text[: len(text) - len(text.lstrip(b"rRbBuUfF"))]
    if b"f" in prefix.lower():
        return text
    try:
        return b"str:" + repr(ast.literal_eval(text.decode("utf-8"))).encode()
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError):
        return text


def _fingerprints(found: dict[str, list[ts.Node]], data: bytes) -> tsh.Fingerprints:
    """The fingerprints of a file from its ``_FINGERPRINT_QUERY`` captures (in any order)."""
    dropped = [(n.start_byte, n.end_byte) for n in found.get("comment", ())]
    for kind, free in (("tuple", _FREE_TUPLE), ("paren", _WHOLE_EXPRESSION)):
        for node in found.get(kind, ()):
            parent = node.parent
            if parent is not None and parent.type in free and node.child_count >= 2:
                first, last = node.children[0], node.children[-1]
                if first.type == "(" and last.type == ")":
                    dropped += [(first.start_byte, first.end_byte), (last.start_byte, last.end_byte)]
    literals = [(n.start_byte, n.end_byte, _string_token(n.text or b"")) for n in found.get("string", ())]
    marks = [(n.start_byte, b"<block>") for n in found.get("block", ())]
    marks += [(n.end_byte, b"</block>") for n in found.get("block", ())]
    return tsh.Fingerprints(data, dropped, literals, marks)


def _inside(regions: list[tuple[int, int]], starts: list[int], position: int) -> bool:
    """Whether ``position`` falls in one of the sorted, disjoint ``regions`` (``starts`` are theirs)."""
    index = bisect_right(starts, position) - 1
    return index >= 0 and position < regions[index][1]


def _text(data: bytes, node: ts.Node | None) -> str:
    return "" if node is None else data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _parameters(data: bytes, node: ts.Node | None) -> tuple[list[dict[str, str | None]], list[str]]:
    """Parameters in order with ``ast``'s kinds (name, type, default and kind, all as written), and
    every item of the list as written on one line (separators ``/`` and ``*`` included)."""
    found: list[dict[str, str | None]] = []
    written: list[str] = []
    if node is None:
        return found, written
    kind = "positional"
    for child in node.named_children:
        what = child.type
        if what != "comment":
            written.append(_one_line(_text(data, child)))
        if what == "positional_separator":
            for parameter in found:
                parameter["kind"] = "positional_only"
            continue
        if what == "keyword_separator":
            kind = "keyword_only"
            continue
        name_node: ts.Node | None = child
        type_node = default_node = None
        this = kind
        if what in ("default_parameter", "typed_default_parameter"):
            name_node, default_node = child.child_by_field_name("name"), child.child_by_field_name("value")
            type_node = child.child_by_field_name("type")
        elif what == "typed_parameter":
            type_node, name_node = child.child_by_field_name("type"), child.named_child(0)
        if name_node is not None and name_node.type in ("list_splat_pattern", "dictionary_splat_pattern"):
            this = "var_positional" if name_node.type == "list_splat_pattern" else "var_keyword"
            kind = "keyword_only" if this == "var_positional" else kind
            name_node = name_node.named_child(0) if name_node.named_child_count else None
        if name_node is None or name_node.type != "identifier":
            continue  # comments, error recovery
        found.append(
            {
                "name": _text(data, name_node),
                "type": _one_line(_text(data, type_node)) if type_node is not None else None,
                "default": _one_line(_text(data, default_node)) if default_node is not None else None,
                "kind": this,
            }
        )
    return found, written


def _is_async(node: ts.Node) -> bool:
    return node.child_count > 0 and node.child(0).type == "async"  # type: ignore[union-attr]


def _function_signature(data: bytes, node: ts.Node, written: list[str], is_async: bool) -> tuple[str, str]:
    """``("async def f(a, /, b=1) -> int", "int")``: the one-line signature and the return type."""
    returns = node.child_by_field_name("return_type")
    return_type = _one_line(_text(data, returns)) if returns is not None else ""
    generic = _text(data, node.child_by_field_name("type_parameters"))
    name = _text(data, node.child_by_field_name("name"))
    signature = f"{'async ' if is_async else ''}def {name}{generic}({', '.join(written)})"
    return (f"{signature} -> {return_type}" if return_type else signature), return_type


def _class_signature(data: bytes, node: ts.Node) -> str:
    head = f"class {_text(data, node.child_by_field_name('name'))}"
    head += _text(data, node.child_by_field_name("type_parameters"))
    bases = node.child_by_field_name("superclasses")
    if bases is None:
        return head
    return f"{head}({', '.join(_one_line(_text(data, b)) for b in bases.named_children if b.type != 'comment')})"


def _decorators(data: bytes, outer: ts.Node) -> list[str]:
    """Decorator expressions of a decorated definition, without the ``@``."""
    return [_one_line(_text(data, child)[1:]) for child in outer.children if child.type == "decorator"]


def _docstring_statement(body: ts.Node | None, kinds: dict[str, int]) -> ts.Node | None:
    """The statement holding the docstring of a module or definition body, if it has one."""
    if body is None:
        return None
    comment, count, index = kinds["comment"], body.named_child_count, 0
    while index < count and body.named_child(index).kind_id == comment:  # type: ignore[union-attr]
        index += 1
    first = body.named_child(index) if index < count else None
    if first is None or first.kind_id != kinds["expression_statement"] or first.named_child_count != 1:
        return None
    literal = first.named_child(0)
    if literal is None or literal.kind_id != kinds["string"]:
        return None
    return first


def _docstring_text(data: bytes, statement: ts.Node) -> str | None:
    """The cleaned text of a docstring statement (None for f-strings and bytes, which are not docstrings)."""
    found = _DOCSTRING.fullmatch(_text(data, statement))
    return inspect.cleandoc(found.group(2)) if found else None


# -- analysis -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Typed:
    """How a name's type is written where it is bound: ``C(...)`` (constructed) or ``x: C``."""

    text: str
    constructed: bool


@dataclass(eq=False, slots=True)
class _Scope:
    """A class or function definition while its file is being analyzed."""

    node: ts.Node  # the function_definition / class_definition
    entity: Entity
    parent: _Scope | None
    is_class: bool
    name: str
    qualname: str
    start: int
    end: int
    params: frozenset[str] = frozenset()
    visible: frozenset[str] = frozenset()  # parameters of this and the enclosing functions
    method: _Scope | None = None  # the method this is or is nested in (closures in a method see `self`)
    first_param: str = ""
    members: dict[str, _Scope] = field(default_factory=dict)  # nested definitions, the first one per name
    bases: list[str] = field(default_factory=list)  # qualified names of the resolved bases
    # A base outside this package (or unresolved, a builtin included): a member not found in
    # the class or its resolved bases may come from there, so no bare-name guess is honest.
    foreign_base: bool = False
    is_protocol: bool = False
    # What the body binds itself, which shadows the enclosing scopes' names (Python's rule:
    # a name bound anywhere in a function body is local to all of it).
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> qualified, from local imports
    bound: set[str] = field(default_factory=set)  # assigned, loop/with/except targets, walrus
    # Local name -> how its value's type is written (a constructor call or an annotation);
    # None when the name is bound more than once (the type is then not plain).
    types: dict[str, _Typed | None] = field(default_factory=dict)
    attribute_types: dict[str, _Typed | None] = field(default_factory=dict)  # of a class: self.x's


_Edge = tuple[tuple[tuple[str, float], ...], str | None]  # (targets, simple name) of one reference
_SHADOWED = "<shadowed>"  # lookup(): bound in an enclosing function to a value the file cannot name
_DEFINITION_NODES = frozenset({"function_definition", "class_definition"})
# Annotations that name no class whose methods a call could reach.
_UNTYPED_ROOTS = frozenset({"typing", "typing_extensions", "collections", "builtins", "types"})
_OPTIONAL = re.compile(r"(?:typing\.|t\.)?Optional\[(.*)\]", re.S)


def _owner_start(node: ts.Node) -> int | None:
    """Where the innermost def or class holding ``node`` starts; None at module level."""
    parent = node.parent
    while parent is not None:
        if parent.type in _DEFINITION_NODES:
            return parent.start_byte
        parent = parent.parent
    return None


def _type_attribute(owner: _Scope, name: str, typed: _Typed | None) -> None:
    """Record ``self.name``'s type on its class; two different ones (or an untyped binding) make it unknown."""
    known = owner.attribute_types
    if name not in known:
        known[name] = typed
    elif known[name] != typed:
        known[name] = None


def _encloses_named(scope: _Scope | None, name: str) -> bool:
    """Whether ``scope`` or a definition around it is called ``name``."""
    while scope is not None:
        if scope.name == name:
            return True
        scope = scope.parent
    return False


def _plain_annotation(text: str) -> str | None:
    """The class an annotation names when it is plain: ``C``, ``m.C``, ``"C"``, ``Optional[C]``,
    ``C | None``, ``C[T]``; None for unions of several classes and anything else."""
    text = text.strip().strip("'\"").strip()
    optional = _OPTIONAL.fullmatch(text)
    if optional:
        text = optional.group(1).strip()
    parts = [p.strip() for p in text.split("|")]
    others = [p for p in parts if p != "None"]
    if len(others) != 1:
        return None
    text = others[0].split("[", 1)[0].strip()
    return _dotted(text)


def _looks_like_class(qualified: str) -> bool:
    """``ArgumentParser``, ``HTTPServer`` but not ``urlopen`` or ``MAX_SIZE``: a CapWords
    name, what PEP 8 asks of classes (used only for names from outside the file)."""
    last = qualified.rsplit(".", 1)[-1].lstrip("_")
    return last[:1].isupper() and any(c.islower() for c in last)


class _FileAnalyzer:
    """Everything known about one file while it is being analyzed."""

    def __init__(self, source: SourceFile, tree: ts.Tree) -> None:
        self.path = source.path
        self.data = source.data
        self.tree = tree
        self.grammar = _grammar()
        self.kinds = self.grammar.kinds
        self.module = module_name(source.path)
        self.is_package = PurePosixPath(source.path).stem == "__init__"
        self.test_file = is_test_file(source.path)
        self.entities: list[Entity] = []
        self.references: list[Reference] = []
        self.keys: dict[str, int] = {}
        self.aliases: dict[str, str] = {}  # local name -> qualified name, from module-level imports
        # Imports inside a definition, by the start of the innermost def/class holding them.
        self.local_aliases: dict[int, dict[str, str]] = {}
        self.module_bound: set[str] = set()  # names bound at module level by assignment
        self.from_names: set[str] = set()  # local names bound by `from m import name`
        self.star_modules: list[str] = []
        self.imported: dict[str, Entity] = {}  # qualified module -> its Import entity
        self.top: dict[str, _Scope] = {}  # module-level definitions by name
        self.scopes: list[_Scope] = []
        self.starts: list[int] = []
        self.modules_under_test: list[str] = []
        kind = STUB_MODULE if source.path.endswith(".pyi") else MODULE
        self.file = Entity("", (kind,), PurePosixPath(source.path).name)
        self.file.values = {LANGUAGE: ["python"], QUALIFIED_NAME: [self.module]}
        self.file.symbols = ((NAMESPACE, self.module),) if self.module else ()
        self.entities.append(self.file)
        self.isolation = Isolation(self.entities)

    def text(self, node: ts.Node | None) -> str:
        return _text(self.data, node)

    def unique_key(self, key: str) -> tuple[str, bool]:
        """A key not used yet in this file (``~2``, ``~3`` in source order) and whether it is the first."""
        count = self.keys.get(key, 0) + 1
        self.keys[key] = count
        return (key, True) if count == 1 else (f"{key}~{count}", False)

    def run(self) -> FileAnalysis:
        found = ts.QueryCursor(self.grammar.query).captures(self.tree.root_node)
        # Capture lists are not in document order, and keys (~2, ~3) and dedup depend on it.
        captures = {
            name: nodes if name in _FINGERPRINT_CAPTURES else sorted(nodes, key=_POSITION)
            for name, nodes in found.items()
        }
        isolation = self.isolation
        with isolation.phase("module docstring"):
            self.docstring(self.tree.root_node, self.file, "")
        for node in captures.get("import", ()):
            with isolation.definition(node, "import"):
                self.import_statement(node)
        self.definitions(captures.get("def", []))
        self.starts = [scope.start for scope in self.scopes]
        with isolation.phase("local bindings"):
            self.bindings(captures)
        for scope in self.scopes:
            if scope.is_class:
                with isolation.phase(f"bases of {scope.qualname}"):
                    self.class_bases(scope)
        for kind, handle in (
            ("var", self.variable),
            ("field", self.class_attribute),
            ("member", self.instance_attribute),
        ):
            for node in captures.get(kind, ()):
                if not isolation.inside_failed(node):
                    with isolation.definition(node, kind):
                        handle(node)
        problems = tsh.problems(self.tree, _DEFINITION)
        # Inside an error region `def m(self)` can parse as a call: no edges from there.
        broken = sorted(
            (p.span.start_byte, p.span.end_byte) for p in problems if p.span and p.span.end_byte > p.span.start_byte
        )
        callees = captures.get("callee", [])
        if broken:
            starts = [start for start, _ in broken]
            callees = [c for c in callees if not _inside(broken, starts, c.start_byte)]
        if isolation.failed:
            callees = [c for c in callees if not isolation.inside_failed(c)]
        with isolation.phase("calls"):
            self.calls(callees)
        if self.test_file:
            with isolation.phase("tested callables"):
                self.modules_under_test = self.tested_modules()
                for scope in self.scopes:
                    if TEST_FUNCTION in scope.entity.types:
                        self.tested_callable(scope)
        with isolation.phase("fingerprints"):
            tsh.add_fingerprints(self.entities, _fingerprints(captures, self.data))
        return isolation.finish(FileAnalysis(self.entities, self.references, problems))

    # -- scopes

    def enclosing(self, position: int) -> _Scope | None:
        """The innermost definition whose range holds ``position``."""
        index = bisect_right(self.starts, position) - 1
        scope = self.scopes[index] if index >= 0 else None
        while scope is not None and scope.end <= position:
            scope = scope.parent
        return scope

    def lookup(self, name: str, scope: _Scope | None) -> tuple[_Scope | None, str | None]:
        """What a bare name means at ``scope``, scope by scope as Python looks it up: (the
        definition, its qualified name). A name the innermost binding scope binds to a value
        the file cannot name (a parameter, an assignment, a loop target) gives ``_SHADOWED``."""
        inner = True
        while scope is not None:
            if inner or not scope.is_class:  # a class body does not enclose its methods' names
                hit = scope.members.get(name)
                if hit is not None:
                    return hit, hit.qualname
                alias = scope.aliases.get(name)
                if alias is not None:
                    return None, alias
                if name in scope.bound or name in scope.params:
                    return None, _SHADOWED
            inner = False
            scope = scope.parent
        hit = self.top.get(name)
        if hit is not None:
            return hit, hit.qualname
        alias = self.aliases.get(name)
        if alias is None and name in self.module_bound:
            return None, _join(self.module, name)  # a module-level variable (its entity's symbol)
        return None, alias

    def resolve(self, dotted: str, scope: _Scope | None) -> str | None:
        """The qualified name ``a.b.c`` means at ``scope``, through definitions and imports."""
        head, dot, rest = dotted.partition(".")
        qualified = self.lookup(head, scope)[1]
        return None if qualified is None or qualified == _SHADOWED else qualified + dot + rest

    def bindings(self, captures: dict[str, list[ts.Node]]) -> None:
        """What each function and class body binds itself: local imports, assignments and
        other targets (with how their type is written, where it is plain), and ``self.x``
        assignments typed for the class. ``global``/``nonlocal`` names are not local."""
        for scope in self.scopes:
            scope.aliases = self.local_aliases.get(scope.start, scope.aliases)
        kinds = self.kinds
        assignment, call = kinds["assignment"], kinds["call"]
        for node in captures.get("bound", ()):
            scope = self.enclosing(node.start_byte)
            name = self.text(node)
            if scope is None:
                self.module_bound.add(name)
                continue
            typed = None
            parent = node.parent
            if parent is not None and parent.kind_id == assignment and parent.child_by_field_name("left") == node:
                typed = self.typed_value(parent, call)
            elif parent is not None and parent.parent is not None and parent.parent.parent is not None:
                clause = parent.parent.parent  # except E as e: (as_pattern_target) < as_pattern < except_clause
                caught = parent.parent.named_child(0)
                if clause.type == "except_clause" and caught is not None and _dotted(self.text(caught)):
                    typed = _Typed(self.text(caught), constructed=False)
            fresh = name not in scope.bound and name not in scope.params
            scope.bound.add(name)
            scope.types[name] = typed if fresh else None
            if scope.is_class:  # a class-level field is what self.x reads unless a method rebinds it
                _type_attribute(scope, name, typed)
        for node in captures.get("member", ()):
            scope = self.enclosing(node.start_byte)
            method = scope.method if scope is not None else None
            owner = method.parent if method is not None else None
            if method is None or owner is None or self.text(node.child_by_field_name("object")) != method.first_param:
                continue
            parent = node.parent
            typed = self.typed_value(parent, call) if parent is not None else None
            _type_attribute(owner, self.text(node.child_by_field_name("attribute")), typed)
        for node in captures.get("declared", ()):
            scope = self.enclosing(node.start_byte)
            if scope is not None:
                for name in node.named_children:
                    scope.bound.discard(self.text(name))
                    scope.types.pop(self.text(name), None)

    def typed_value(self, assignment: ts.Node, call: int) -> _Typed | None:
        """``x: C = ...`` or ``x = C(...)``: how the assigned value's type is written."""
        annotation = assignment.child_by_field_name("type")
        if annotation is not None:
            return _Typed(self.text(annotation), constructed=False)
        right = assignment.child_by_field_name("right")
        if right is not None and right.kind_id == call:
            function = right.child_by_field_name("function")
            written = _dotted(self.text(function)) if function is not None else None
            if written is not None:
                return _Typed(written, constructed=True)
        return None

    # -- definitions

    def definitions(self, nodes: list[ts.Node]) -> None:
        stack: list[_Scope] = []
        isolation = self.isolation
        for node in nodes:
            if isolation.failed and isolation.inside_failed(node):
                continue  # a member of a definition that failed went with it
            start = node.start_byte
            while stack and stack[-1].end <= start:
                stack.pop()
            scope = None
            with isolation.definition(node):
                scope = self.definition(node, stack[-1] if stack else None)
            if scope is not None:
                stack.append(scope)
                self.scopes.append(scope)

    def definition(self, node: ts.Node, parent: _Scope | None) -> _Scope | None:
        name = self.text(node.child_by_field_name("name"))
        if not name:
            return None
        kinds = self.kinds
        is_class = node.kind_id == kinds["class_definition"]
        outer = node.parent
        if outer is None or outer.kind_id != kinds["decorated_definition"]:
            outer = node
        key, first = self.unique_key(f"{parent.entity.key}.{name}" if parent else name)
        qualname = f"{parent.qualname}.{name}" if parent else _join(self.module, name)
        entity = Entity(key, (), name, parent.entity.key if parent else "", tsh.span(outer))
        scope = _Scope(node, entity, parent, is_class, name, qualname, node.start_byte, node.end_byte)
        if parent is not None:
            scope.visible, scope.method = parent.visible, parent.method
        if first:
            entity.symbols = ((NAMESPACE, qualname),)
            if parent is None:
                self.top[name] = scope
            else:
                parent.members.setdefault(name, scope)
        decorators = _decorators(self.data, outer) if outer is not node else []
        values: dict[str, list[Value]] = {QUALIFIED_NAME: [qualname], VISIBILITY: [visibility(name)]}
        if decorators:
            values[DECORATOR] = list(decorators)
        entity.values = values
        if is_class:
            entity.types = (CLASS,)
            values[SIGNATURE] = [_class_signature(self.data, node)]
        else:
            self.function(scope, node, parent, decorators)
        if parent is not None and parent.is_class:
            parent.entity.links.append((HAS_METHOD, key))
        self.entities.append(entity)
        self.docstring(node.child_by_field_name("body"), entity, key)
        return scope

    def function(self, scope: _Scope, node: ts.Node, parent: _Scope | None, decorators: list[str]) -> None:
        entity, name = scope.entity, scope.name
        method = parent is not None and parent.is_class
        if method:
            entity.types = (CONSTRUCTOR, METHOD) if name == "__init__" else (METHOD,)
        else:
            entity.types = (FUNCTION,)
        if self.is_test(name, parent):
            entity.types = (TEST_FUNCTION, *entity.types)
        parameters, written = _parameters(self.data, node.child_by_field_name("parameters"))
        scope.params = frozenset(str(p["name"]) for p in parameters)
        scope.visible = scope.visible | scope.params
        for parameter in parameters:
            if parameter["type"] and parameter["kind"] not in ("var_positional", "var_keyword"):
                scope.types[str(parameter["name"])] = _Typed(str(parameter["type"]), constructed=False)
        if method:
            scope.method = scope
            scope.first_param = str(parameters[0]["name"]) if parameters else ""
        is_async = _is_async(node)
        signature, return_type = _function_signature(self.data, node, written, is_async)
        values = entity.values
        values[SIGNATURE] = [signature]
        values[PARAMETERS] = ["[" + ", ".join(map(_parameter_json, parameters)) + "]"]
        if return_type:
            values[RETURN_TYPE] = [return_type]
        modifiers = _modifiers(decorators, is_async)
        if modifiers:
            values[MODIFIERS] = [*modifiers]

    def is_test(self, name: str, parent: _Scope | None) -> bool:
        """pytest's and unittest's rule: test_* at module level or in a class, in a test file or a Test* class."""
        if not (name.startswith("test_") or name == "test"):
            return False
        if parent is None:
            return self.test_file
        return parent.is_class and parent.parent is None and (self.test_file or parent.name.startswith("Test"))

    def docstring(self, body: ts.Node | None, owner: Entity, owner_key: str) -> None:
        statement = _docstring_statement(body, self.kinds)
        text = _docstring_text(self.data, statement) if statement is not None else None
        if statement is None or text is None:
            return
        owner.add(DOC, text[:DOC_VALUE_LIMIT])
        key, _ = self.unique_key(f"{owner_key}/doc")
        self.entities.append(Entity(key, (DOCSTRING,), "__doc__", owner_key, tsh.span(statement)))

    def class_bases(self, scope: _Scope) -> None:
        bases = scope.node.child_by_field_name("superclasses")
        if bases is None:
            return
        kinds = self.kinds
        entity = scope.entity
        resolved: list[tuple[str, str | None, tuple[int, int] | None]] = []
        for base in bases.named_children:
            if base.kind_id == kinds["keyword_argument"]:
                if self.text(base.child_by_field_name("value")) in _ABSTRACT_BASES:
                    entity.add(MODIFIERS, "abstract")
                continue
            if base.kind_id == kinds["subscript"]:  # Generic[T], Protocol[T]
                base = base.child_by_field_name("value") or base
            dotted = _dotted(self.text(base))
            if dotted is None or dotted == "object":
                continue
            if dotted in _PROTOCOL_BASES or self.resolve(dotted, scope.parent) in _PROTOCOL_BASES:
                scope.is_protocol = True
                entity.types = (PROTOCOL,)
                continue
            if dotted in _ABSTRACT_BASES and "abstract" not in entity.values.get(MODIFIERS, ()):
                entity.add(MODIFIERS, "abstract")
            resolved.append((dotted, self.resolve(dotted, scope.parent), _name_position(base)))
        line = scope.node.start_point[0] + 1
        package = self.module.split(".", 1)[0]
        for dotted, qualified, at in resolved:
            if qualified is not None:
                scope.bases.append(qualified)
            if qualified is None or qualified.split(".", 1)[0] != package:
                scope.foreign_base = True
            outside = None  # the base's qualified name when it is from outside this package
            if qualified is None and dotted in _BUILTINS:
                outside = f"builtins.{dotted}"
            elif qualified is not None and qualified.split(".", 1)[0] != package:
                outside = qualified
            targets = ((qualified, SCOPE_CONFIDENCE),) if qualified else self.star_targets(dotted)
            if outside is not None:
                # Defined inside after all (another top-level package indexed with this one)
                # wins; else the edge goes to an external symbol, which a language server upgrades.
                shadowed = qualified is None and bool(self.star_modules)
                external = self.external_symbol(outside)
                targets = (*targets, (external, NAMING_CONFIDENCE if shadowed else SCOPE_CONFIDENCE))
            local = self.top.get(dotted)
            # Python has no `implements`: subclassing a Protocol of this file is the nearest thing.
            implements = local is not None and local.is_protocol and not scope.is_protocol
            predicate = IMPLEMENTS if implements else INHERITS_FROM
            simple = (qualified or dotted).rsplit(".", 1)[-1]
            self.references.append(Reference(entity.key, predicate, NAMESPACE, targets, simple, line, at))

    def external_symbol(self, qualified: str) -> str:
        """An ``uko-code:ExternalSymbol`` node of this file for a name from outside the package
        (keyed as the language server's are, so its answer lands on the same node), and the
        symbol only this file's references resolve to."""
        symbol = f"{PRIVATE_SYMBOL}external:{self.path}:{qualified}"
        key = f"~external/python/{qualified}"
        if key not in self.keys:
            self.keys[key] = 1
            node = Entity(key, (EXTERNAL_SYMBOL,), qualified.rsplit(".", 1)[-1], None)
            node.values = {QUALIFIED_NAME: [qualified], LANGUAGE: ["python"]}
            node.symbols = ((NAMESPACE, symbol),)
            self.entities.append(node)
        return symbol

    def star_targets(self, name: str) -> tuple[tuple[str, float], ...]:
        return tuple((_join(module, name), INHERITED_CONFIDENCE) for module in self.star_modules)

    # -- attributes and variables

    def variable(self, node: ts.Node) -> None:
        name = self.text(node.child_by_field_name("left"))
        if name == "__all__":
            self.exports(node.child_by_field_name("right"))
            return
        if not name.isidentifier():
            return  # error recovery can leave an assignment without a target (`: x`)
        if (name.startswith("__") and name.endswith("__")) or name in self.keys:
            return  # dunders are not API; a reassigned def or variable is already there
        self.keys[name] = 1
        entity = self.value_entity(name, name, _join(self.module, name), node, VARIABLE)
        if name.isupper():
            entity.add(MODIFIERS, "const")
        self.entities.append(entity)

    def exports(self, value: ts.Node | None) -> None:
        if value is None or value.type not in ("list", "tuple"):
            return
        for item in value.named_children:
            found = _STRING.fullmatch(self.text(item)) if item.kind_id == self.kinds["string"] else None
            if found:
                self.file.add(EXPORTS_NAME, found.group(2))

    def value_entity(self, key: str, name: str, qualname: str, node: ts.Node, kind: str) -> Entity:
        type_node = node.child_by_field_name("type")
        entity = Entity(key, (kind,), name, key.rpartition(".")[0], tsh.span(node))
        entity.symbols = ((NAMESPACE, qualname),)
        signature = f"{name}: {_one_line(self.text(type_node))}" if type_node is not None else name
        entity.values = {QUALIFIED_NAME: [qualname], SIGNATURE: [signature], VISIBILITY: [visibility(name)]}
        return entity

    def attribute(self, scope: _Scope, name: str, node: ts.Node) -> None:
        if not name.isidentifier():
            return  # error recovery: `self. = 1`, `: int`
        key = f"{scope.entity.key}.{name}"
        if key in self.keys:  # a method of that name, or the attribute seen already
            return
        self.keys[key] = 1
        self.entities.append(self.value_entity(key, name, f"{scope.qualname}.{name}", node, ATTRIBUTE))
        scope.entity.links.append((HAS_ATTRIBUTE, key))

    def class_attribute(self, node: ts.Node) -> None:
        block = node.parent.parent if node.parent is not None else None
        owner = block.parent if block is not None else None
        scope = self.enclosing(owner.start_byte) if owner is not None else None
        if scope is not None and scope.node == owner:
            self.attribute(scope, self.text(node.child_by_field_name("left")), node)

    def instance_attribute(self, target: ts.Node) -> None:
        """``self.x = ...`` in ``__init__`` (at any depth of its body) declares an instance attribute."""
        scope = self.enclosing(target.start_byte)
        if scope is None or scope.name != "__init__" or scope.parent is None or not scope.parent.is_class:
            return
        if self.text(target.child_by_field_name("object")) != scope.first_param:
            return
        name = self.text(target.child_by_field_name("attribute"))
        self.attribute(scope.parent, name, target.parent or target)

    # -- imports

    def import_statement(self, node: ts.Node) -> None:
        kinds = self.kinds
        line = node.start_point[0] + 1
        owner = _owner_start(node)
        # A function's or class's own import binds in that body only, as Python's does.
        aliases = self.aliases if owner is None else self.local_aliases.setdefault(owner, {})
        if node.kind_id == kinds["import_statement"]:
            for item in node.children_by_field_name("name"):
                if item.kind_id == kinds["aliased_import"]:
                    target = "".join(self.text(item.child_by_field_name("name")).split())
                    aliases[self.text(item.child_by_field_name("alias"))] = target
                else:
                    target = "".join(self.text(item).split())
                    head = target.split(".", 1)[0]
                    aliases.setdefault(head, head)  # `import a.b` binds `a`
                named = item.child_by_field_name("name") if item.kind_id == kinds["aliased_import"] else item
                self.add_import(target, target, ((target, SCOPE_CONFIDENCE),), node, line, _name_position(named))
            return
        module_node = node.child_by_field_name("module_name")
        if module_node is None:
            return
        written = "".join(self.text(module_node).split())
        level = len(written) - len(written.lstrip(".")) if module_node.kind_id == kinds["relative_import"] else 0
        base = absolute_module(self.module, self.is_package, level, written[level:]) if level else written
        names: list[tuple[str, tuple[int, int] | None]] = []
        for item in node.children_by_field_name("name"):
            aliased = item.kind_id == kinds["aliased_import"]
            named = item.child_by_field_name("name") if aliased else item
            original = self.text(named)
            local = self.text(item.child_by_field_name("alias")) if aliased else original
            aliases[local] = _join(base, original)
            if owner is None:
                self.from_names.add(local)
            names.append((original, _name_position(named)))
        if any(child.kind_id == kinds["wildcard_import"] for child in node.children):
            self.star_modules.append(base)
        if level and written == "." * level:
            # `from . import x`: x is most often a submodule; the package is the fallback.
            for original, at in names:
                target = _join(base, original)
                fallback = ((base, SCOPE_CONFIDENCE),) if base else ()
                self.add_import(target, written + original, ((target, SCOPE_CONFIDENCE), *fallback), node, line, at)
        else:
            self.add_import(base, written, ((base, SCOPE_CONFIDENCE),), node, line, _name_position(module_node))

    def add_import(
        self,
        target: str,
        written: str,
        targets: tuple[tuple[str, float], ...],
        node: ts.Node,
        line: int,
        at: tuple[int, int] | None,
    ) -> None:
        if not target or target in self.imported:
            return
        key, _ = self.unique_key(f"import/{target}")
        entity = Entity(key, (IMPORT,), target, "", tsh.span(node), {IMPORTED_NAME: [written]})
        self.imported[target] = entity
        self.entities.append(entity)
        self.references.append(Reference("", DEPENDS_ON, NAMESPACE, targets, None, line, at))
        self.references.append(Reference(key, IMPORTS, NAMESPACE, targets, None, line, at))

    # -- calls

    def calls(self, callees: list[ts.Node]) -> None:
        identifier = self.kinds["identifier"]
        data, starts, scopes = self.data, self.starts, self.scopes
        seen: set[tuple[_Scope | None, bytes]] = set()
        linked: set[tuple[str, str]] = set()
        for callee in callees:  # the hottest loop of the analyzer: enclosing() inlined
            start = callee.start_byte
            index = bisect_right(starts, start) - 1
            scope = scopes[index] if index >= 0 else None
            while scope is not None and scope.end <= start:
                scope = scope.parent
            written = data[start : callee.end_byte]
            if (scope, written) in seen:
                continue
            seen.add((scope, written))
            text = written.decode("utf-8", errors="replace")
            source = scope.entity.key if scope is not None else ""
            edges = self.name_call(text, scope) if callee.kind_id == identifier else self.attribute_call(text, scope)
            for targets, simple in edges:
                first = targets[0][0] if targets else f"?{simple}"
                if (source, first) not in linked:
                    linked.add((source, first))
                    line = callee.start_point[0] + 1
                    at = _name_position(callee)
                    self.references.append(Reference(source, CALLS, NAMESPACE, targets, simple, line, at))

    def name_call(self, name: str, scope: _Scope | None) -> list[_Edge]:
        """``f()``: a nested or module-level definition, an imported name, else a distinctive bare name."""
        if scope is not None and name in scope.visible:
            return []  # a callback: nothing honest to say
        found, qualified = self.lookup(name, scope)
        if found is not None:
            edges: list[_Edge] = [(((found.qualname, SCOPE_CONFIDENCE),), None)]
            init = found.members.get("__init__") if found.is_class else None
            if init is not None:  # instantiation runs __init__
                edges.append((((init.qualname, SCOPE_CONFIDENCE),), None))
            return edges
        if qualified == _SHADOWED:
            return []  # a local variable holding a callable: nothing honest to say
        if qualified is not None:
            return [(((qualified, SCOPE_CONFIDENCE),), self.distinctive(qualified.rsplit(".", 1)[-1]))]
        if name in _BUILTINS:
            return []
        # A bare name equal to an enclosing method's cannot reach that method (methods are
        # not in scope by bare name): a last-resort match would make a false recursion.
        simple = None if _encloses_named(scope, name) else self.distinctive(name)
        targets = self.star_targets(name)
        return [(targets, simple)] if targets or simple else []

    def attribute_call(self, text: str, scope: _Scope | None) -> list[_Edge]:
        """``a.b.c()``: through self/cls, super(), a module alias or a definition; else a distinctive bare name."""
        dotted = _dotted(text)
        method_scope = scope.method if scope is not None else None
        owner = method_scope.parent if method_scope is not None else None
        if dotted is None:
            receiver, _, method = text.rpartition(".")
            method = method.strip()
            if "".join(receiver.split()) == "super()":
                # Through the bases only: a bare-name match would find the class's own method.
                targets = tuple((f"{base}.{method}", INHERITED_CONFIDENCE) for base in owner.bases) if owner else ()
                return [(targets, None)] if targets else []
            simple = self.distinctive(method)
            return [((), simple)] if simple and not self.is_self_name(method, scope) else []
        head, _, rest = dotted.partition(".")
        method = dotted.rsplit(".", 1)[-1]
        receivers = ("self", "cls", method_scope.first_param) if method_scope is not None else ()
        typed = self.receiver_type(head, rest, scope, owner if head in receivers else None)
        if typed is not None:
            edges = self.typed_call(*typed, method)
            if edges is not None:
                return edges
        if owner is not None and "." not in rest and head in receivers:
            targets = ((f"{owner.qualname}.{rest}", RECEIVER_CONFIDENCE),)
            targets += tuple((f"{base}.{rest}", INHERITED_CONFIDENCE) for base in owner.bases)
            # Not in the class or its bases here: a bare-name guess is honest only when every
            # base is in this package (then the member is somewhere up its chain).
            return [(targets, None if owner.foreign_base else self.distinctive(method))]
        qualified = None if scope is not None and head in scope.visible else self.resolve(dotted, scope)
        if qualified is not None:
            # mod.f() inside def f, with mod.f not found: a bare name would match the caller.
            simple = None if self.is_self_name(method, scope) else self.distinctive(method)
            return [(((qualified, SCOPE_CONFIDENCE),), simple)]
        simple = self.distinctive(method)
        return [((), simple)] if simple and not self.is_self_name(method, scope) else []

    def receiver_type(
        self, head: str, rest: str, scope: _Scope | None, owner: _Scope | None
    ) -> tuple[_Typed, _Scope | None] | None:
        """How the receiver of ``head.m()`` or ``self.x.m()`` is typed, and the scope where that
        is written (its names resolve there); None when the file does not say plainly."""
        if owner is not None:  # self.x.m(): the class's record of self.x
            attribute, dot, tail = rest.partition(".")
            typed = owner.attribute_types.get(attribute) if dot and "." not in tail else None
            return (typed, owner.parent) if typed is not None else None
        if "." in rest:
            return None
        inner = True
        while scope is not None:
            if inner or not scope.is_class:
                if head in scope.types:
                    typed = scope.types[head]
                    return (typed, scope) if typed is not None else None
                if head in scope.bound or head in scope.params or head in scope.members or head in scope.aliases:
                    return None
            inner = False
            scope = scope.parent
        return None

    def typed_call(self, typed: _Typed, where: _Scope | None, method: str) -> list[_Edge] | None:
        """``x.m()`` on a receiver of a known class: that class's method, an external symbol for a
        class from outside the package; None when the written type names no class the file knows."""
        written = typed.text if typed.constructed else _plain_annotation(typed.text)
        if written is None:
            return None
        head = written.split(".", 1)[0]
        found, qualified = self.lookup(head, where)
        if qualified is None or qualified == _SHADOWED:
            return [] if qualified is None and written in _BUILTINS else None  # builtins' methods are all common names
        qualified = qualified + written[len(head) :]
        if typed.constructed and not (found.is_class if found is not None else _looks_like_class(qualified)):
            return None  # a factory function: what it returns is not written here
        if qualified.split(".", 1)[0] in _UNTYPED_ROOTS:
            return None
        target = f"{qualified}.{method}"
        if qualified.split(".", 1)[0] == self.module.split(".", 1)[0]:
            return [(((target, RECEIVER_CONFIDENCE),), self.distinctive(method))]
        # From outside the package: its method, or (another package indexed with this one
        # defines it after all) the definition inside; never a same-named method by bare name.
        return [(((target, RECEIVER_CONFIDENCE), (self.external_symbol(target), RECEIVER_CONFIDENCE)), None)]

    @staticmethod
    def is_self_name(method: str, scope: _Scope | None) -> bool:
        """``x.get()`` inside ``def get``: a bare-name match would mostly make the caller call
        itself (a delegation to another object's method of the same name), not recursion."""
        return scope is not None and scope.name == method

    @staticmethod
    def distinctive(name: str) -> str | None:
        return None if name in _COMMON or (name.startswith("__") and name.endswith("__")) else name

    # -- tests

    def tested_modules(self) -> list[str]:
        """The imported module(s) a test module is named after: ``test_bar.py`` -> ``pkg.bar``."""
        stem = PurePosixPath(self.path).stem
        under_test = stem.removeprefix("test_").removesuffix("_test")
        if under_test == stem:
            return []
        modules = [m for m in self.imported if m.rsplit(".", 1)[-1] == under_test]
        bound = self.aliases.get(under_test)
        return [*modules, bound] if bound is not None and bound not in modules else modules

    def tested_callable(self, scope: _Scope) -> None:
        """testsCallable where naming makes the subject clear: ``test_foo[_case]`` -> an imported ``foo``.

        Candidates run from the whole name to its first word (``test_parse_url_empty`` tries
        ``parse_url_empty``, ``parse_url``, ``parse``); the linker takes the first that exists.
        """
        parts = scope.name[5:].split("_")
        candidates = ["_".join(parts[:n]) for n in range(len(parts), 0, -1) if parts[n - 1]]
        if not candidates:
            return
        targets: list[str] = []
        owner = scope.parent
        if owner is not None:
            tested_class = owner.name.removeprefix("Test").removesuffix("Tests").removesuffix("Test")
            if tested_class in self.from_names:
                targets += [f"{self.aliases[tested_class]}.{c}" for c in candidates]
        targets += [self.aliases[c] for c in candidates if c in self.from_names]
        targets += [f"{m}.{c}" for m in self.modules_under_test for c in candidates]
        if targets:
            unique = tuple((t, NAMING_CONFIDENCE) for t in dict.fromkeys(targets))
            line = scope.node.start_point[0] + 1
            self.references.append(Reference(scope.entity.key, TESTS_CALLABLE, NAMESPACE, unique, None, line))


# -- rendering ----------------------------------------------------------------------------

_COMPOUND = frozenset(
    {"if_statement", "for_statement", "while_statement", "try_statement", "with_statement", "match_statement"}
)
_CLAUSES = frozenset(
    {"elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause", "case_clause"}
)
_IMPORT_STATEMENTS = frozenset({"import_statement", "import_from_statement", "future_import_statement"})
_JUMPS = {
    "return_statement": "return",
    "raise_statement": "raise",
    "break_statement": "break",
    "continue_statement": "continue",
}
_MAX_RENDER_NESTING = 100  # deeper blocks are elided: a rendering is for reading
_LINE_LIMIT = 200


class _Outline:
    """Python-like outline of a module or definition at one level below NEAR_COMPLETE."""

    def __init__(self, data: bytes, rank: int) -> None:
        self.data = data
        self.rank = rank
        self.kinds = _grammar().kinds
        self.lines: list[str] = []
        self.nesting = 0

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def line_of(self, node: ts.Node) -> str:
        text = _one_line(_text(self.data, node))
        return text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 4] + " ..."

    def module(self, root: ts.Node, name: str, imports: list[str]) -> None:
        if self.rank < _LISTING:
            self.emit(0, f"module {name}")
            if self.rank >= _GRAPH and imports:
                self.emit(0, f"imports: {', '.join(imports)}")
            return
        self.emit(0, f"# module {name}")
        if imports:
            self.emit(0, f"# imports: {', '.join(imports)}")
        self.docstring(root, 0)
        self.block(root, 0, "module")

    def definition(self, node: ts.Node, indent: int, target: bool = False) -> None:
        outer = node
        if node.type == "decorated_definition":
            node = node.child_by_field_name("definition") or node
        if node.type not in ("function_definition", "class_definition"):
            return
        is_class = node.type == "class_definition"
        name = _text(self.data, node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        rank = self.rank
        if rank < _SIGNATURES:
            keyword = "class" if is_class else ("async def" if _is_async(node) else "def")
            head = f"{keyword} {name}"
            if is_class and (rank >= _HIERARCHY or (target and rank >= _LISTING)):
                head = _class_signature(self.data, node)
            summary = self.summary(body) if rank >= _SUMMARY else ""
            self.emit(indent, f"{head}  # {summary}" if summary else head)
            if target and rank >= _LISTING and body is not None:
                self.block(body, indent + 1, "class" if is_class else "function")
            return
        decorators = _decorators(self.data, outer) if outer is not node else []
        if rank >= _DECORATED:
            for decorator in decorators:
                self.emit(indent, f"@{decorator}")
        if is_class:
            signature = _class_signature(self.data, node)
            markers = [visibility(name)]
        else:
            written = _parameters(self.data, node.child_by_field_name("parameters"))[1]
            signature = _function_signature(self.data, node, written, _is_async(node))[0]
            markers = [visibility(name), *(m for m in _modifiers(decorators, _is_async(node)) if m != "async")]
        comment = f"  # {', '.join(markers)}" if rank >= _VISIBILITY else ""
        header = len(self.lines)
        self.emit(indent, f"{signature}:{comment}")
        documented = self.docstring(body, indent + 1)
        if body is not None and (is_class or rank >= _OUTLINE):
            self.block(body, indent + 1, "class" if is_class else "function")
        if len(self.lines) == header + 1:
            self.lines[header] = "    " * indent + f"{signature}: ...{comment}"
        elif documented and len(self.lines) == header + 1 + documented:
            self.emit(indent + 1, "...")

    def summary(self, body: ts.Node | None) -> str:
        statement = _docstring_statement(body, self.kinds)
        text = _docstring_text(self.data, statement) if statement is not None else None
        return text.strip().split("\n", 1)[0] if text else ""

    def docstring(self, body: ts.Node | None, indent: int) -> int:
        """Write the docstring as written, re-indented; the number of lines written."""
        statement = _docstring_statement(body, self.kinds)
        if statement is None or self.rank < _DOCS:
            return 0
        first, _, rest = _text(self.data, statement).partition("\n")
        lines = [first.strip(), *textwrap.dedent(rest).split("\n")] if rest else [first.strip()]
        for line in lines:
            if line.strip():
                self.emit(indent, line)
            else:
                self.lines.append("")
        return len(lines)

    def block(self, block: ts.Node, indent: int, context: str, body: bool = True) -> None:
        """The statements of a module, class or function ``body`` (or a nested block) at this level."""
        if self.nesting >= _MAX_RENDER_NESTING:  # recursion stays far from Python's limit
            self.emit(indent, "...")
            return
        self.nesting += 1
        try:
            self.statements(block, indent, context, body)
        finally:
            self.nesting -= 1

    def statements(self, block: ts.Node, indent: int, context: str, body: bool) -> None:
        rank = self.rank
        doc = _docstring_statement(block, self.kinds) if body else None  # written by docstring()
        for statement in block.named_children:
            kind = statement.type
            if kind == "comment" or statement == doc:
                continue
            if kind in ("decorated_definition", "function_definition", "class_definition"):
                self.definition(statement, indent)
            elif kind in _COMPOUND:
                if rank >= _OUTLINE:
                    self.compound(statement, indent, context)
                else:  # flattened: definitions under `if TYPE_CHECKING:` or `try:` still count
                    for child in statement.named_children:
                        for part in [child] if child.type == "block" else child.named_children:
                            if part.type == "block":
                                self.block(part, indent, context, body=False)
            elif kind == "expression_statement":
                self.expression(statement, indent, context)
            elif kind in _JUMPS and context != "module" and rank >= _OUTLINE:
                self.emit(indent, self.line_of(statement) if rank >= _KEY_LOGIC else _JUMPS[kind])
            elif (kind == "assert_statement" and rank >= _KEY_LOGIC) or self.typing_import(statement):
                self.emit(indent, self.line_of(statement))

    def expression(self, statement: ts.Node, indent: int, context: str) -> None:
        rank = self.rank
        inner = statement.named_child(0) if statement.named_child_count else None
        if inner is None:
            return
        if inner.type in ("assignment", "augmented_assignment"):
            if rank >= _KEY_LOGIC:
                self.emit(indent, self.line_of(statement))
                return
            left = inner.child_by_field_name("left")
            if context == "function" or left is None or left.type != "identifier" or inner.type != "assignment":
                return
            if rank < _SIGNATURES:
                self.emit(indent, _text(self.data, left))
                return
            annotation = inner.child_by_field_name("type")
            written = f"{_text(self.data, left)}: {self.line_of(annotation)}" if annotation else _text(self.data, left)
            self.emit(indent, f"{written} = ..." if inner.child_by_field_name("right") else written)
        elif inner.type == "yield" and context != "module" and rank >= _OUTLINE:
            self.emit(indent, self.line_of(statement) if rank >= _KEY_LOGIC else "yield")

    def typing_import(self, statement: ts.Node) -> bool:
        """An import of typing names, shown from TYPE_STUBS on."""
        if self.rank < _TYPE_STUBS or statement.type not in _IMPORT_STATEMENTS:
            return False
        text = _one_line(_text(self.data, statement))
        return any(f" {module}" in text for module in _TYPING_MODULES)

    def compound(self, node: ts.Node, indent: int, context: str) -> None:
        """``if``/``for``/``while``/``try``/``with``/``match`` and their clauses, headers only at STRUCTURAL_OUTLINE."""
        body = next((c for c in node.children if c.type == "block"), None)
        self.emit(indent, self.header(node, body))
        written = len(self.lines)
        if body is not None:
            if node.type == "match_statement":
                for case in body.named_children:
                    if case.type == "case_clause":
                        self.compound(case, indent + 1, context)
            else:
                self.block(body, indent + 1, context, body=False)
        if len(self.lines) == written:
            self.emit(indent + 1, "...")
        for clause in node.named_children:
            if clause.type in _CLAUSES:
                self.compound(clause, indent, context)

    def header(self, node: ts.Node, body: ts.Node | None) -> str:
        """``if x > 1:`` from KEY_LOGIC on; ``if ...:`` (no expressions) at STRUCTURAL_OUTLINE."""
        end = node.end_byte if body is None else body.start_byte
        colon = next((c for c in reversed(node.children) if c.type == ":" and c.end_byte <= end), None)
        text = _one_line(self.data[node.start_byte : colon.end_byte if colon else end].decode("utf-8", "replace"))
        if self.rank >= _KEY_LOGIC:
            return text
        words = [c.type for c in node.children[:2] if not c.is_named]
        keyword = " ".join(words[:2]) if words[:1] == ["async"] else (words[0] if words else node.type)
        return f"{keyword}:" if text.rstrip(":").strip() == keyword else f"{keyword} ...:"


def _locate(tree: ts.Tree, request: RenderRequest) -> ts.Node:
    """The node the request's span names: the whole module for the file node."""
    root = tree.root_node
    if request.span is None or request.key == "":
        return root
    start, end = request.span.start_byte, request.span.end_byte
    node = root.descendant_for_byte_range(start, end) or root
    exact: list[ts.Node] = []
    ancestor: ts.Node | None = node
    while ancestor is not None and ancestor.start_byte == start and ancestor.end_byte == end:
        exact.append(ancestor)
        ancestor = ancestor.parent
    definitions = [n for n in exact if n.type in ("decorated_definition", "function_definition", "class_definition")]
    statements = [n for n in exact if n.type != "module"]
    return (definitions or statements or [node])[-1]


def _near_complete(data: bytes, node: ts.Node) -> str:
    """The source without comments, logging calls, imports and ``__all__``; dedented for nested nodes.

    A block left with nothing keeps an ``...`` so that the text still reads as Python.
    """
    cuts: list[tuple[int, int, bytes]] = []  # (start, end, replacement)
    stack = [node]
    while stack:
        current = stack.pop()
        kept = False
        dropped: list[ts.Node] = []
        for child in current.children:
            if child.type == "comment" or child.type in _IMPORT_STATEMENTS or _boilerplate(data, child):
                dropped.append(child)
            else:
                kept = kept or child.is_named
                if child.child_count:
                    stack.append(child)
        statements = [d for d in dropped if d.type != "comment"]
        for child in dropped:
            empty = current.type == "block" and not kept and statements and child == statements[0]
            cuts.append((child.start_byte, child.end_byte, b"..." if empty else b""))
    pieces, position = [], node.start_byte
    for start, end, replacement in sorted(cuts):
        if start < position:
            continue
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", end)
        line_end = len(data) if line_end < 0 else line_end
        before = data[max(line_start, position) : start]
        if not replacement and not before.strip() and not data[end:line_end].strip():
            start, end = max(line_start, position), min(line_end + 1, node.end_byte)  # the whole line goes
        elif not replacement:
            start -= len(before) - len(before.rstrip())  # no trailing blanks where a comment was
        pieces += [data[position:start], replacement]
        position = max(position, end)
    pieces.append(data[position : node.end_byte])
    text = b"".join(pieces).decode("utf-8", errors="replace")
    return textwrap.dedent(" " * node.start_point[1] + text).rstrip() + "\n"


def _boilerplate(data: bytes, node: ts.Node) -> bool:
    """A logging call or an ``__all__`` assignment standing as a statement."""
    if node.type != "expression_statement" or not node.named_child_count:
        return False
    inner = node.named_child(0)
    if inner is None:
        return False
    if inner.type == "assignment":
        return _text(data, inner.child_by_field_name("left")) == "__all__"
    function = inner.child_by_field_name("function") if inner.type == "call" else None
    if function is None or function.type != "attribute":
        return False
    receiver = _text(data, function.child_by_field_name("object"))
    return receiver in _LOGGERS and _text(data, function.child_by_field_name("attribute")) in _LOG_METHODS


def render(request: RenderRequest) -> str:
    """The node at ``request.level`` of the uko-py map (an unknown name falls back on ``request.depth``)."""
    rank = LEVELS.index(request.level) if request.level in LEVELS else min(max(request.depth, 0), len(LEVELS) - 1)
    data = request.content
    span = request.span if request.key else None
    if rank >= _FULL:
        return (data if span is None else data[span.start_byte : span.end_byte]).decode("utf-8", errors="replace")
    tree = _parsed(data)
    node = _locate(tree, request)
    definitions = ("module", "decorated_definition", "function_definition", "class_definition")
    if rank >= _NEAR_COMPLETE:
        return _near_complete(data, node) if node.type in definitions else _text(data, node) + "\n"
    outline = _Outline(data, rank)
    if node.type == "module":
        analysis = _FileAnalyzer(SourceFile(request.path, data, ""), tree).run()
        imports = [e.name for e in analysis.entities if IMPORT in e.types]
        outline.module(node, module_name(request.path), imports)
    elif node.type in ("decorated_definition", "function_definition", "class_definition"):
        outline.definition(node, 0, target=True)
    else:  # attributes, variables, imports, docstrings: their statement on one line
        outline.emit(0, outline.line_of(node))
    return "\n".join(outline.lines) + "\n"


class PythonAnalyzer:
    name = "python"
    version = "5"

    def handles(self, path: str) -> bool:
        return path.endswith((".py", ".pyi"))

    def file_types(self, path: str) -> tuple[str, ...]:
        return (STUB_MODULE,) if path.endswith(".pyi") else (MODULE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        try:
            return _FileAnalyzer(source, _parse(source.data)).run()
        except Exception as exc:  # only the parse itself: definitions and phases are isolated inside
            return file_failure(Entity("", self.file_types(source.path), PurePosixPath(source.path).name), exc)

    def render(self, request: RenderRequest) -> str:
        return render(request)


ANALYZERS = [PythonAnalyzer()]
