"""Go: package, types, functions, methods, imports, calls and tests of one .go file (tree-sitter-go).

A package is a directory, so qualified names are built from the file's directory
("pkg/auth/token.go" -> ``pkg.auth``; a file at the root uses its package name). Imports
are named by path ("github.com/x/y" -> ``github.com.x.y``); since the module path of the
indexed repository is unknown to one file, an import of ``host/owner/repo/sub`` also
tries ``sub`` at lower confidence.
"""

from __future__ import annotations

import json
import re

import tree_sitter as ts
import tree_sitter_go

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile
from cleveragents.terms import UKO_GO
from cleveragents.vocabulary import uko, uko_code, uko_go, uko_oo

from . import _treesitter as tsu
from ._brace import (
    BraceSyntax,
    CostlyQuery,
    Entities,
    Owners,
    analyze_file,
    captured,
    descendants,
    head,
    matches,
    one_line,
    unique,
)

NAMESPACE = "go"
LANGUAGE = "go"

SIGNATURE = uko_code.signature
PARAMETERS = uko_code.hasParameters
RETURNS = uko_code.hasReturnType
VISIBILITY = uko_code.visibility
IMPORTED_NAME = uko_code.importedName
CALLS = uko_code.calls
TESTS = uko_code.testsCallable
DEPENDS_ON = uko.dependsOn
INHERITS = uko_oo.inheritsFrom
HAS_METHOD = uko_oo.hasMethod
PACKAGE_NAME = uko_go.packageName
RECEIVER = uko_go.receiverType
TAG = uko_go.structTag

SOURCE_FILE, STRUCT, INTERFACE, DEFINED_TYPE, TYPE_ALIAS = (
    UKO_GO + n for n in ("SourceFile", "Struct", "Interface", "DefinedType", "TypeAlias")
)
FUNCTION, METHOD, FIELD, CONSTANT, VARIABLE = (
    UKO_GO + n for n in ("Function", "Method", "Field", "Constant", "Variable")
)
IMPORT, TEST_CASE = uko_code.Import, uko_code.TestCase

DEFINITION = re.compile(r"\bfunc\s+(?:\([^)]*\)\s*)?\w+|\btype\s+\w+")
# Built-in functions and conversions to predeclared types: calls to them name nothing indexed.
BUILTINS = frozenset(
    (
        *("append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min"),
        *("new", "panic", "print", "println", "real", "recover", "any", "bool", "byte", "error", "rune", "string"),
        *("complex64", "complex128", "float32", "float64", "uintptr"),
        *("int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"),
    )
)
DECLARATIONS = frozenset({"type_declaration", "const_declaration", "var_declaration"})
SPECS = frozenset({"type_spec", "type_alias", "const_spec", "var_spec"})
_KEYWORD = {"type_spec": "type", "type_alias": "type", "const_spec": "const", "var_spec": "var"}
_TEST = re.compile(r"Test(?:[^a-z].*)?")
CALL_QUERY = "(call_expression function: [(identifier) (selector_expression)] @function)"


# ── names ─────────────────────────────────────────────────────────


def package_path(path: str, package: str) -> str:
    """The package's qualified name: the file's directory, dotted (the package name at the root)."""
    directory = path.rsplit("/", 1)[0] if "/" in path else ""
    return directory.replace("/", ".") if directory else package


def import_targets(path: str) -> list[tuple[str, float]]:
    """Names an import path may resolve to: the whole path, then its repository-relative part."""
    parts = [p for p in path.split("/") if p]
    targets = [(".".join(parts), 0.9)]
    if len(parts) > 3 and "." in parts[0]:
        rest = parts[3:]
        if rest and re.fullmatch(r"v\d+", rest[0]):
            rest = rest[1:]
        if rest:
            targets.append((".".join(rest), 0.7))
    return targets


def default_name(path: str) -> str:
    """The package name an import is used by when it has no alias (by convention, the last element)."""
    parts = [p for p in path.split("/") if p] or [path]
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    last = re.sub(r"\.v\d+$", "", last)
    return last.removeprefix("go-")


def base_type(node: ts.Node | None) -> ts.Node | None:
    """The named type inside pointers and instantiations (``*List[T]`` -> List)."""
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") or (node.named_children[0] if node.named_children else None)
    return node


def name_position(node: ts.Node) -> tuple[int, int]:
    """Where the name a language server resolves starts: the ``Println`` of ``fmt.Println``,
    the ``Reader`` of ``io.Reader``, a plain name itself. Tree-sitter points are (row, byte column)."""
    while node.type in ("selector_expression", "qualified_type"):
        inner = node.child_by_field_name("field") or node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return node.start_point.row, node.start_point.column


def import_position(spec: ts.Node) -> tuple[int, int] | None:
    """The last segment of an import's path, inside its string (``b`` of ``"github.com/a/b"``)."""
    literal = spec.child_by_field_name("path")
    if literal is None:
        return None
    content = next((c for c in literal.named_children if c.type.endswith("_content")), None)
    if content is None or content.start_point.row != content.end_point.row:
        return literal.start_point.row, literal.start_point.column + 1
    written = content.text or b""
    return content.start_point.row, content.start_point.column + written.rfind(b"/") + 1


def exported(name: str) -> bool:
    return bool(name) and name[0].isupper()


# ── doc comments ──────────────────────────────────────────────────


def documented(node: ts.Node) -> ts.Node:
    """The node whose preceding comments document ``node`` (a lone spec's declaration)."""
    parent = node.parent
    grouped = parent is None or parent.type not in DECLARATIONS or any(c.type == "(" for c in parent.children)
    return parent if node.type in SPECS and parent is not None and not grouped else node


def doc_comments(node: ts.Node) -> list[ts.Node]:
    """Comments on the lines directly above the node (Go doc comments)."""
    target = documented(node)
    found: list[ts.Node] = []
    line = target.start_point[0]
    sibling = target.prev_sibling
    while sibling is not None and sibling.type == "comment" and sibling.end_point[0] == line - 1:
        found.append(sibling)
        line = sibling.start_point[0]
        sibling = sibling.prev_sibling
    return found[::-1]


def doc_text(comments: list[ts.Node]) -> str:
    lines: list[str] = []
    for comment in comments:
        text = tsu.text(comment)
        if text.startswith("//"):
            body = text[2:]
            lines.append(body[1:] if body.startswith(" ") else body)
        else:
            lines += [line.strip() for line in text[2:-2].strip("\n").splitlines()]
    return "\n".join(lines).strip("\n")


# ── the syntax description the renderer uses ──────────────────────


class GoSyntax(BraceSyntax):
    language = tree_sitter_go.language
    indent = "\t"
    declaration_end = ""
    definitions = frozenset(
        {"source_file", "function_declaration", "method_declaration", "field_declaration", "method_elem", "type_elem"}
        | DECLARATIONS
        | SPECS
    )
    control = frozenset(
        {
            "if_statement",
            "for_statement",
            "expression_switch_statement",
            "type_switch_statement",
            "select_statement",
            "expression_case",
            "type_case",
            "default_case",
            "communication_case",
        }
    )
    bodies = frozenset({"block", "statement_list"})
    key = frozenset(
        {
            "return_statement",
            "assignment_statement",
            "short_var_declaration",
            "var_declaration",
            "const_declaration",
            "defer_statement",
            "go_statement",
            "break_statement",
            "continue_statement",
            "goto_statement",
        }
    )
    comments = frozenset({"comment"})
    boilerplate = frozenset({"import_declaration"})
    logging = re.compile(r"(?:log|slog|\w*[lL]ogger)\.(?:Print|Debug|Info|Warn|Error|Trace)\w*\(")
    _panics = re.compile(r"(?:panic|\w+\.Fatal\w*|log\.Panic\w*)\(")
    _cases = frozenset({"expression_case", "type_case", "default_case", "communication_case"})

    def spec_of(self, node: ts.Node) -> ts.Node:
        if node.type in DECLARATIONS:
            specs = [c for c in node.named_children if c.type in SPECS]
            if len(specs) == 1:
                return specs[0]
        return node

    def title(self, node: ts.Node, path: str) -> str:
        kind = node.type
        if kind == "source_file":
            package = next((c for c in node.named_children if c.type == "package_clause"), None)
            name = tsu.text(package.named_children[0]) if package is not None and package.named_children else ""
            return f"package {name} ({package_path(path, name)})"
        if kind == "method_declaration":
            receiver = node.child_by_field_name("receiver")
            declared = receiver.named_children[0] if receiver is not None and receiver.named_children else None
            receiver_type = tsu.field_text(declared, "type") if declared is not None else ""
            return f"func ({receiver_type}) {tsu.field_text(node, 'name')}"
        if kind == "function_declaration":
            return f"func {tsu.field_text(node, 'name')}"
        if kind in ("const_spec", "var_spec"):
            names = ", ".join(tsu.text(n) for n in node.children_by_field_name("name") if n.type == "identifier")
            return f"{_KEYWORD[kind]} {names}"
        if kind in ("type_spec", "type_alias"):
            return f"type {tsu.field_text(node, 'name')}"
        if kind == "field_declaration":
            names = [tsu.text(n) for n in node.children_by_field_name("name")]
            return f"field {', '.join(names)}" if names else f"embed {tsu.field_text(node, 'type')}"
        if kind == "method_elem":
            return f"method {tsu.field_text(node, 'name')}"
        if kind == "type_elem":
            return f"embed {one_line(tsu.text(node))}"
        return one_line(tsu.text(node), 60)

    def members(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "source_file":
            found: list[ts.Node] = []
            for child in node.named_children:
                if child.type in ("function_declaration", "method_declaration"):
                    found.append(child)
                elif child.type in DECLARATIONS:
                    found += [c for c in child.named_children if c.type in SPECS]
            return found
        if node.type == "type_spec":
            shape = node.child_by_field_name("type")
            if shape is not None and shape.type == "struct_type":
                fields = next((c for c in shape.named_children if c.type == "field_declaration_list"), None)
                return [] if fields is None else [c for c in fields.named_children if c.type == "field_declaration"]
            if shape is not None and shape.type == "interface_type":
                return [c for c in shape.named_children if c.type in ("method_elem", "type_elem")]
        return []

    def dependencies(self, node: ts.Node) -> list[str]:
        if node.type == "source_file":
            imports = (c for c in node.named_children if c.type == "import_declaration")
            specs = (d for i in imports for d in descendants(i) if d.type == "import_spec")
            return unique(tsu.text(s.child_by_field_name("path")).strip('"`') for s in specs)
        if node.type in ("function_declaration", "method_declaration"):
            callees = (tsu.text(f) for f in captured(self.language, CALL_QUERY, node))
            return unique(c for c in callees if c not in BUILTINS)
        own = tsu.field_text(node, "name")
        kinds = ("type_identifier", "qualified_type")
        shape = node.child_by_field_name("type") if node.type in ("const_spec", "var_spec") else node
        if shape is None:
            return []
        found = (d for d in descendants(shape, lambda n: n.type == "qualified_type") if d.type in kinds)
        return unique(t for t in (tsu.text(d) for d in found) if t != own and t not in BUILTINS)

    def hierarchy(self, node: ts.Node) -> list[str]:
        specs = self.members(node) if node.type == "source_file" else [node]
        relations: list[str] = []
        for spec in specs:
            if spec.type != "type_spec":
                continue
            name = tsu.field_text(spec, "name")
            relations += [f"{name} embeds {t}" for t in _embedded(spec)]
        return relations

    def docs(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "source_file":
            package = next((c for c in node.named_children if c.type == "package_clause"), None)
            return doc_comments(package) if package is not None else []
        return doc_comments(node)

    def doc_text(self, comments: list[ts.Node]) -> str:
        return doc_text(comments)

    def header(self, node: ts.Node, visible: bool) -> str:
        if node.type == "type_spec":
            shape = node.child_by_field_name("type")
            opening = (
                next((c for c in shape.children if c.type in ("{", "field_declaration_list")), None) if shape else None
            )
            if opening is not None:
                text = (node.text or b"")[: opening.start_byte - node.start_byte].decode("utf-8", errors="replace")
                return "type " + one_line(text, 400)
        body = node.child_by_field_name("body")
        if body is not None:
            text = (node.text or b"")[: body.start_byte - node.start_byte].decode("utf-8", errors="replace")
            return one_line(text, 400)
        return self.leaf(node, visible)

    def leaf(self, node: ts.Node, visible: bool) -> str:
        text = head(node, 400)
        keyword = _KEYWORD.get(node.type)
        return f"{keyword} {text}" if keyword else text

    def visibility_note(self, node: ts.Node) -> str:
        name = tsu.field_text(node, "name") if node.type != "field_declaration" else tsu.text(_field_name(node))
        if not name:
            return ""
        return "  // exported" if exported(name) else "  // unexported"

    def code_body(self, node: ts.Node) -> ts.Node | None:
        if node.type in ("function_declaration", "method_declaration"):
            return node.child_by_field_name("body")
        return None

    def preamble(self, node: ts.Node) -> list[str]:
        if node.type != "source_file":
            return []
        lines: list[str] = []
        for child in node.named_children:
            if child.type == "package_clause":
                lines.append(one_line(tsu.text(child)))
            elif child.type == "import_declaration":
                specs = (d for d in descendants(child) if d.type == "import_spec")
                lines += [f"import {one_line(tsu.text(s))}" for s in specs]
        return lines

    def branches(self, node: ts.Node) -> list[ts.Node]:
        if node.type == "if_statement":
            return [c for c in [node.child_by_field_name("consequence")] if c is not None]
        if node.type == "for_statement":
            return [c for c in [node.child_by_field_name("body")] if c is not None]
        if node.type in self._cases:
            return [c for c in node.named_children if c.type == "statement_list"]
        return [c for c in node.named_children if c.type in self._cases]

    def label(self, node: ts.Node) -> str:
        kind = node.type
        if kind == "for_statement":
            return "for …" if len(node.named_children) > 1 else "for"
        if kind in ("expression_switch_statement", "type_switch_statement"):
            return "switch …"
        if kind == "select_statement":
            return "select"
        if kind == "default_case":
            return "default:"
        if kind in self._cases:
            return "case …:"
        return "if …"

    def is_key(self, node: ts.Node) -> bool:
        if node.type == "expression_statement":
            return bool(self._panics.match(tsu.text(node)))
        return node.type in self.key


SYNTAX = GoSyntax()


def _field_name(node: ts.Node) -> ts.Node | None:
    """The first declared name of a field, or the embedded type's name."""
    names = node.children_by_field_name("name")
    if names:
        return names[0]
    named = base_type(node.child_by_field_name("type"))
    if named is not None and named.type == "qualified_type":
        return named.child_by_field_name("name")
    return named


def _embedded(spec: ts.Node) -> list[str]:
    """Types embedded in a struct or interface type spec, as written."""
    shape = spec.child_by_field_name("type")
    if shape is None:
        return []
    found: list[str] = []
    if shape.type == "struct_type":
        for field in SYNTAX.members(spec):
            if not field.children_by_field_name("name"):
                named = base_type(field.child_by_field_name("type"))
                found += [tsu.text(named)] if named is not None else []
    elif shape.type == "interface_type":
        for element in shape.named_children:
            if element.type == "type_elem" and len(element.named_children) == 1:
                named = base_type(element.named_children[0])
                if named is not None and named.type in ("type_identifier", "qualified_type"):
                    found.append(tsu.text(named))
    return found


# ── analysis ──────────────────────────────────────────────────────


class _Builder(Entities):
    def __init__(self, source: SourceFile) -> None:
        super().__init__(NAMESPACE)
        self.path = source.path
        self.test_file = source.path.endswith("_test.go")
        self.package = ""
        self.qual = ""
        self.references: list[Reference] = []
        self.problems: list[Problem] = []
        self.imports: dict[str, str] = {}  # name a file uses -> import path
        self.dot_imports: list[str] = []
        self.types: dict[str, str] = {}  # type name -> entity key
        self.methods: list[tuple[Entity, str]] = []  # method, receiver type name
        # Code whose calls belong to an entity: (start, end, (owner key, receiver name, receiver type)).
        self.bodies: list[tuple[int, int, tuple[str, str | None, str | None]]] = []
        self.embeds: list[tuple[str, ts.Node]] = []

    def documented(self, entity: Entity, node: ts.Node) -> None:
        comments = doc_comments(node)
        self.document(entity, comments, doc_text(comments))

    def named(self, key: str, types: tuple[str, ...], name: str, parent: str, node: ts.Node, qual: str) -> Entity:
        """An entity with a Go name: visibility from capitalization, docs from the comments above."""
        entity = self.add(key, types, name, parent, node, qual)
        entity.add(VISIBILITY, "public" if exported(name) else "package")
        self.documented(entity, node)
        return entity

    def run(self, root: ts.Node) -> None:
        package = next((c for c in root.named_children if c.type == "package_clause"), None)
        if package is not None and package.named_children:
            self.package = tsu.text(package.named_children[0])
        # No package clause (an empty or broken file at the root): the file's stem.
        self.qual = package_path(self.path, self.package) or self.path.rsplit("/", 1)[-1].removesuffix(".go")
        file = self.add("", (SOURCE_FILE,), self.path.rsplit("/", 1)[-1], None, None, self.qual)
        file.add(uko_code.language, LANGUAGE)
        if self.package:
            file.add(PACKAGE_NAME, self.package)
        if package is not None:
            self.documented(file, package)
        isolation = self.isolation
        for child in root.named_children:
            kind = child.type
            if kind == "import_declaration":
                with isolation.definition(child):
                    self.import_declaration(child)
            elif kind == "function_declaration":
                with isolation.definition(child):
                    self.function(child)
            elif kind == "method_declaration":
                with isolation.definition(child):
                    self.method(child)
            elif kind in DECLARATIONS:
                for spec in (c for c in child.named_children if c.type in SPECS):
                    with isolation.definition(spec):
                        self.spec(spec, child)
        with isolation.phase("resolution"):
            self.finish()
        with isolation.phase("calls"):
            try:
                self.calls(root)
            except CostlyQuery as exc:  # declarations stay; calls are lost, and said so
                self.problems.append(Problem(f"calls not collected: {exc}"))

    def import_declaration(self, node: ts.Node) -> None:
        for spec in (d for d in descendants(node) if d.type == "import_spec"):
            path = tsu.field_text(spec, "path").strip('"`')
            alias_node = spec.child_by_field_name("name")
            alias = tsu.text(alias_node) if alias_node is not None else default_name(path)
            if alias == ".":
                self.dot_imports.append(path)
            elif alias != "_":
                self.imports[alias] = path
            dotted = ".".join(p for p in path.split("/") if p)
            entity = self.add(f"import/{dotted}", (IMPORT,), alias, "", spec, None)
            entity.add(IMPORTED_NAME, path)
            line = spec.start_point[0] + 1
            targets = tuple(import_targets(path))
            self.references.append(
                Reference(entity.key, DEPENDS_ON, NAMESPACE, targets, None, line, import_position(spec))
            )

    def callable(self, entity: Entity, node: ts.Node) -> None:
        entity.add(SIGNATURE, SYNTAX.header(node, True))
        entity.add(PARAMETERS, _parameters(node.child_by_field_name("parameters")))
        result = node.child_by_field_name("result")
        if result is not None:
            entity.add(RETURNS, one_line(tsu.text(result), 400))

    def function(self, node: ts.Node) -> None:
        name = tsu.field_text(node, "name")
        entity = self.named(name, (FUNCTION,), name, "", node, f"{self.qual}.{name}")
        self.callable(entity, node)
        if self.test_file and _TEST.fullmatch(name) and _takes_testing_t(node):
            entity.types = (TEST_CASE, FUNCTION)
            self.tested(entity, name[4:].lstrip("_"), node.start_point[0] + 1)
        body = node.child_by_field_name("body")
        if body is not None:
            self.bodies.append((body.start_byte, body.end_byte, (entity.key, None, None)))

    def tested(self, test: Entity, subject: str, line: int) -> None:
        """TestXxx tests Xxx; TestT_M tests method M of T (the Go naming convention)."""
        if not subject:
            return
        candidates: list[str] = []
        if "_" in subject:
            owner, _, member = subject.partition("_")
            candidates += [f"{owner}.{member}", owner]
        else:
            candidates.append(subject)
        candidates += [c[0].lower() + c[1:] for c in candidates]
        targets = tuple((f"{self.qual}.{c}", 0.7) for c in unique(candidates))
        self.references.append(Reference(test.key, TESTS, NAMESPACE, targets, None, line))

    def method(self, node: ts.Node) -> None:
        name = tsu.field_text(node, "name")
        receiver = node.child_by_field_name("receiver")
        declared = receiver.named_children[0] if receiver is not None and receiver.named_children else None
        receiver_type = base_type(declared.child_by_field_name("type")) if declared is not None else None
        type_name = tsu.text(receiver_type) if receiver_type is not None else "?"
        key = f"{type_name}.{name}"
        entity = self.named(key, (METHOD,), name, "", node, f"{self.qual}.{key}")
        if declared is not None:
            entity.add(RECEIVER, one_line(tsu.field_text(declared, "type")))
        self.callable(entity, node)
        self.methods.append((entity, type_name))
        body = node.child_by_field_name("body")
        if body is not None:
            receiver_name = tsu.field_text(declared, "name") if declared is not None else ""
            self.bodies.append((body.start_byte, body.end_byte, (entity.key, receiver_name or None, type_name)))

    def spec(self, spec: ts.Node, declaration: ts.Node) -> None:
        lone = not any(c.type == "(" for c in declaration.children)
        where = declaration if lone else spec
        if spec.type in ("type_spec", "type_alias"):
            self.type_spec(spec, where)
            return
        kind = CONSTANT if spec.type == "const_spec" else VARIABLE
        for name_node in spec.children_by_field_name("name"):
            if name_node.type != "identifier" or tsu.text(name_node) == "_":
                continue
            name = tsu.text(name_node)
            entity = self.add(name, (kind,), name, "", where, f"{self.qual}.{name}")
            entity.add(VISIBILITY, "public" if exported(name) else "package")
            self.documented(entity, spec)
            entity.add(SIGNATURE, SYNTAX.leaf(spec, True))
            value = spec.child_by_field_name("value")
            if value is not None:
                self.bodies.append((value.start_byte, value.end_byte, (entity.key, None, None)))

    def type_spec(self, spec: ts.Node, where: ts.Node) -> None:
        name = tsu.field_text(spec, "name")
        shape = spec.child_by_field_name("type")
        kind = {"struct_type": STRUCT, "interface_type": INTERFACE}.get(shape.type if shape else "", DEFINED_TYPE)
        if spec.type == "type_alias":
            kind = TYPE_ALIAS
        entity = self.add(name, (kind,), name, "", where, f"{self.qual}.{name}")
        entity.add(VISIBILITY, "public" if exported(name) else "package")
        self.documented(entity, spec)
        entity.add(SIGNATURE, SYNTAX.header(spec, True))
        self.types.setdefault(name, entity.key)
        for embedded in _embedded(spec):
            self.embeds.append((entity.key, _embedded_node(spec, embedded)))
        for member in SYNTAX.members(spec):
            if member.type == "field_declaration":
                self.field(entity, member)
            elif member.type == "method_elem":
                method = tsu.field_text(member, "name")
                m = self.named(
                    f"{name}.{method}", (METHOD,), method, entity.key, member, f"{self.qual}.{name}.{method}"
                )
                self.callable(m, member)
                entity.links.append((HAS_METHOD, m.key))

    def field(self, owner: Entity, node: ts.Node) -> None:
        names = [tsu.text(n) for n in node.children_by_field_name("name")]
        if not names:
            embedded = _field_name(node)
            names = [tsu.text(embedded)] if embedded is not None else []
        tag = node.child_by_field_name("tag")
        for name in names:
            key = f"{owner.key}.{name}"
            entity = self.named(key, (FIELD,), name, owner.key, node, f"{self.qual}.{key}")
            entity.add(SIGNATURE, one_line(tsu.text(node), 400))
            if tag is not None:
                entity.add(TAG, tsu.text(tag)[1:-1])

    # ── calls, after every import and type of the file is known ──
    def type_targets(self, node: ts.Node) -> list[tuple[str, float]]:
        if node.type == "qualified_type":
            package = tsu.field_text(node, "package")
            name = tsu.field_text(node, "name")
            path = self.imports.get(package)
            return [(f"{t}.{name}", c) for t, c in import_targets(path)] if path else []
        name = tsu.text(node)
        return [] if name in BUILTINS else [(f"{self.qual}.{name}", 0.9)]

    def finish(self) -> None:
        by_key = {e.key: e for e in self.entities}
        for method, type_name in self.methods:
            if type_name in self.types:
                method.parent = self.types[type_name]
                by_key[self.types[type_name]].links.append((HAS_METHOD, method.key))
        for source, node in self.embeds:
            targets = self.type_targets(node)
            if targets:
                at = name_position(node) if node.type in ("type_identifier", "qualified_type") else None
                self.references.append(
                    Reference(source, INHERITS, NAMESPACE, tuple(targets), None, node.start_point[0] + 1, at)
                )

    def calls(self, root: ts.Node) -> None:
        """Every call in a body, from one query, resolved by how its callee is named."""
        owners = Owners(self.bodies)
        seen: set[tuple[str, str]] = set()
        for _, nodes in matches(tree_sitter_go.language, CALL_QUERY, root):
            function = nodes["function"][0]
            found = owners.at(function.start_byte)
            if found is None:
                continue
            owner, receiver, receiver_type = found
            text = tsu.text(function)
            if (owner, text) in seen:
                continue
            seen.add((owner, text))
            targets: list[tuple[str, float]] = []
            if function.type == "identifier" and text not in BUILTINS:
                targets = [(f"{self.qual}.{text}", 0.9)]
                targets += [(f"{t}.{text}", 0.7) for path in self.dot_imports for t, _ in import_targets(path)]
            elif function.type == "selector_expression":
                operand = function.child_by_field_name("operand")
                member = tsu.field_text(function, "field")
                base = tsu.text(operand) if operand is not None and operand.type == "identifier" else ""
                if base and base == receiver:
                    targets = [(f"{self.qual}.{receiver_type}.{member}", 0.8)]
                elif base in self.imports:
                    targets = [(f"{t}.{member}", c) for t, c in import_targets(self.imports[base])]
                elif base in self.types:
                    targets = [(f"{self.qual}.{base}.{member}", 0.9)]
            if targets:
                line = function.start_point[0] + 1
                at = name_position(function)
                self.references.append(Reference(owner, CALLS, NAMESPACE, tuple(targets), None, line, at))


def _embedded_node(spec: ts.Node, written: str) -> ts.Node:
    """The type node of an embedded type named ``written`` in a struct or interface spec."""
    shape = spec.child_by_field_name("type")
    for node in descendants(shape) if shape is not None else []:
        if node.type in ("type_identifier", "qualified_type") and tsu.text(node) == written:
            return node
    return spec


def _takes_testing_t(node: ts.Node) -> bool:
    parameters = node.child_by_field_name("parameters")
    declared = [p for p in parameters.named_children if p.type == "parameter_declaration"] if parameters else []
    return len(declared) == 1 and one_line(tsu.field_text(declared[0], "type")) == "*testing.T"


def _parameters(parameters: ts.Node | None) -> str:
    found: list[dict[str, str | None]] = []
    for p in parameters.named_children if parameters is not None else []:
        if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
            continue
        kind = "variadic" if p.type == "variadic_parameter_declaration" else "positional"
        written = one_line(tsu.field_text(p, "type"))
        names = [tsu.text(n) for n in p.children_by_field_name("name")] or [""]
        found += [{"name": n, "type": written, "default": None, "kind": kind} for n in names]
    return json.dumps(found)


class GoAnalyzer:
    name = "go"
    version = "2"

    def handles(self, path: str) -> bool:
        return path.endswith(".go")

    def file_types(self, path: str) -> tuple[str, ...]:
        return (SOURCE_FILE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        builder = _Builder(source)
        return analyze_file(source, tree_sitter_go.language, builder, (SOURCE_FILE,), DEFINITION, ("comment",))

    def render(self, request: RenderRequest) -> str:
        return SYNTAX.render(request)


ANALYZERS = [GoAnalyzer()]
