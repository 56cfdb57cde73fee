"""Rust: modules, items, impl blocks, uses, calls and tests of one .rs file (tree-sitter-rust).

Module paths come from the file's place under the crate's ``src/`` ("src/a/b.rs" is
``crate.a.b``); an analyzer sees one file, so the crate's real name is unknown and
``crate`` stands for it. When the directory holding ``src/`` looks like a crate name, the
symbols are also published under it, so ``other_crate::x`` from elsewhere can resolve.

An iterative walk over the declarations builds the entities; one query over the tree finds
the calls, ``use``s and local items inside bodies. Names are resolved at the end, when every
``use`` and item of each module is known (Rust allows using an item before its declaration).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

import tree_sitter as ts
import tree_sitter_rust

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile
from cleveragents.terms import UKO_CODE, UKO_RS
from cleveragents.vocabulary import uko, uko_code, uko_oo, uko_rs

from . import _treesitter as tsu
from ._brace import (
    DOCSTRING,
    QUALIFIED_NAME,
    BraceSyntax,
    CostlyQuery,
    Entities,
    Owners,
    analyze_file,
    captured,
    descendants,
    matches,
    one_line,
    slice_text,
    unique,
)

NAMESPACE = "rust"
LANGUAGE = "rust"

SIGNATURE = uko_code.signature
PARAMETERS = uko_code.hasParameters
RETURNS = uko_code.hasReturnType
VISIBILITY = uko_code.visibility
MODIFIERS = uko_code.modifiers
DECORATOR = uko_code.hasDecorator
IMPORTED_NAME = uko_code.importedName
CALLS = uko_code.calls
TESTS = uko_code.testsCallable
DEPENDS_ON = uko.dependsOn
IMPLEMENTS = uko_oo.implements
INHERITS = uko_oo.inheritsFrom
HAS_METHOD = uko_oo.hasMethod
IMPL_FOR = uko_rs.implFor
LIFETIMES = uko_rs.lifetimeParameters
BOUNDS = uko_rs.traitBounds

CRATE, MODULE, STRUCT, ENUM, TRAIT, IMPL = (UKO_RS + n for n in ("Crate", "Module", "Struct", "Enum", "Trait", "Impl"))
FUNCTION, METHOD, MACRO, VARIANT = (UKO_RS + n for n in ("Function", "Method", "Macro", "Variant"))
FIELD, VARIABLE, TYPE_ALIAS = (UKO_CODE + n for n in ("Field", "Variable", "TypeAlias"))
IMPORT, TEST_CASE = uko_code.Import, uko_code.TestCase

DEFINITION = re.compile(r"\b(?:fn|struct|enum|union|trait|impl|mod|type|const|static|macro_rules!)\s+\w+")
_TYPE_ITEMS = frozenset({"struct_item", "union_item", "enum_item", "trait_item", "type_item"})
ITEMS = frozenset(
    {
        "function_item",
        "function_signature_item",
        "struct_item",
        "union_item",
        "enum_item",
        "trait_item",
        "impl_item",
        "type_item",
        "associated_type",
        "const_item",
        "static_item",
        "mod_item",
        "macro_definition",
        "foreign_mod_item",
    }
)
COMMENTS = frozenset({"line_comment", "block_comment"})
# Code in bodies: callees, calls in macro arguments, ``use`` in blocks, items local to a body.
# (``(block (use_declaration))`` would say "in blocks" but costs four times the whole query.)
CODE_QUERY = """
(call_expression function: (_) @function)
(token_tree (identifier) @name . (token_tree) @arguments)
(use_declaration) @use
[(function_item) (struct_item) (union_item) (enum_item) (trait_item) (impl_item) (mod_item)
 (type_item) (const_item) (static_item) (macro_definition)] @item
"""
# Callees named by a path (``f``, ``a::b::f``, ``f::<T>``) or called on ``self``.
CALLEES = """
(call_expression function: [(identifier) (scoped_identifier) (generic_function)] @callee)
(call_expression function: (field_expression value: (self)) @callee)
"""
# Constructors and functions of the prelude: calls to them are not worth a bare-name guess.
PRELUDE_CALLS = frozenset({"Some", "Ok", "Err", "drop", "Box", "Vec", "String"})
_GENERICS = re.compile(r"<[^<>]*>")


# ── paths ─────────────────────────────────────────────────────────


def module_path(path: str) -> tuple[str, str | None]:
    """The module's dotted path (``crate.a.b``) and the crate-name alias guessed from the directory."""
    parts = path.split("/")
    dirs = parts[:-1]
    alias = None
    if "src" in dirs:
        at = len(dirs) - 1 - dirs[::-1].index("src")
        rel = parts[at + 1 :]
        if at > 0:
            guess = re.sub(r"-\d[\w.+-]*$", "", dirs[at - 1]).replace("-", "_")
            alias = guess if guess.isidentifier() and guess != "crate" else None
    else:
        rel = parts
    stem = rel[-1].removesuffix(".rs")
    mods = [*rel[:-1], stem] if stem != "mod" else rel[:-1]
    if len(rel) == 1 and stem in ("lib", "main"):
        mods = []
    return ".".join(["crate", *mods]), alias


def file_types(path: str) -> tuple[str, ...]:
    """A crate root (src/lib.rs, src/main.rs) is the crate and its root module."""
    return (CRATE, MODULE) if module_path(path)[0] == "crate" else (MODULE,)


def segments(node: ts.Node | None) -> list[str]:
    """The segments of a path as written (``a::b::<T>::c`` -> a, b, c); [] for non-paths."""
    flat = re.sub(r"\s+", "", tsu.text(node))
    while "<" in flat and _GENERICS.search(flat):
        flat = _GENERICS.sub("", flat)
    parts = [p for p in flat.split("::") if p]
    return parts if parts and all(p.isidentifier() for p in parts) else []


_WRAPPERS = {
    "generic_type": "type",
    "reference_type": "type",
    "pointer_type": "type",
    "generic_function": "function",
    "scoped_identifier": "name",
    "scoped_type_identifier": "name",
    "field_expression": "field",
}


def name_position(node: ts.Node) -> tuple[int, int]:
    """Where the last name of a path or type starts (``f`` of ``a::b::f::<T>``, ``Base`` of
    ``&mut m::Base<T>``): what a language server resolves. Tree-sitter points are (row, byte column)."""
    while (field_name := _WRAPPERS.get(node.type)) is not None:
        inner = node.child_by_field_name(field_name)
        if inner is None:
            break
        node = inner
    return node.start_point.row, node.start_point.column


def _use_position(node: ts.Node, prefix_at: tuple[int, int] | None) -> tuple[int, int] | None:
    """The last name of a used path; for ``a::b::self`` or ``{self}`` the module's (``b``)."""
    if node.type == "self":
        return prefix_at
    if node.type == "scoped_identifier" and tsu.field_text(node, "name") == "self":
        path = node.child_by_field_name("path")
        return name_position(path) if path is not None else prefix_at
    return name_position(node)


def type_path(node: ts.Node | None) -> list[str]:
    """The path of the named type in a type expression (``&mut Vec<T>`` -> Vec)."""
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type"):
        node = node.child_by_field_name("type")
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier", "identifier"):
        return []
    return segments(node)


# ── doc comments and attributes ───────────────────────────────────


def _doc_marker(node: ts.Node) -> str | None:
    """'outer' for ///, /** */; 'inner' for //!, /*! */; None for plain comments."""
    if node.type not in COMMENTS:
        return None
    for marker in ("outer", "inner"):
        if node.child_by_field_name(marker) is not None:
            return marker
    return None


def preface(node: ts.Node) -> tuple[list[ts.Node], list[ts.Node]]:
    """The outer doc comments and attribute items written before an item, in source order."""
    docs: list[ts.Node] = []
    attributes: list[ts.Node] = []
    sibling = node.prev_sibling
    while sibling is not None and sibling.type in ("attribute_item", *COMMENTS):
        if sibling.type == "attribute_item":
            attributes.append(sibling)
        elif _doc_marker(sibling) == "outer":
            docs.append(sibling)
        elif _doc_marker(sibling) == "inner":
            break
        sibling = sibling.prev_sibling
    return docs[::-1], attributes[::-1]


def doc_text(comments: list[ts.Node]) -> str:
    lines: list[str] = []
    for comment in comments:
        body = tsu.text(comment.child_by_field_name("doc"))
        for line in body.splitlines():
            line = line.strip() if comment.type == "block_comment" else line.rstrip()
            lines.append(line[1:] if line.startswith(" ") else line)
    return "\n".join(lines).strip("\n")


def attribute_text(item: ts.Node) -> str:
    """'derive(Debug)' for ``#[derive(Debug)]``."""
    inner = next((c for c in item.named_children if c.type == "attribute"), None)
    return one_line(tsu.text(inner), 200)


def _is_test_attribute(text: str) -> bool:
    name = text.split("(", 1)[0].strip()
    return name == "test" or name.endswith("::test") or name in ("rstest", "test_case")


# ── the syntax description the renderer uses ──────────────────────


_LABELS = {
    "if_expression": "if …",
    "for_expression": "for …",
    "while_expression": "while …",
    "loop_expression": "loop",
    "match_expression": "match …",
    "unsafe_block": "unsafe",
    "async_block": "async",
}
_KINDS = {
    "function_item": "fn",
    "function_signature_item": "fn",
    "struct_item": "struct",
    "union_item": "union",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type",
    "associated_type": "type",
    "const_item": "const",
    "static_item": "static",
    "mod_item": "mod",
    "macro_definition": "macro_rules!",
    "foreign_mod_item": "extern",
    "field_declaration": "field",
    "enum_variant": "variant",
}


class RustSyntax(BraceSyntax):
    language = tree_sitter_rust.language
    definitions = ITEMS | {"field_declaration", "enum_variant", "source_file"}
    control = frozenset(
        {
            "if_expression",
            "for_expression",
            "while_expression",
            "loop_expression",
            "match_expression",
            "match_arm",
            "unsafe_block",
            "async_block",
        }
    )
    bodies = frozenset({"block", "match_block"})
    key = frozenset(
        {
            "return_expression",
            "let_declaration",
            "assignment_expression",
            "compound_assignment_expr",
            "break_expression",
            "continue_expression",
        }
    )
    comments = COMMENTS
    boilerplate = frozenset({"use_declaration", "extern_crate_declaration"})
    # Diagnostics, not program output: println! stays.
    logging = re.compile(r"(?:eprintln|eprint|dbg|(?:log::|tracing::)?(?:trace|debug|info|warn|error))!")
    _assertions = re.compile(r"(?:debug_)?assert(?:_eq|_ne)?|panic|unreachable|todo|unimplemented|bail|ensure")

    def title(self, node: ts.Node, path: str) -> str:
        if node.type == "source_file":
            return f"mod {module_path(path)[0]}"
        if node.type == "impl_item":
            return one_line(self.header(node, False))
        name = tsu.field_text(node, "name") or one_line(tsu.text(node), 40)
        return f"{_KINDS.get(node.type, node.type)} {name}"

    def members(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "source_file":
            return [c for c in node.named_children if c.type in ITEMS]
        body = node.child_by_field_name("body")
        if body is None:
            return []
        if body.type == "declaration_list":
            return [c for c in body.named_children if c.type in ITEMS]
        if body.type in ("field_declaration_list", "enum_variant_list") and node.type != "enum_variant":
            return [c for c in body.named_children if c.type in ("field_declaration", "enum_variant")]
        return []

    def dependencies(self, node: ts.Node) -> list[str]:
        if node.type in ("source_file", "mod_item"):
            scope = node if node.type == "source_file" else node.child_by_field_name("body")
            if scope is None:
                return []
            uses = [c for c in scope.named_children if c.type in self.boilerplate]
            return unique(
                one_line(tsu.text(u.child_by_field_name("argument") or u.child_by_field_name("name"))) for u in uses
            )
        if node.type in ("function_item", "const_item", "static_item"):
            callees = (one_line(tsu.text(f), 80) for f in captured(self.language, CALLEES, node))
            return unique(c for c in callees if c not in PRELUDE_CALLS)
        if node.type == "impl_item":
            return unique([tsu.field_text(node, "trait"), tsu.field_text(node, "type")])
        kinds = ("type_identifier", "scoped_type_identifier")
        own = tsu.field_text(node, "name")
        return unique(tsu.text(d) for d in descendants(node) if d.type in kinds and tsu.text(d) != own)

    def hierarchy(self, node: ts.Node) -> list[str]:
        root = node
        while root.parent is not None:
            root = root.parent
        name = tsu.field_text(node, "name")
        relations: list[str] = []
        for item in descendants(root, lambda n: n.type not in ("source_file", "mod_item", "declaration_list")):
            if item.type == "trait_item" and (bounds := item.child_by_field_name("bounds")) is not None:
                if node.type in ("source_file", "mod_item") or item == node:
                    trait = tsu.field_text(item, "name")
                    relations += [f"{trait} extends {tsu.text(b)}" for b in bounds.named_children]
            elif item.type == "impl_item" and item.child_by_field_name("trait") is not None:
                trait, target = tsu.field_text(item, "trait"), tsu.field_text(item, "type")
                base = type_path(item.child_by_field_name("type"))
                mine = (
                    node.type in ("source_file", "mod_item")
                    or item == node
                    or (base[-1:] == [name] and node.type in _TYPE_ITEMS - {"trait_item"})
                    or (node.type == "trait_item" and segments(item.child_by_field_name("trait"))[-1:] == [name])
                )
                if mine:
                    relations.append(f"{one_line(target)} implements {one_line(trait)}")
        return relations

    def docs(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "source_file":
            return [c for c in node.named_children if _doc_marker(c) == "inner"]
        return preface(node)[0]

    def doc_text(self, comments: list[ts.Node]) -> str:
        return doc_text(comments)

    def decorations(self, node: ts.Node) -> list[str]:
        return [one_line(tsu.text(a), 200) for a in preface(node)[1]]

    def header(self, node: ts.Node, visible: bool) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None and body.type != "ordered_field_declaration_list" else node.end_byte
        return one_line(self._text(node, end, visible), 400).rstrip(";").rstrip()

    def leaf(self, node: ts.Node, visible: bool) -> str:
        text = one_line(self._text(node, node.end_byte, visible), 400)
        if node.type in ("macro_definition",):
            return f"macro_rules! {tsu.field_text(node, 'name')} {{ … }}"
        if node.type in ("field_declaration", "enum_variant"):
            return text + ","
        return text

    def _text(self, node: ts.Node, end: int, visible: bool) -> str:
        """The node's text up to ``end``, without visibility modifiers unless ``visible``."""
        data = node.text or b""
        skip: list[tuple[int, int]] = []
        if not visible:
            for child in node.children:
                if child.start_byte >= end:
                    break
                if child.type == "visibility_modifier":
                    skip.append((child.start_byte - node.start_byte, child.end_byte - node.start_byte))
        return slice_text(data, 0, end - node.start_byte, skip)

    def code_body(self, node: ts.Node) -> ts.Node | None:
        return node.child_by_field_name("body") if node.type == "function_item" else None

    def preamble(self, node: ts.Node) -> list[str]:
        scope = node if node.type == "source_file" else None
        if node.type == "mod_item":
            scope = node.child_by_field_name("body")
        if scope is None:
            return []
        return [one_line(tsu.text(c), 400) for c in scope.named_children if c.type in self.boilerplate]

    def branches(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "if_expression":
            return [c for c in [node.child_by_field_name("consequence")] if c is not None]
        if node.type == "match_expression":
            body = node.child_by_field_name("body")
            return [] if body is None else [c for c in body.named_children if c.type == "match_arm"]
        if node.type == "match_arm":
            return [c for c in [node.child_by_field_name("value")] if c is not None]
        if node.type in ("unsafe_block", "async_block"):
            return node.named_children
        return [c for c in [node.child_by_field_name("body")] if c is not None]

    def label(self, node: ts.Node) -> str:
        if node.type == "match_arm":
            return one_line(tsu.field_text(node, "pattern")) + " =>"
        return _LABELS[node.type]

    def is_key(self, node: ts.Node) -> bool:
        if node.type in self.key:
            return True
        if node.type == "macro_invocation":
            return bool(self._assertions.fullmatch(tsu.field_text(node, "macro").split("::")[-1]))
        # A block's tail expression is its value (the function's result), as is a match arm's.
        parent = node.parent
        if parent is not None and parent.type == "match_arm":
            return node.type != "block" and parent.child_by_field_name("value") == node
        return (
            parent is not None
            and parent.type == "block"
            and node.next_sibling is not None
            and node.next_sibling.type == "}"
            and node.type not in ("expression_statement", "let_declaration", *ITEMS, *COMMENTS)
            and not node.type.endswith("_item")
        )


SYNTAX = RustSyntax()


# ── analysis ──────────────────────────────────────────────────────


@dataclass(eq=False)
class _Scope:
    """A module: the file or an inline ``mod``."""

    qual: str
    key: str
    prefix: str  # key prefix of the items inside ("" or "inner.")
    parent: _Scope | None
    test: bool = False
    uses: dict[str, list[str]] = field(default_factory=dict)  # visible name -> path as written
    globs: list[list[str]] = field(default_factory=list)
    items: set[str] = field(default_factory=set)
    types: dict[str, str] = field(default_factory=dict)  # type name -> entity key
    inner_docs: list[ts.Node] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Ctx:
    scope: _Scope
    parent: str  # key of the entity that contains what is found here
    owner: str | None = None  # entity calls are attributed to
    self_type: str | None = None  # what ``Self`` names inside an impl or trait
    public_members: bool = False  # trait items and trait-impl items are as visible as the trait
    test: bool = False  # the owner is a test


@dataclass(frozen=True, slots=True)
class _Call:
    owner: str
    scope: _Scope
    path: tuple[str, ...]
    self_type: str | None
    method: bool  # ``self.m()``
    line: int
    test: bool
    at: tuple[int, int] | None = None  # the callee's name, for a language server


@dataclass(slots=True)
class _Impl:
    entity: Entity
    scope: _Scope
    type_path: list[str]
    trait_path: list[str]
    methods: list[Entity]
    line: int
    node: ts.Node
    type_at: tuple[int, int] | None = None  # the implementing type's name, for a language server
    trait_at: tuple[int, int] | None = None  # the trait's name


class _Builder(Entities):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(NAMESPACE)
        self.path = source.path
        self.qual, self.alias = module_path(source.path)
        self.references: list[Reference] = []
        self.problems: list[Problem] = []
        self.calls: list[_Call] = []
        self.impls: dict[str, _Impl] = {}  # impl entity key -> impl
        self.supertraits: list[tuple[Entity, _Scope, list[str], int, tuple[int, int]]] = []
        # (import entity, scope, path as written, glob, position of the path's last name)
        self.imports: list[tuple[Entity, _Scope, list[str], bool, tuple[int, int] | None]] = []
        self.scopes: list[_Scope] = []
        self.handlers = {
            "function_item": self.function,
            "function_signature_item": self.function,
            "struct_item": self.struct,
            "union_item": self.struct,
            "enum_item": self.enum,
            "trait_item": self.trait,
            "impl_item": self.impl,
            "type_item": self.simple,
            "associated_type": self.simple,
            "const_item": self.simple,
            "static_item": self.simple,
            "macro_definition": self.simple,
            "mod_item": self.module,
            "foreign_mod_item": self.foreign,
            "use_declaration": self.use,
            "extern_crate_declaration": self.extern_crate,
            "line_comment": self.comment,
            "block_comment": self.comment,
            "ERROR": lambda node, ctx: [(c, ctx) for c in node.named_children],  # items a syntax error wraps
        }
        self.bodies: list[tuple[int, int, _Ctx]] = []  # code whose calls belong to an entity

    def symbols(self, qual: str) -> tuple[tuple[str, str], ...]:
        found = [(NAMESPACE, qual)]
        if self.alias:
            found.append((NAMESPACE, self.alias + qual.removeprefix("crate")))
        return tuple(found)

    def decorate(self, entity: Entity, node: ts.Node, ctx: _Ctx) -> list[str]:
        """Docs, attributes, visibility; returns the attribute texts."""
        docs, attributes = preface(node)
        self.document(entity, docs, doc_text(docs))
        texts = [attribute_text(a) for a in attributes]
        for text in texts:
            entity.add(DECORATOR, text)
        visibility = next((c for c in node.children if c.type == "visibility_modifier"), None)
        if visibility is not None:
            written = one_line(tsu.text(visibility))
            entity.add(VISIBILITY, "public" if written == "pub" else written)
        else:
            entity.add(VISIBILITY, "public" if ctx.public_members else "private")
        return texts

    # ── the walk ──
    def run(self, root: ts.Node) -> None:
        file_scope = _Scope(self.qual, "", "", None)
        self.scopes.append(file_scope)
        types = file_types(self.path)
        entity = self.add("", types, self.path.rsplit("/", 1)[-1], None, None, self.qual)
        entity.add(uko_code.language, LANGUAGE)
        self.walk([(c, _Ctx(file_scope, "")) for c in root.named_children])
        with self.isolation.phase("calls"):
            try:
                self.code(root)
            except CostlyQuery as exc:  # declarations stay; calls are lost, and said so
                self.problems.append(Problem(f"calls not collected: {exc}"))
        with self.isolation.phase("resolution"):
            self.finish()

    def walk(self, found: list[tuple[ts.Node, _Ctx]]) -> None:
        """The declarations: items and their members, not the code in bodies (see ``code``)."""
        stack = found[::-1]
        handlers = self.handlers
        while stack:
            node, ctx = stack.pop()
            handler = handlers.get(node.type)
            if handler is not None:
                with self.isolation.definition(node):
                    stack.extend(reversed(handler(node, ctx)))

    def code(self, root: ts.Node) -> None:
        """Calls, uses and items inside bodies, from one query, each given to its innermost body."""
        owners = Owners(self.bodies)
        for pattern, nodes in matches(tree_sitter_rust.language, CODE_QUERY, root):
            first = min((n for found in nodes.values() for n in found), key=lambda n: n.start_byte)
            ctx = owners.at(first.start_byte)
            if ctx is None or (pattern >= 2 and (first.parent is None or first.parent.type != "block")):
                continue
            if pattern == 0:
                self.call(nodes["function"][0], ctx)
            elif pattern == 1:
                self.macro_call(nodes["name"][0], nodes["arguments"][0], ctx)
            elif pattern == 2:
                self.use(nodes["use"][0], ctx)
            else:  # an item inside a body: local to it
                count = len(self.bodies)
                local = _Ctx(ctx.scope, ctx.owner or ctx.parent)
                self.walk([(nodes["item"][0], local)])
                for body in self.bodies[count:]:
                    owners.add(*body)

    def function(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        name = tsu.field_text(node, "name")
        scope = ctx.scope
        if ctx.self_type is not None and ctx.owner is None:
            key, qual, kind = f"{scope.prefix}{ctx.self_type}.{name}", f"{scope.qual}.{ctx.self_type}.{name}", METHOD
        else:
            key, qual, kind = scope.prefix + name, f"{scope.qual}.{name}", FUNCTION
            scope.items.add(name)
        entity = self.add(key, (kind,), name, ctx.parent, node, qual)
        attributes = self.decorate(entity, node, ctx)
        test = any(_is_test_attribute(a) for a in attributes)
        if test:
            entity.types = (TEST_CASE, kind)
        entity.add(SIGNATURE, SYNTAX.header(node, True))
        parameters = node.child_by_field_name("parameters")
        entity.add(PARAMETERS, _parameters(parameters))
        if (returns := node.child_by_field_name("return_type")) is not None:
            entity.add(RETURNS, one_line(tsu.text(returns), 400))
        for child in node.children:
            if child.type == "function_modifiers":
                for modifier in child.children:
                    entity.add(MODIFIERS, "extern" if modifier.type == "extern_modifier" else tsu.text(modifier))
        self.generics(entity, node)
        if kind == METHOD and ctx.parent in self.impls:
            self.impls[ctx.parent].methods.append(entity)
        body = node.child_by_field_name("body")
        if body is not None:
            self.bodies.append(
                (body.start_byte, body.end_byte, _Ctx(scope, entity.key, entity.key, ctx.self_type, False, test))
            )
        return []

    def generics(self, entity: Entity, node: ts.Node) -> None:
        params = node.child_by_field_name("type_parameters")
        if params is not None:
            lifetimes = [tsu.text(p) for p in params.named_children if p.type == "lifetime_parameter"]
            if lifetimes:
                entity.add(LIFETIMES, "<" + ", ".join(lifetimes) + ">")
        bounds = [tsu.text(c) for c in node.children if c.type == "where_clause"]
        if params is not None and any(p.child_by_field_name("bounds") for p in params.named_children):
            bounds.insert(0, tsu.text(params))
        if bounds:
            entity.add(BOUNDS, one_line(" ".join(bounds), 400))

    def type_item(self, node: ts.Node, ctx: _Ctx, kind: str) -> Entity:
        name = tsu.field_text(node, "name")
        scope = ctx.scope
        entity = self.add(scope.prefix + name, (kind,), name, ctx.parent, node, f"{scope.qual}.{name}")
        scope.items.add(name)
        scope.types.setdefault(name, entity.key)
        self.decorate(entity, node, ctx)
        entity.add(SIGNATURE, SYNTAX.header(node, True))
        self.generics(entity, node)
        return entity

    def struct(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        entity = self.type_item(node, ctx, STRUCT)
        body = node.child_by_field_name("body")
        if body is not None:
            self.fields(entity, body, ctx.scope)
        return []

    def fields(self, owner: Entity, body: ts.Node, scope: _Scope) -> None:
        owner_qual = str(owner.values[QUALIFIED_NAME][0])
        if body.type == "field_declaration_list":
            for item in body.named_children:
                if item.type == "field_declaration":
                    name = tsu.field_text(item, "name")
                    f = self.add(f"{owner.key}.{name}", (FIELD,), name, owner.key, item, f"{owner_qual}.{name}")
                    self.decorate(f, item, _Ctx(scope, owner.key))
                    f.add(SIGNATURE, one_line(tsu.text(item), 400))
        elif body.type == "ordered_field_declaration_list":
            index = 0
            for item in body.named_children:
                if item.type in COMMENTS or item.type in ("attribute_item", "visibility_modifier"):
                    continue
                name = str(index)
                self.add(f"{owner.key}.{name}", (FIELD,), name, owner.key, item, f"{owner_qual}.{name}")
                index += 1

    def enum(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        entity = self.type_item(node, ctx, ENUM)
        body = node.child_by_field_name("body")
        qual = str(entity.values[QUALIFIED_NAME][0])
        for variant in body.named_children if body is not None else []:
            if variant.type == "enum_variant":
                name = tsu.field_text(variant, "name")
                v = self.add(f"{entity.key}.{name}", (VARIANT,), name, entity.key, variant, f"{qual}.{name}")
                docs = preface(variant)[0]
                self.document(v, docs, doc_text(docs))
                v.add(SIGNATURE, one_line(tsu.text(variant), 400))
        return []

    def trait(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        entity = self.type_item(node, ctx, TRAIT)
        if any(c.type == "unsafe" for c in node.children):
            entity.add(MODIFIERS, "unsafe")
        bounds = node.child_by_field_name("bounds")
        for bound in bounds.named_children if bounds is not None else []:
            path = type_path(bound)
            if path:
                self.supertraits.append((entity, ctx.scope, path, bound.start_point[0] + 1, name_position(bound)))
        body = node.child_by_field_name("body")
        if body is None:
            return []
        inner = replace(ctx, parent=entity.key, self_type=entity.name, public_members=True)
        return [(c, inner) for c in body.named_children]

    def impl(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        scope = ctx.scope
        target = type_path(node.child_by_field_name("type"))
        trait_node = node.child_by_field_name("trait")
        trait = type_path(trait_node)
        type_name = target[-1] if target else one_line(tsu.field_text(node, "type"), 60)
        title = f"{one_line(tsu.text(trait_node), 60)} for {type_name}" if trait_node is not None else type_name
        entity = self.add(f"{scope.prefix}impl/{title}", (IMPL,), f"impl {title}", ctx.parent, node, None)
        entity.add(SIGNATURE, SYNTAX.header(node, True))
        if any(c.type == "unsafe" for c in node.children):
            entity.add(MODIFIERS, "unsafe")
        self.generics(entity, node)
        type_node = node.child_by_field_name("type")
        self.impls[entity.key] = _Impl(
            entity,
            scope,
            target,
            trait,
            [],
            node.start_point[0] + 1,
            node,
            name_position(type_node) if type_node is not None and target else None,
            name_position(trait_node) if trait_node is not None and trait else None,
        )
        body = node.child_by_field_name("body")
        if body is None:
            return []
        inner = replace(ctx, parent=entity.key, self_type=type_name, public_members=trait_node is not None)
        return [(c, inner) for c in body.named_children]

    def simple(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        """Type aliases, associated types, consts, statics and macro_rules! definitions."""
        name = tsu.field_text(node, "name")
        scope = ctx.scope
        kind = {"const_item": VARIABLE, "static_item": VARIABLE, "macro_definition": MACRO}.get(node.type, TYPE_ALIAS)
        if ctx.self_type is not None and ctx.owner is None:
            key, qual = f"{scope.prefix}{ctx.self_type}.{name}", f"{scope.qual}.{ctx.self_type}.{name}"
        else:
            key, qual = scope.prefix + name, f"{scope.qual}.{name}"
            scope.items.add(name)
        if node.type == "macro_definition" and "macro_export" in [attribute_text(a) for a in preface(node)[1]]:
            qual = f"crate.{name}"
        entity = self.add(key, (kind,), name, ctx.parent, node, qual)
        self.decorate(entity, node, ctx)
        entity.add(SIGNATURE, SYNTAX.leaf(node, True))
        if node.type == "const_item":
            entity.add(MODIFIERS, "const")
        elif node.type == "static_item":
            entity.add(MODIFIERS, "static")
            if any(c.type == "mutable_specifier" for c in node.children):
                entity.add(MODIFIERS, "mut")
        value = node.child_by_field_name("value")
        if value is not None and node.type != "macro_definition":
            self.bodies.append((value.start_byte, value.end_byte, replace(ctx, parent=entity.key, owner=entity.key)))
        return []

    def module(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        name = tsu.field_text(node, "name")
        scope = ctx.scope
        scope.items.add(name)
        body = node.child_by_field_name("body")
        if body is None:  # `mod x;`: the module is another file
            return []
        qual = f"{scope.qual}.{name}"
        entity = self.add(scope.prefix + name, (MODULE,), name, ctx.parent, node, qual)
        attributes = self.decorate(entity, node, ctx)
        entity.add(SIGNATURE, SYNTAX.header(node, True))
        test = scope.test or any(a.replace(" ", "") == "cfg(test)" for a in attributes)
        child = _Scope(qual, entity.key, entity.key + ".", scope, test)
        self.scopes.append(child)
        inner = _Ctx(child, entity.key)
        return [(c, inner) for c in body.named_children]

    def foreign(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        body = node.child_by_field_name("body")
        return [] if body is None else [(c, ctx) for c in body.named_children]

    def comment(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        if ctx.owner is None and ctx.parent == ctx.scope.key and _doc_marker(node) == "inner":
            ctx.scope.inner_docs.append(node)
        return []

    def use(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        argument = node.child_by_field_name("argument")
        if argument is None:
            return []
        scope = ctx.scope
        # (node, prefix path, position of the prefix's last name)
        stack: list[tuple[ts.Node, list[str], tuple[int, int] | None]] = [(argument, [], None)]
        while stack:
            current, prefix, prefix_at = stack.pop()
            kind = current.type
            if kind == "scoped_use_list":
                path = current.child_by_field_name("path")
                inner = prefix + (segments(path) if path is not None else [])
                inner_at = name_position(path) if path is not None and segments(path) else prefix_at
                listed = current.child_by_field_name("list")
                stack += [(c, inner, inner_at) for c in reversed(listed.named_children)] if listed is not None else []
            elif kind == "use_list":
                stack += [(c, prefix, prefix_at) for c in reversed(current.named_children)]
            elif kind == "use_wildcard":
                named = [c for c in current.named_children if segments(c)]
                path = prefix + [s for c in current.named_children for s in segments(c)]
                scope.globs.append(path)
                at = name_position(named[-1]) if named else prefix_at
                self.import_entity(node, scope, ctx, path, "*", glob=True, at=at)
            elif kind == "use_as_clause":
                written = current.child_by_field_name("path")
                path = prefix + segments(written)
                alias = tsu.field_text(current, "alias")
                if path and alias != "_":
                    scope.uses[alias] = path
                if path:
                    at = _use_position(written, prefix_at) if written is not None else prefix_at
                    self.import_entity(node, scope, ctx, path, alias, at=at)
            else:
                path = prefix + segments(current)
                if path and path[-1] == "self":
                    path = path[:-1]
                if path:
                    scope.uses[path[-1]] = path
                    self.import_entity(node, scope, ctx, path, path[-1], at=_use_position(current, prefix_at))
        return []

    def extern_crate(self, node: ts.Node, ctx: _Ctx) -> list[tuple[ts.Node, _Ctx]]:
        name_node = node.child_by_field_name("name")
        name = tsu.text(name_node)
        alias = tsu.field_text(node, "alias") or name
        ctx.scope.uses[alias] = [name]
        at = name_position(name_node) if name_node is not None else None
        self.import_entity(node, ctx.scope, ctx, [name], alias, at=at)
        return []

    def import_entity(
        self,
        node: ts.Node,
        scope: _Scope,
        ctx: _Ctx,
        path: list[str],
        name: str,
        glob: bool = False,
        at: tuple[int, int] | None = None,
    ) -> None:
        written = "::".join(path) + ("::*" if glob else "")
        target = ".".join(self.absolute(path, scope))
        entity = self.add(
            f"{scope.prefix}import/{target}{'.*' if glob else ''}", (IMPORT,), name, ctx.parent, node, None
        )
        entity.add(IMPORTED_NAME, written)
        self.imports.append((entity, scope, path, glob, at))

    def call(self, function: ts.Node, ctx: _Ctx) -> None:
        """A call expression's callee: a path, ``Self::f``, or a method of ``self``."""
        while function.type == "generic_function":
            inner = function.child_by_field_name("function")
            if inner is None:
                return
            function = inner
        line = function.start_point[0] + 1
        if function.type == "field_expression":
            value = function.child_by_field_name("value")
            if value is not None and value.type == "self" and ctx.self_type is not None:
                self.record(ctx, (tsu.field_text(function, "field"),), True, line, name_position(function))
        elif function.type in ("identifier", "scoped_identifier"):
            path = segments(function)
            if path:
                self.record(ctx, tuple(path), False, line, name_position(function))

    def macro_call(self, name: ts.Node, arguments: ts.Node, ctx: _Ctx) -> None:
        """``path(...)`` inside a macro's token tree (macro arguments are not parsed as code)."""
        if arguments.prev_sibling is None or arguments.prev_sibling.id != name.id:
            return
        if not (arguments.text or b"").startswith(b"("):
            return
        path = [tsu.text(name)]
        token = name.prev_sibling
        while token is not None and token.type == "::":
            segment = token.prev_sibling
            if segment is None or segment.type not in ("identifier", "self", "super", "crate"):
                return
            path.insert(0, tsu.text(segment))
            token = segment.prev_sibling
        before = token.type if token is not None else ""
        if before == "." and len(path) == 1:  # a method: only ``self.m(...)`` can be resolved
            receiver = token.prev_sibling if token is not None else None
            if receiver is not None and receiver.type == "self" and ctx.self_type is not None:
                self.record(ctx, tuple(path), True, name.start_point[0] + 1, name_position(name))
        elif before not in (".", "fn", "!", "'"):
            self.record(ctx, tuple(path), False, name.start_point[0] + 1, name_position(name))

    def record(self, ctx: _Ctx, path: tuple[str, ...], method: bool, line: int, at: tuple[int, int]) -> None:
        assert ctx.owner is not None
        self.calls.append(_Call(ctx.owner, ctx.scope, path, ctx.self_type, method, line, ctx.test, at))

    # ── resolution, once every module's uses and items are known ──
    def absolute(self, path: list[str], scope: _Scope) -> list[str]:
        """A path as written, made absolute (``super::x`` -> ``crate.a.x``)."""
        first = path[0]
        if first == "crate":
            return path
        if first == "self":
            return [*scope.qual.split("."), *path[1:]]
        if first == "super":
            base = scope.qual.split(".")
            rest = list(path)
            while rest and rest[0] == "super":
                base = base[:-1] if len(base) > 1 else base
                rest = rest[1:]
            return base + rest
        if first in scope.items:
            return [*scope.qual.split("."), *path]
        return path

    def resolve(self, path: list[str], scope: _Scope, self_type: str | None) -> list[tuple[str, float]]:
        if not path:
            return []
        first, rest = path[0], path[1:]
        if first == "Self":
            return [(".".join([scope.qual, self_type, *rest]), 0.8)] if self_type and rest else []
        if first in ("crate", "self", "super") or first in scope.items:
            return [(".".join(self.absolute(path, scope)), 0.9)]
        if first in scope.uses:
            return [(".".join([*self.absolute(scope.uses[first], scope), *rest]), 0.9)]
        targets = [(".".join([*self.absolute(glob, scope), *path]), 0.7) for glob in scope.globs]
        if rest:
            targets.append((".".join(path), 0.9))
        return targets

    def finish(self) -> None:
        by_key = {e.key: e for e in self.entities}
        for entity, scope, path, glob, at in self.imports:
            targets = [(".".join(self.absolute(path, scope)), 0.9)]
            if not glob and path[0] not in ("crate", "self", "super") and path[0] not in scope.items and len(path) > 1:
                targets.append((path[0], 0.5))  # an external crate: at least its root
            self.references.append(
                Reference(entity.key, DEPENDS_ON, NAMESPACE, tuple(targets), None, _line(entity), at)
            )
        for impl in self.impls.values():
            with self.isolation.definition(impl.node):
                self.link_impl(impl, by_key)
        for trait, scope, path, line, at in self.supertraits:
            targets = self.resolve(path, scope, None)
            simple = path[-1] if len(path) == 1 else None
            if targets or simple:
                self.references.append(Reference(trait.key, INHERITS, NAMESPACE, tuple(targets), simple, line, at))
        seen: set[tuple[str, str, tuple[str, ...], bool]] = set()
        for call in self.calls:
            signature = (call.owner, call.scope.qual, call.path, call.method)
            if signature in seen:
                continue
            seen.add(signature)
            if call.method:
                targets = [(f"{call.scope.qual}.{call.self_type}.{call.path[-1]}", 0.8)]
            else:
                targets = self.resolve(list(call.path), call.scope, call.self_type)
            simple = (
                call.path[0] if len(call.path) == 1 and not call.method and call.path[0] not in PRELUDE_CALLS else None
            )
            if not targets and simple is None:
                continue
            self.references.append(Reference(call.owner, CALLS, NAMESPACE, tuple(targets), simple, call.line, call.at))
            tested = [(t, 0.7) for t, _ in targets if not t.startswith(call.scope.qual + ".")]
            if call.test and tested:
                self.references.append(Reference(call.owner, TESTS, NAMESPACE, tuple(tested), None, call.line, call.at))
        for scope in self.scopes:
            owner = by_key.get(scope.key)
            if scope.inner_docs and owner is not None and DOCSTRING not in owner.values:
                self.document(owner, scope.inner_docs, doc_text(scope.inner_docs))

    def link_impl(self, impl: _Impl, by_key: dict[str, Entity]) -> None:
        scope = impl.scope
        local = scope.types.get(impl.type_path[0]) if len(impl.type_path) == 1 else None
        if not impl.type_path:
            pass  # a type that is not a path (``u8``, ``&str``, ``[A]``, ``(u8, u8)``): nothing to link to
        elif local is not None:
            impl.entity.links.append((IMPL_FOR, local))
            for method in impl.methods:
                method.parent = local
                by_key[local].links.append((HAS_METHOD, method.key))
        else:
            targets = self.resolve(impl.type_path, scope, None)
            simple = impl.type_path[-1] if len(impl.type_path) == 1 else None
            if targets or simple:
                self.references.append(
                    Reference(impl.entity.key, IMPL_FOR, NAMESPACE, tuple(targets), simple, impl.line, impl.type_at)
                )
        if impl.trait_path:
            targets = self.resolve(impl.trait_path, scope, None)
            simple = impl.trait_path[-1] if len(impl.trait_path) == 1 else None
            if targets or simple:
                source = local if local is not None else ""
                self.references.append(
                    Reference(source, IMPLEMENTS, NAMESPACE, tuple(targets), simple, impl.line, impl.trait_at)
                )


def _line(entity: Entity) -> int:
    return entity.span.start_line if entity.span else 0


def _parameters(parameters: ts.Node | None) -> str:
    found: list[dict[str, str | None]] = []
    for p in parameters.named_children if parameters is not None else []:
        if p.type == "self_parameter":
            found.append({"name": "self", "type": one_line(tsu.text(p)), "default": None, "kind": "self"})
        elif p.type == "parameter":
            name, kind = tsu.field_text(p, "pattern"), "positional"
            found.append({"name": name, "type": one_line(tsu.field_text(p, "type")), "default": None, "kind": kind})
        elif p.type == "variadic_parameter":
            name = tsu.field_text(p, "pattern")
            found.append({"name": name, "type": "...", "default": None, "kind": "variadic"})
        elif p.type not in COMMENTS and p.type != "attribute_item":
            found.append({"name": "", "type": one_line(tsu.text(p)), "default": None, "kind": "positional"})
    return json.dumps(found)


class RustAnalyzer:
    name = "rust"
    version = "2"

    def handles(self, path: str) -> bool:
        return path.endswith(".rs")

    def file_types(self, path: str) -> tuple[str, ...]:
        return file_types(path)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        builder = _Builder(source)
        types = self.file_types(source.path)
        return analyze_file(source, tree_sitter_rust.language, builder, types, DEFINITION, tuple(COMMENTS))

    def render(self, request: RenderRequest) -> str:
        return SYNTAX.render(request)


ANALYZERS = [RustAnalyzer()]
