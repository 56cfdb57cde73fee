"""Java analyzer (tree-sitter): compilation units, types, members, imports, calls, JUnit tests.

One iterative walk over the syntax tree creates the entities and records each call and
each supertype with what the walk knew at that point (enclosing member and type, the
declared types of locals). Names are resolved after the walk, when every type of the file
and every field of each class is known: code may name a nested class or a field that is
declared further down.

Keys: types ``Outer.Inner``, members ``Outer.m`` (overloads ``Outer.m~2``), constructors
``Outer.Outer``, anonymous classes ``Outer.$1`` (numbered per enclosing class, like javac),
local classes under their method (``Outer.m.Local``), Javadoc ``<owner>/doc``, imports
``import/<name>``. Anonymous and local classes get no symbol: no other file can name them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

import tree_sitter as ts
import tree_sitter_java

from cleveragents.analyzers._isolation import Isolation, file_failure
from cleveragents.analyzers._treesitter import (
    add_fingerprints,
    comment_fingerprints,
    field_text,
    parse,
    problems,
    span,
    text,
    walk,
)
from cleveragents.indexing.model import Entity, FileAnalysis, Problem, Reference, RenderRequest, SourceFile
from cleveragents.vocabulary import detail_levels, uko, uko_code, uko_java, uko_oo

NAMESPACE = "java"

COMPILATION_UNIT = uko_java.CompilationUnit
CLASS = uko_java.Class
INTERFACE = uko_java.Interface
ANNOTATION_TYPE = uko_java.AnnotationType
METHOD = uko_java.Method
CONSTRUCTOR = uko_java.Constructor
FIELD = uko_java.Field
IMPORT = uko_code.Import
DOCSTRING = uko_code.Docstring
TEST_CASE = uko_code.TestCase
TYPE_CLASSES = {
    "class_declaration": CLASS,
    "interface_declaration": INTERFACE,
    "enum_declaration": uko_java.Enum,
    "record_declaration": uko_java.Record,
    "annotation_type_declaration": ANNOTATION_TYPE,
}
TYPE_KEYWORDS = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "@interface",
}
CONSTRUCTORS = frozenset({"constructor_declaration", "compact_constructor_declaration"})
CALLABLES = CONSTRUCTORS | {"method_declaration", "annotation_type_element_declaration"}
FIELDS = frozenset({"field_declaration", "constant_declaration"})
COMMENTS = frozenset({"line_comment", "block_comment"})

QUALIFIED_NAME = uko_code.qualifiedName
LANGUAGE = uko_code.language
SIGNATURE = uko_code.signature
DOC_TEXT = uko_code.docstring
DECORATOR = uko_code.hasDecorator
VISIBILITY = uko_code.visibility
MODIFIERS = uko_code.modifiers
PARAMETERS = uko_code.hasParameters
RETURN_TYPE = uko_code.hasReturnType
IMPORTED_NAME = uko_code.importedName
PACKAGE_NAME = uko_java.packageName
HAS_METHOD = uko_oo.hasMethod
HAS_ATTRIBUTE = uko_oo.hasAttribute

CALLS = uko_code.calls
TESTS = uko_code.testsCallable
DEPENDS_ON = uko.dependsOn
IMPORTS = uko_code.imports
INHERITS = uko_oo.inheritsFrom
IMPLEMENTS = uko_oo.implements
THROWS = uko_java.throws

# Confidence of a name resolved through an import or the enclosing scope, through a
# receiver's declared type, and through a same-package / on-demand / inherited guess.
IMPORTED, RECEIVER, GUESSED = 0.9, 0.8, 0.7

ACCESS = frozenset({"public", "protected", "private"})
TEST_ANNOTATIONS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})
# FooTest, FooTests, FooIT, FooTestCase, TestFoo: the class under test is Foo.
TEST_CLASS = re.compile(r"^(?:Test(?P<pre>[A-Z][\w$]*)|(?P<post>[\w$]+?)(?:Tests?|IT|TestCase))$")
# The java.lang types code names without importing them (the common ones): they resolve to
# java.lang, never to a same-named class elsewhere by bare name.
JAVA_LANG_NAMES = """
    Object String Integer Long Short Byte Character Boolean Double Float Number Void Math StrictMath System
    Runtime Process ProcessBuilder Thread ThreadGroup ThreadLocal InheritableThreadLocal Runnable Class ClassLoader
    Enum Record Iterable Comparable CharSequence StringBuilder StringBuffer Cloneable AutoCloseable Appendable
    Readable Package Module StackTraceElement Throwable Exception RuntimeException Error AssertionError
    IllegalArgumentException IllegalStateException NullPointerException UnsupportedOperationException
    IndexOutOfBoundsException ArrayIndexOutOfBoundsException StringIndexOutOfBoundsException ClassCastException
    ArithmeticException ArrayStoreException NegativeArraySizeException NumberFormatException SecurityException
    CloneNotSupportedException InterruptedException ReflectiveOperationException ClassNotFoundException
    NoSuchMethodException NoSuchFieldException InstantiationException IllegalAccessException
    IllegalMonitorStateException LinkageError NoClassDefFoundError UnsatisfiedLinkError ExceptionInInitializerError
    OutOfMemoryError StackOverflowError VirtualMachineError InternalError Override Deprecated SuppressWarnings
    FunctionalInterface SafeVarargs"""
JAVA_LANG = frozenset(JAVA_LANG_NAMES.split())
# What a syntax error may hide: type declarations and method-like headers ('void run(...) {').
METHOD_HEADER = (
    r"(?<![\w$.])(?!(?:new|else|return|throw|case|yield)\b)[A-Za-z_$][\w$<>\[\],.?]*\s+"
    r"(?!(?:if|while|for|switch|catch|synchronized|try)\b)[A-Za-z_$][\w$]*"
    r"(?=\s*\([^()]*\)\s*(?:throws\s+[\w$.,\s]+)?\{)"
)
HIDDEN_DEFINITION = re.compile(r"\b(?:class|interface|enum|record)\s+[A-Za-z_$][\w$]*|" + METHOD_HEADER)
# A method header inside a method body: a missing '}' made the parser take the next methods for statements.
SWALLOWED_METHOD = re.compile(METHOD_HEADER.encode())
GENERIC_ARGS = re.compile(r"<[^<>]*>")
TYPE_ANNOTATION = re.compile(r"@[\w$.]+(?:\([^)]*\))?\s*")
WHITESPACE = re.compile(r"\s+")
TYPE_VARIABLE = re.compile(r"^[A-Z][0-9]?$")
DUPLICATE = re.compile(r"~\d+")  # the suffix of a repeated key
DOTTED = re.compile(r"^[\w$]+(?:\.[\w$]+)+$")
# Nodes the walk never enters: names, types, literals, comments, and parts their owner reads.
SKIP_NAMES = """
    identifier type_identifier scoped_type_identifier generic_type array_type integral_type floating_point_type
    boolean_type void_type type_arguments type_parameters dimensions modifiers formal_parameters throws superclass
    super_interfaces extends_interfaces permits string_literal character_literal decimal_integer_literal
    hex_integer_literal octal_integer_literal binary_integer_literal decimal_floating_point_literal
    hex_floating_point_literal true false null_literal line_comment block_comment"""
SKIP = frozenset(SKIP_NAMES.split())


def collapse(value: str) -> str:
    return WHITESPACE.sub(" ", value).strip()


def erase_type(name: str) -> str:
    """A type as written without type arguments, annotations or spaces: 'Map.Entry<K, V>' -> 'Map.Entry'."""
    name = TYPE_ANNOTATION.sub("", name)
    while "<" in name:
        stripped = GENERIC_ARGS.sub("", name)
        if stripped == name:
            name = name.split("<", 1)[0]
            break
        name = stripped
    return name.replace(" ", "")


def name_position(node: ts.Node) -> tuple[int, int]:
    """Where the last name of a type or qualified name starts (``Entry`` of ``Map.Entry<K, V>``,
    ``C`` of ``a.b.C``): what a language server resolves. Tree-sitter points are (row, byte column)."""
    while True:
        if node.type == "scoped_identifier":
            inner = node.child_by_field_name("name")
        elif node.type in ("scoped_type_identifier", "annotated_type"):
            inner = node.named_children[-1] if node.named_children else None
        elif node.type == "generic_type":
            inner = node.named_children[0] if node.named_children else None
        else:
            break
        if inner is None:
            break
        node = inner
    return node.start_point.row, node.start_point.column


def doc_text(comment: str) -> str:
    """A Javadoc comment without its delimiters and leading asterisks."""
    body = comment.removeprefix("/**").removesuffix("*/")
    return "\n".join(re.sub(r"^\s*\*? ?", "", line).rstrip() for line in body.splitlines()).strip()


def summary(comment: str) -> str:
    """The first sentence of a Javadoc comment (what Javadoc shows in member summaries)."""
    body = collapse(doc_text(comment))
    match = re.search(r"\.(?:\s|$)", body)
    return body[: match.start() + 1] if match else body


def javadoc(node: ts.Node) -> ts.Node | None:
    """The /** */ comment before a declaration (other comments may stand between)."""
    previous = node.prev_sibling
    while previous is not None and previous.type in COMMENTS:
        if previous.type == "block_comment" and (previous.text or b"").startswith(b"/**"):
            return previous
        previous = previous.prev_sibling
    return None


def modifiers_of(node: ts.Node) -> tuple[list[str], list[str]]:
    """(keywords as written, annotations without '@') of a declaration."""
    keywords: list[str] = []
    annotations: list[str] = []
    for child in node.children:
        if child.type == "modifiers":
            for part in child.children:
                if part.type in ("marker_annotation", "annotation"):
                    annotations.append(collapse(text(part))[1:])
                elif part.type not in COMMENTS:
                    keywords.append(text(part))
            break
    return keywords, annotations


def header(data: bytes, node: ts.Node, stop: ts.Node | None) -> str:
    """A declaration's text up to ``stop`` (its body), on one line, without a final ';'."""
    end = stop.start_byte if stop is not None else node.end_byte
    return collapse(data[node.start_byte : end].decode("utf-8", errors="replace")).removesuffix(";").rstrip()


def implied_visibility(node: ts.Node) -> str:
    """Visibility of a declaration without an access modifier, from where it stands."""
    container = node.parent
    while container is not None and container.type in (
        "class_body",
        "interface_body",
        "annotation_type_body",
        "enum_body",
        "enum_body_declarations",
    ):
        container = container.parent
    if container is not None and container.type in ("interface_declaration", "annotation_type_declaration"):
        return "public"
    if container is not None and container.type == "enum_declaration" and node.type in CONSTRUCTORS:
        return "private"
    return "package"


def parameters(node: ts.Node | None) -> list[dict[str, object]]:
    """The ``uko-code:hasParameters`` records of a formal parameter list."""
    found: list[dict[str, object]] = []
    for child in node.named_children if node is not None else ():
        if child.type == "formal_parameter":
            written = field_text(child, "type") + field_text(child, "dimensions")
            found.append({"name": field_text(child, "name"), "type": written, "default": None, "kind": "positional"})
        elif child.type == "spread_parameter":
            declarator = next((c for c in child.named_children if c.type == "variable_declarator"), None)
            written = next(
                (text(c) for c in child.named_children if c.type not in ("modifiers", "variable_declarator")), ""
            )
            name = field_text(declarator, "name") if declarator is not None else ""
            found.append({"name": name, "type": written, "default": None, "kind": "var_positional"})
    return found


@dataclass(slots=True)
class _Type:
    """What name resolution needs to know about one type declared in the file."""

    key: str
    name: str
    qname: str
    outer: _Type | None
    named: bool  # reachable by name from other files (not local, not anonymous)
    entity: Entity
    superclass: str | None = None  # as written
    supers: list[str] = field(default_factory=list)  # superclass and interfaces, as written
    fields: dict[str, str] = field(default_factory=dict)  # field name -> declared type
    type_params: frozenset[str] = frozenset()
    components: list[dict[str, object]] = field(default_factory=list)  # record components
    anonymous: int = 0  # anonymous classes numbered so far ('$1', '$2', as javac does)

    def chain(self) -> list[_Type]:
        found: list[_Type] = []
        current: _Type | None = self
        while current is not None:
            found.append(current)
            current = current.outer
        return found


class _Use(NamedTuple):
    """A call or supertype as the walk saw it; ``kind`` says how to read ``receiver``."""

    source: str
    owner: _Type
    kind: str  # plain this super typed name field dotted type new this() super() | inherits implements throws
    name: str
    receiver: str
    line: int
    at: tuple[int, int] | None = None  # the name a language server resolves (method, type, constructor)


Frame = tuple[ts.Node, _Type | None, str | None, dict[str, str]]


class _FileWalk:
    """The analysis of one file."""

    def __init__(self, source: SourceFile) -> None:
        self.data = source.data
        file_name = source.path.rsplit("/", 1)[-1]
        self.stem = file_name.removesuffix(".java")
        self.package = ""
        self.unit = Entity("", (COMPILATION_UNIT,), file_name)
        self.unit.add(LANGUAGE, "java")
        self.entities: list[Entity] = [self.unit]
        self.references: list[Reference] = []
        self.seen: set[tuple[str, str, tuple[tuple[str, float], ...]]] = set()
        self.keys: dict[str, int] = {}
        self.imports: dict[str, str] = {}  # simple name -> qualified name
        self.on_demand: list[str] = []  # packages (or types) imported with '.*'
        self.static_imports: dict[str, str] = {}  # member name -> qualified member
        self.static_on_demand: list[str] = []  # types whose static members are imported with '.*'
        self.types: dict[str, _Type] = {}
        self.by_simple: dict[str, _Type] = {}  # named types by simple name, first declared first
        self.uses: list[_Use] = []
        self.tests: list[str] = []
        self.broken: list[ts.Node] = []  # bodies of callables that hold a syntax error
        self.isolation = Isolation(self.entities)

    # ── helpers ──────────────────────────────────────────────────

    def unique(self, key: str) -> str:
        count = self.keys.get(key, 0) + 1
        self.keys[key] = count
        return key if count == 1 else f"{key}~{count}"

    def qualify(self, name: str) -> str:
        return f"{self.package}.{name}" if self.package else name

    def refer(
        self,
        source: str,
        predicate: str,
        targets: list[tuple[str, float]],
        simple: str | None,
        line: int,
        at: tuple[int, int] | None = None,
    ) -> None:
        unique = tuple(dict.fromkeys(targets))
        mark = (source, predicate, unique)
        if (unique or simple) and mark not in self.seen:
            self.seen.add(mark)
            self.references.append(Reference(source, predicate, NAMESPACE, unique, simple, line, at))

    def declare(self, entity: Entity, node: ts.Node, signature: str, *, doc: bool = True) -> list[str]:
        """Add a declaration with its modifiers, visibility, annotations, signature and Javadoc."""
        keywords, annotations = modifiers_of(node)
        for keyword in keywords:
            entity.add(MODIFIERS, keyword)
        entity.add(VISIBILITY, next((k for k in keywords if k in ACCESS), None) or implied_visibility(node))
        for annotation in annotations:
            entity.add(DECORATOR, annotation)
        entity.add(SIGNATURE, signature)
        self.entities.append(entity)
        if doc:
            self.add_doc(entity, node)
        return annotations

    def add_doc(self, owner: Entity, node: ts.Node) -> None:
        comment = javadoc(node)
        written = doc_text(text(comment)) if comment is not None else ""
        if comment is not None and written:  # an empty /** */ documents nothing
            owner.add(DOC_TEXT, written)
            self.entities.append(
                Entity(f"{owner.key}/doc", (DOCSTRING,), f"{owner.name}/doc", owner.key, span(comment))
            )

    def member_entity(self, types: tuple[str, ...], owner: _Type, name: str, node: ts.Node) -> Entity:
        key = self.unique(f"{owner.key}.{name}")
        entity = Entity(key, types, name, owner.key, span(node))
        qname = f"{owner.qname}.{name}"
        entity.add(QUALIFIED_NAME, qname)
        if owner.named:
            entity.symbols = ((NAMESPACE, qname),)
        return entity

    # ── the walk ─────────────────────────────────────────────────

    def run(self, root: ts.Node) -> None:
        # (node, innermost type, key of the entity its calls belong to, declared types of locals)
        stack: list[Frame] = [(root, None, None, {})]
        entities = self.entities
        while stack:
            node, owner, member, scope = stack.pop()
            kind = node.type
            if kind in SKIP:
                continue
            mark = len(entities)
            try:  # a failure loses this declaration (or this expression's calls), not the file
                if kind in TYPE_CLASSES:
                    declared = self.type_declaration(node, owner, member)
                    body = node.child_by_field_name("body")
                    frames: list[Frame] = [(body, declared, None, {})] if body is not None else []
                elif owner is None:
                    if kind == "package_declaration":
                        self.package_declaration(node)
                        frames = []
                    elif kind == "import_declaration":
                        self.import_declaration(node)
                        frames = []
                    else:
                        frames = [(c, None, None, scope) for c in node.named_children]
                elif member is None:
                    frames = self.member(node, owner)
                else:
                    frames = self.expression(node, owner, member, scope)
            except Exception as exc:  # any analyzer bug
                self.isolation.fail(node, exc, mark)
                continue
            stack.extend(reversed(frames))

    def package_declaration(self, node: ts.Node) -> None:
        self.package = text(
            next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        )
        self.unit.add(PACKAGE_NAME, self.package)
        self.add_doc(self.unit, node)

    def import_declaration(self, node: ts.Node) -> None:
        static = any(c.type == "static" for c in node.children)
        on_demand = any(c.type == "asterisk" for c in node.children)
        target_node = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        target = text(target_node)
        if not target or target_node is None:
            return
        written = f"{target}.*" if on_demand else target
        entity = Entity(self.unique(f"import/{written}"), (IMPORT,), written, "", span(node))
        entity.add(IMPORTED_NAME, written)
        if static:
            entity.add(MODIFIERS, "static")
        self.entities.append(entity)
        simple = target.rsplit(".", 1)[-1]
        targets = [(target, IMPORTED)]
        if static and on_demand:
            self.static_on_demand.append(target)
        elif static:
            self.static_imports[simple] = target
            targets.append((target.rsplit(".", 1)[0], IMPORTED))  # the class, when the member is not indexed
        elif on_demand:
            self.on_demand.append(target)
        else:
            self.imports[simple] = target
        # The file depends on what it imports; the import node says through which statement.
        at = name_position(target_node)
        self.refer("", DEPENDS_ON, targets, None, node.start_point[0] + 1, at)
        self.refer(entity.key, IMPORTS, targets, None, node.start_point[0] + 1, at)

    def type_declaration(self, node: ts.Node, owner: _Type | None, member: str | None) -> _Type:
        name = field_text(node, "name")
        if member is not None:  # a local class: keyed under its method, invisible to other files
            key, parent, named = self.unique(f"{member}.{name}"), member, False
        elif owner is not None:
            key, parent, named = self.unique(f"{owner.key}.{name}"), owner.key, owner.named
        else:
            key, parent, named = self.unique(name), "", True
        qname = self.qualify(DUPLICATE.sub("", key) if named else key)
        entity = Entity(key, (TYPE_CLASSES[node.type],), name, parent, span(node))
        entity.add(QUALIFIED_NAME, qname)
        if named:
            entity.symbols = ((NAMESPACE, qname),)
        params = node.child_by_field_name("type_parameters")
        variables = (
            frozenset(text(p.named_children[0]) for p in params.named_children if p.named_children)
            if params
            else frozenset()
        )
        declared = _Type(key, name, qname, owner, named, entity, type_params=variables)
        self.types[key] = declared
        if named:
            self.by_simple.setdefault(name, declared)
        self.declare(entity, node, header(self.data, node, node.child_by_field_name("body")))
        line = node.start_point[0] + 1
        superclass = node.child_by_field_name("superclass")
        if superclass is not None and superclass.named_children:
            base = superclass.named_children[0]
            declared.superclass = written = text(base)
            declared.supers.append(written)
            self.uses.append(_Use(key, declared, "inherits", "", written, line, name_position(base)))
        for child in node.children:
            if child.type in ("super_interfaces", "extends_interfaces"):
                kind = "inherits" if child.type == "extends_interfaces" else "implements"
                listed = next((c for c in child.named_children if c.type == "type_list"), child)
                for listed_node in listed.named_children:
                    written = text(listed_node)
                    declared.supers.append(written)
                    self.uses.append(_Use(key, declared, kind, "", written, line, name_position(listed_node)))
        if node.type == "record_declaration":
            self.record_components(node.child_by_field_name("parameters"), declared)
        return declared

    def record_components(self, node: ts.Node | None, owner: _Type) -> None:
        owner.components = parameters(node)
        for component, child in zip(
            owner.components,
            (c for c in node.named_children if c.type in ("formal_parameter", "spread_parameter")) if node else (),
            strict=False,
        ):
            name = str(component["name"])
            entity = self.member_entity((FIELD,), owner, name, child)
            entity.add(VISIBILITY, "private")
            entity.add(MODIFIERS, "final")
            entity.add(SIGNATURE, collapse(text(child)))
            self.entities.append(entity)
            owner.fields[name] = str(component["type"])
            owner.entity.links.append((HAS_ATTRIBUTE, entity.key))

    def member(self, node: ts.Node, owner: _Type) -> list[Frame]:
        """A node directly in a type body: members, initializers, enum constants."""
        kind = node.type
        if kind in CALLABLES:
            key, scope = self.callable(node, owner)
            body = node.child_by_field_name("body")
            return [(body, owner, key, scope)] if body is not None else []
        if kind in FIELDS:
            return [(value, owner, key, {}) for key, value in self.field_declaration(node, owner)]
        if kind == "enum_constant":
            return self.enum_constant(node, owner)
        if kind in ("static_initializer", "block"):
            return [(node, owner, owner.key, {})]
        return [(c, owner, None, {}) for c in node.named_children]

    def callable(self, node: ts.Node, owner: _Type) -> tuple[str, dict[str, str]]:
        constructor = node.type in CONSTRUCTORS
        name = owner.name if constructor else field_text(node, "name")
        entity = self.member_entity((CONSTRUCTOR,) if constructor else (METHOD,), owner, name, node)
        declared = (
            owner.components
            if node.type == "compact_constructor_declaration"
            else parameters(node.child_by_field_name("parameters"))
        )
        entity.add(PARAMETERS, json.dumps(declared))
        if not constructor:
            entity.add(RETURN_TYPE, field_text(node, "type") + field_text(node, "dimensions"))
        body = node.child_by_field_name("body")
        if body is not None and body.has_error:
            self.broken.append(body)
        annotations = self.declare(entity, node, header(self.data, node, body))
        owner.entity.links.append((HAS_METHOD, entity.key))
        junit3 = (
            any(erase_type(s).rsplit(".", 1)[-1] == "TestCase" for s in owner.supers)
            and name.startswith("test")
            and not declared
            and not constructor
        )
        if junit3 or any(a.split("(", 1)[0].rsplit(".", 1)[-1] in TEST_ANNOTATIONS for a in annotations):
            entity.types += (TEST_CASE,)
            self.tests.append(entity.key)
        line = node.start_point[0] + 1
        for child in node.children:
            if child.type == "throws":
                for thrown in child.named_children:
                    self.uses.append(_Use(entity.key, owner, "throws", "", text(thrown), line, name_position(thrown)))
        # Varargs are arrays: no receiver type to resolve through.
        scope = {str(p["name"]): str(p["type"]) if p["kind"] == "positional" else "" for p in declared}
        return entity.key, scope

    def field_declaration(self, node: ts.Node, owner: _Type) -> list[tuple[str, ts.Node]]:
        type_node = node.child_by_field_name("type")
        written = text(type_node)
        end = type_node.end_byte if type_node is not None else node.start_byte
        prefix = collapse(self.data[node.start_byte : end].decode("utf-8", errors="replace"))
        declarators = node.children_by_field_name("declarator")
        values: list[tuple[str, ts.Node]] = []
        for index, declarator in enumerate(declarators):
            name = field_text(declarator, "name")
            dims = field_text(declarator, "dimensions")
            entity = self.member_entity((FIELD,), owner, name, node if len(declarators) == 1 else declarator)
            self.declare(entity, node, f"{prefix} {name}{dims}", doc=index == 0)
            owner.entity.links.append((HAS_ATTRIBUTE, entity.key))
            owner.fields[name] = written + dims
            value = declarator.child_by_field_name("value")
            if value is not None:
                values.append((entity.key, value))
        return values

    def enum_constant(self, node: ts.Node, owner: _Type) -> list[Frame]:
        name = field_text(node, "name")
        body = node.child_by_field_name("body")
        entity = self.member_entity((FIELD,), owner, name, node)
        _, annotations = modifiers_of(node)
        entity.add(VISIBILITY, "public")
        for annotation in annotations:
            entity.add(DECORATOR, annotation)
        entity.add(SIGNATURE, header(self.data, node, body))
        self.entities.append(entity)
        self.add_doc(entity, node)
        owner.entity.links.append((HAS_ATTRIBUTE, entity.key))
        owner.fields[name] = owner.name
        frames: list[Frame] = []
        arguments = node.child_by_field_name("arguments")
        if arguments is not None:
            frames.append((arguments, owner, entity.key, {}))
        if body is not None:
            frames.append((body, self.anonymous(body, owner, entity.key, owner.name, name), None, {}))
        return frames

    def anonymous(self, body: ts.Node, owner: _Type, parent: str, supertype: str, label: str) -> _Type:
        """An anonymous class body ('new T() {...}' or an enum constant's body), numbered like javac."""
        owner.anonymous += 1
        key = self.unique(f"{owner.key}.${owner.anonymous}")
        entity = Entity(key, (CLASS,), f"<anonymous {label}>", parent, span(body))
        entity.add(QUALIFIED_NAME, self.qualify(key))
        self.entities.append(entity)
        declared = _Type(key, "", self.qualify(key), owner, False, entity, supers=[supertype])
        self.types[key] = declared
        return declared

    def expression(self, node: ts.Node, owner: _Type, member: str, scope: dict[str, str]) -> list[Frame]:
        """Calls, instantiations and local declarations inside a member; the frames to visit next."""
        kind = node.type
        line = node.start_point[0] + 1
        children = node.named_children
        if kind == "method_invocation":
            name_node = node.child_by_field_name("name")
            at = name_position(name_node) if name_node is not None else None
            self.invocation(member, owner, text(name_node), node.child_by_field_name("object"), scope, line, at)
        elif kind == "object_creation_expression":
            type_node = node.child_by_field_name("type")
            written = text(type_node)
            at = name_position(type_node) if type_node is not None else None
            self.uses.append(_Use(member, owner, "new", "", written, line, at))
            body = next((c for c in children if c.type == "class_body"), None)
            if body is not None:
                anonymous = self.anonymous(body, owner, member, written, erase_type(written))
                frames: list[Frame] = [(c, owner, member, scope) for c in children if c is not body]
                return [*frames, (body, anonymous, None, {})]
        elif kind == "method_reference" and children:
            last = node.children[-1]
            if last.type == "new":
                if children[0].type != "array_type":
                    at = name_position(children[0])
                    self.uses.append(_Use(member, owner, "new", "", text(children[0]), line, at))
            else:
                self.invocation(member, owner, text(last), children[0], scope, line, name_position(last))
        elif kind == "explicit_constructor_invocation":
            target = node.child_by_field_name("constructor")
            if target is not None and target.type in ("this", "super"):
                self.uses.append(_Use(member, owner, f"{target.type}()", "", "", line, name_position(target)))
        elif kind == "local_variable_declaration":
            written = field_text(node, "type")
            for declarator in node.children_by_field_name("declarator"):
                value = declarator.child_by_field_name("value")
                declared = written
                if written == "var":
                    declared = (
                        field_text(value, "type")
                        if value is not None and value.type == "object_creation_expression"
                        else ""
                    )
                scope[field_text(declarator, "name")] = "" if field_text(declarator, "dimensions") else declared
        elif kind in ("enhanced_for_statement", "resource", "formal_parameter"):
            name = field_text(node, "name")
            if name:
                declared = field_text(node, "type")
                scope[name] = "" if declared == "var" or field_text(node, "dimensions") else declared
        elif kind == "catch_formal_parameter":
            caught = next((c for c in children if c.type == "catch_type"), None)
            alternatives = caught.named_children if caught is not None else []
            scope[field_text(node, "name")] = text(alternatives[0]) if len(alternatives) == 1 else ""
        elif kind == "instanceof_expression" and node.child_by_field_name("name") is not None:
            scope[field_text(node, "name")] = field_text(node, "right")
        elif kind == "lambda_expression":
            params = node.child_by_field_name("parameters")
            if params is not None and params.type == "identifier":
                scope[text(params)] = ""
            elif params is not None and params.type == "inferred_parameters":
                scope.update((text(p), "") for p in params.named_children)
            elif params is not None:
                ordered = [*params.named_children, *(c for c in children if c is not params)]
                return [(c, owner, member, scope) for c in ordered]
        return [(c, owner, member, scope) for c in children]

    def invocation(
        self,
        member: str,
        owner: _Type,
        name: str,
        receiver: ts.Node | None,
        scope: dict[str, str],
        line: int,
        at: tuple[int, int] | None,
    ) -> None:
        if receiver is None:
            use = _Use(member, owner, "plain", name, "", line, at)
        elif receiver.type in ("this", "super"):
            use = _Use(member, owner, receiver.type, name, "", line, at)
        elif receiver.type == "identifier":
            variable = text(receiver)
            if variable in scope:
                if not scope[variable]:
                    return  # a local of unknown type: no guess
                use = _Use(member, owner, "typed", name, scope[variable], line, at)
            else:
                use = _Use(member, owner, "name", name, variable, line, at)
        elif receiver.type == "field_access":
            target = receiver.child_by_field_name("object")
            written = text(receiver)
            if target is not None and target.type == "this":
                use = _Use(member, owner, "field", name, field_text(receiver, "field"), line, at)
            elif DOTTED.match(written) and written.split(".", 1)[0] not in scope:
                use = _Use(member, owner, "dotted", name, written, line, at)
            else:
                return
        elif receiver.type in ("type_identifier", "scoped_type_identifier", "generic_type"):
            use = _Use(member, owner, "type", name, text(receiver), line, at)
        else:
            return  # the result of another call, an array element...: unknown
        self.uses.append(use)

    # ── resolution ───────────────────────────────────────────────

    def local_type(self, name: str, context: _Type | None) -> _Type | None:
        """A type of this file visible by simple name from ``context`` (innermost first)."""
        for scope in context.chain() if context is not None else ():
            if scope.name == name:
                return scope
            nested = self.types.get(f"{scope.key}.{name}")
            if nested is not None:
                return nested
        return self.by_simple.get(name)

    def type_targets(self, written: str, context: _Type | None) -> tuple[list[tuple[str, float]], str | None]:
        """Candidate qualified names of a type as written, and the bare-name fallback."""
        name = erase_type(written)
        if not name or "[" in name:  # arrays have no members of their own
            return [], None
        head, _, rest = name.partition(".")
        suffix = f".{rest}" if rest else ""
        if context is not None and any(head in t.type_params for t in context.chain()):
            return [], None
        if head in self.imports:
            return [(self.imports[head] + suffix, IMPORTED)], None
        local = self.local_type(head, context)
        if local is not None:
            return ([(local.qname + suffix, IMPORTED)] if local.named else []), None
        if TYPE_VARIABLE.match(head):
            return [], None
        if head[:1].islower():  # fully qualified: a package name comes first
            return ([(name, IMPORTED)] if rest and rest.rsplit(".", 1)[-1][:1].isupper() else []), None
        same_package = [(self.qualify(name), GUESSED)] if self.package or head not in JAVA_LANG else []
        if head in JAVA_LANG:
            return [*same_package, (f"java.lang.{name}", IMPORTED)], None
        return [*same_package, *((f"{p}.{name}", GUESSED) for p in self.on_demand)], name.rsplit(".", 1)[-1]

    def field_type(self, name: str, context: _Type) -> str | None:
        for scope in context.chain():
            if name in scope.fields:
                return scope.fields[name]
        return None

    def looks_like_type(self, name: str, context: _Type) -> bool:
        if name in self.imports or name in JAVA_LANG or self.local_type(name, context) is not None:
            return True
        return name[:1].isupper() and not name.isupper()

    def receiver_types(self, use: _Use) -> tuple[list[tuple[str, float]], bool] | None:
        """Candidate types of a call's receiver and whether it is an instance (None: unknown)."""
        if use.kind == "typed":
            return self.type_targets(use.receiver, use.owner)[0], True
        if use.kind in ("name", "field"):
            declared = self.field_type(use.receiver, use.owner)
            if declared is not None:
                return self.type_targets(declared, use.owner)[0], True
            if use.kind == "name" and self.looks_like_type(use.receiver, use.owner):
                return self.type_targets(use.receiver, use.owner)[0], False
            return None
        if use.kind == "dotted":
            if self.field_type(use.receiver.split(".", 1)[0], use.owner) is not None:
                return None
            return self.type_targets(use.receiver, use.owner)[0], False
        if use.kind == "type":
            return self.type_targets(use.receiver, use.owner)[0], False
        return None

    def inherited(self, scope: _Type, member: str) -> list[tuple[str, float]]:
        return [(f"{q}.{member}", GUESSED) for s in scope.supers for q, _ in self.type_targets(s, scope)[0]]

    def call_targets(self, use: _Use) -> tuple[list[tuple[str, float]], str | None]:
        owner, name = use.owner, use.name
        if use.kind == "plain":  # the innermost class that has it (own or inherited), then static imports
            targets: list[tuple[str, float]] = []
            for scope in owner.chain():
                if scope.named:
                    targets.append((f"{scope.qname}.{name}", RECEIVER))
                targets += self.inherited(scope, name)
            if name in self.static_imports:
                targets.append((self.static_imports[name], IMPORTED))
            targets += [(f"{t}.{name}", GUESSED) for t in self.static_on_demand]
            return targets, None
        if use.kind == "this":
            own = [(f"{owner.qname}.{name}", RECEIVER)] if owner.named else []
            return own + self.inherited(owner, name), None
        if use.kind == "super":
            return [(f"{q}.{name}", RECEIVER) for s in owner.supers for q, _ in self.type_targets(s, owner)[0]], None
        if use.kind == "new":
            return self.type_targets(use.receiver, owner)
        if use.kind == "this()":
            return ([(f"{owner.qname}.{owner.name}", RECEIVER)] if owner.named else []), None
        if use.kind == "super()":
            if owner.superclass is None:
                return [], None
            found = self.type_targets(owner.superclass, owner)[0]
            return [(f"{q}.{q.rsplit('.', 1)[-1]}", GUESSED) for q, _ in found], None
        resolved = self.receiver_types(use)
        if resolved is None:
            return [], None
        types, instance = resolved
        return [(f"{q}.{name}", min(c, RECEIVER) if instance else c) for q, c in types], None

    def class_under_test(self, owner: _Type) -> list[str]:
        for scope in owner.chain():
            match = TEST_CLASS.match(scope.name)
            if match:
                return [q for q, _ in self.type_targets(match.group("pre") or match.group("post"), scope)[0]]
        return []

    def tested(self, test: str, uses: list[_Use]) -> None:
        """testsCallable edges from a test to the methods of the class under test it calls."""
        if not uses:
            return
        subjects = self.class_under_test(uses[0].owner)
        if not subjects:
            return
        for use in uses:
            if use.kind == "new":
                created = {q for q, _ in self.type_targets(use.receiver, use.owner)[0]}
                targets = [(f"{q}.{q.rsplit('.', 1)[-1]}", GUESSED) for q in subjects if q in created]
            elif use.kind in ("typed", "name", "field", "dotted", "type"):
                resolved = self.receiver_types(use)
                if resolved is not None and resolved[0] and not {q for q, _ in resolved[0]} & set(subjects):
                    continue  # a call on another known type
                targets = [(f"{q}.{use.name}", GUESSED) for q in subjects]
            else:
                continue
            self.refer(test, TESTS, targets, None, use.line, use.at)

    def problems(self, tree: ts.Tree) -> list[Problem]:
        """Syntax errors, with the methods a broken body swallowed among what they hid."""
        found = problems(tree, HIDDEN_DEFINITION)
        for body in self.broken:
            nested = [(n.start_byte, n.end_byte) for n in walk(body) if n.type == "class_body"]
            hidden = tuple(
                match.group(0).decode("utf-8", errors="replace")
                for match in SWALLOWED_METHOD.finditer(self.data, body.start_byte, body.end_byte)
                if not any(start <= match.start() < end for start, end in nested)
            )
            if not hidden:
                continue
            inside = next(
                (i for i, p in enumerate(found) if p.span and body.start_byte <= p.span.start_byte < body.end_byte),
                None,
            )
            if inside is None:
                found.append(Problem("syntax error", span(body), hidden))
            else:
                problem = found[inside]
                found[inside] = Problem(problem.message, problem.span, tuple(dict.fromkeys(problem.hidden + hidden)))
        return found

    def finish(self) -> None:
        tests: dict[str, list[_Use]] = {key: [] for key in self.tests}
        for use in self.uses:
            if use.kind in ("inherits", "implements", "throws"):
                predicate = {"inherits": INHERITS, "implements": IMPLEMENTS, "throws": THROWS}[use.kind]
                self.refer(use.source, predicate, *self.type_targets(use.receiver, use.owner), use.line, use.at)
                continue
            self.refer(use.source, CALLS, *self.call_targets(use), use.line, use.at)
            if use.source in tests:
                tests[use.source].append(use)
        for key, uses in tests.items():
            self.tested(key, uses)
        qname = self.qualify(self.stem)
        self.unit.add(QUALIFIED_NAME, qname)
        # The file is found by its name unless its public class already answers to it.
        if all(t.qname != qname for t in self.types.values()):
            self.unit.symbols = ((NAMESPACE, qname),)


# ── rendering ────────────────────────────────────────────────────


class Rank(IntEnum):
    """The uko-java effective DetailLevelMap (uko-code levels with uko-oo's two inserted)."""

    MODULE_LISTING = 0
    MODULE_GRAPH = 1
    MEMBER_LISTING = 2
    CLASS_HIERARCHY = 3
    MEMBER_SUMMARY = 4
    SIGNATURES = 5
    SIGNATURES_WITH_DOCS = 6
    VISIBILITY_ANNOTATED = 7
    STRUCTURAL_OUTLINE = 8
    KEY_LOGIC = 9
    NEAR_COMPLETE = 10
    FULL_SOURCE = 11


if tuple(Rank.__members__) != detail_levels.UKO_JAVA:  # the ontology's map changed: so must Rank
    raise ImportError(f"analyzers/java.py: Rank is not uko-java's DetailLevelMap {detail_levels.UKO_JAVA}")


INDENT = "    "
MAX_NESTING = 64  # statements and types nested deeper render as '…' (the renderer recurses)
RENDERABLE = (
    set(TYPE_CLASSES)
    | CALLABLES
    | FIELDS
    | {"class_body", "variable_declarator", "enum_constant", "formal_parameter", "spread_parameter"}
    | {"block_comment", "import_declaration"}
)
LOOPS = {"for_statement": "for", "enhanced_for_statement": "for", "while_statement": "while"}
EXITS = frozenset({"return_statement", "throw_statement", "yield_statement", "break_statement", "continue_statement"})
KEY_STATEMENTS = frozenset({"assert_statement", "local_variable_declaration", "explicit_constructor_invocation"})
# Receivers whose calls only log (left out of NEAR_COMPLETE).
LOGGER = re.compile(r"^(?:this\.)?(?:log|logger|LOG|LOGGER|Log|Logger|System\.out|System\.err)$")


class _Renderer:
    """One node of a file as text at one detail level."""

    def __init__(self, data: bytes, rank: Rank) -> None:
        self.data = data
        self.rank = rank

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", errors="replace")

    def source(self, node: ts.Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def node(self, node: ts.Node) -> list[str]:
        kind = node.type
        if kind in TYPE_CLASSES or kind == "class_body":
            return self.type_declaration(node, 0)
        if kind in CALLABLES:
            return self.callable(node, 0)
        if kind in FIELDS:
            return self.field(node, node.children_by_field_name("declarator"), 0)
        if kind == "variable_declarator" and node.parent is not None:
            return self.field(node.parent, [node], 0)
        if kind == "enum_constant":
            body = node.child_by_field_name("body")
            if body is not None and self.rank >= Rank.STRUCTURAL_OUTLINE:
                return self.type_declaration(body, 0)
            return [*self.doc(node, 0), self.constant(node)]
        if kind in ("formal_parameter", "spread_parameter"):
            return [field_text(node, "name") if self.rank < Rank.SIGNATURES else collapse(self.source(node))]
        if kind == "block_comment":
            comment = self.source(node)
            return [summary(comment) if self.rank < Rank.SIGNATURES_WITH_DOCS else doc_text(comment)]
        if kind == "import_declaration":
            imported = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            return [text(imported) if self.rank == Rank.MODULE_LISTING else collapse(self.source(node))]
        return [self.source(node)]

    def module(self, root: ts.Node, path: str) -> list[str]:
        package = next((c for c in root.named_children if c.type == "package_declaration"), None)
        stem = path.rsplit("/", 1)[-1].removesuffix(".java")
        named = next((c for c in package.named_children if c.type != "marker_annotation"), None) if package else None
        if self.rank == Rank.MODULE_LISTING:
            return [f"{text(named)}.{stem}" if named is not None else stem]
        lines = [
            collapse(self.source(c))
            for c in root.named_children
            if c.type in ("package_declaration", "import_declaration")
        ]
        if self.rank == Rank.MODULE_GRAPH:
            return lines or [stem]
        for child in root.named_children:
            if child.type in TYPE_CLASSES:
                lines += ["", *self.type_declaration(child, 0)] if lines else self.type_declaration(child, 0)
        return lines

    def doc(self, node: ts.Node, depth: int) -> list[str]:
        comment = javadoc(node) if self.rank >= Rank.MEMBER_SUMMARY else None
        if comment is None:
            return []
        pad = INDENT * depth
        if self.rank < Rank.SIGNATURES_WITH_DOCS:
            first = summary(self.source(comment))
            return [f"{pad}/** {first} */"] if first else []
        lines = [line.strip() for line in self.source(comment).splitlines()]
        return [pad + lines[0], *(f"{pad} {line}" if line.startswith("*") else pad + line for line in lines[1:])]

    def note(self, node: ts.Node) -> str:
        """The implied visibility, made explicit at VISIBILITY_ANNOTATED and beyond."""
        keywords, _ = modifiers_of(node)
        if self.rank < Rank.VISIBILITY_ANNOTATED or any(k in ACCESS for k in keywords):
            return ""
        implied = implied_visibility(node)
        if implied == "package":
            return "/* package-private */ "
        abstract = node.type == "method_declaration" and node.child_by_field_name("body") is None
        if implied == "public" and abstract and not {"static", "default"} & set(keywords):
            return "/* public abstract */ "
        return f"/* {implied} */ "

    def type_declaration(self, node: ts.Node, depth: int) -> list[str]:
        pad = INDENT * depth
        if depth > MAX_NESTING:
            return [pad + "…"]
        anonymous = node.type == "class_body"
        body = node if anonymous else node.child_by_field_name("body")
        if anonymous:
            creation = node.parent
            lines: list[str] = []
            if creation is None:
                head = ""
            elif creation.type == "enum_constant":
                head = self.constant(creation)
            elif self.rank >= Rank.KEY_LOGIC:
                head = header(self.data, creation, node)
            else:
                head = f"new {field_text(creation, 'type')}()"
            if self.rank <= Rank.MODULE_GRAPH:
                return [pad + (head or "{}")]
        else:
            keyword = TYPE_KEYWORDS[node.type]
            name = field_text(node, "name")
            lines = self.doc(node, depth)
            if self.rank <= Rank.MODULE_GRAPH or body is None:
                return [*lines, f"{pad}{keyword} {name}"]
            if self.rank == Rank.MEMBER_LISTING:
                parents = [c for c in node.children if c.type in ("superclass", "extends_interfaces")]
                head = " ".join([keyword, name, *(collapse(self.source(p)) for p in parents)])
            elif self.rank < Rank.SIGNATURES:
                start = next((c.start_byte for c in node.children if c.type == keyword), node.start_byte)
                head = collapse(self.slice(start, body.start_byte))
            else:
                head = self.note(node) + header(self.data, node, body)
        lines.append(f"{pad}{head} {{".lstrip() if not head else f"{pad}{head} {{")
        if body is not None:
            lines += self.members(body, depth + 1)
        lines.append(f"{pad}}}")
        return lines

    def members(self, body: ts.Node, depth: int) -> list[str]:
        pad = INDENT * depth
        children = [c for c in body.named_children if c.type != "enum_body_declarations"]
        for group in body.named_children:
            if group.type == "enum_body_declarations":
                children += group.named_children
        lines: list[str] = []
        constants = [c for c in children if c.type == "enum_constant"]
        if constants and self.rank >= Rank.STRUCTURAL_OUTLINE and any(c.child_by_field_name("body") for c in constants):
            for constant in constants:
                constant_body = constant.child_by_field_name("body")
                if constant_body is None:
                    lines += [*self.doc(constant, depth), f"{pad}{self.constant(constant)},"]
                else:
                    lines += [*self.doc(constant, depth), *self.type_declaration(constant_body, depth)]
        elif constants:
            for constant in constants:
                lines += self.doc(constant, depth) if self.rank >= Rank.SIGNATURES_WITH_DOCS else []
            lines.append(pad + ", ".join(self.constant(c) for c in constants) + ";")
        for child in children:
            kind = child.type
            if kind in TYPE_CLASSES:
                lines += self.type_declaration(child, depth)
            elif kind in CALLABLES:
                lines += self.callable(child, depth)
            elif kind in FIELDS:
                lines += self.field(child, child.children_by_field_name("declarator"), depth)
            elif kind in ("static_initializer", "block") and self.rank >= Rank.STRUCTURAL_OUTLINE:
                block = child if kind == "block" else child.named_children[-1]
                lines.append(pad + ("static {" if kind == "static_initializer" else "{"))
                self.statements(block, depth + 1, lines, 0)
                lines.append(pad + "}")
        return lines

    def constant(self, node: ts.Node) -> str:
        if self.rank >= Rank.KEY_LOGIC:
            return header(self.data, node, node.child_by_field_name("body"))
        return field_text(node, "name")

    def callable(self, node: ts.Node, depth: int) -> list[str]:
        pad = INDENT * depth
        name = field_text(node, "name")
        body = node.child_by_field_name("body")
        lines = self.doc(node, depth)
        if self.rank <= Rank.MODULE_GRAPH:
            return [*lines, pad + name]
        if self.rank < Rank.SIGNATURES:
            keywords, _ = modifiers_of(node)
            access = next((f"{k} " for k in keywords if k in ACCESS), "")
            params = node.child_by_field_name("parameters")
            listed = "…" if params is not None and params.named_children else ""
            return [*lines, f"{pad}{access}{name}({listed})"]
        head = self.note(node) + header(self.data, node, body)
        if body is None or self.rank < Rank.STRUCTURAL_OUTLINE:
            return [*lines, f"{pad}{head};"]
        lines.append(f"{pad}{head} {{")
        self.statements(body, depth + 1, lines, 0)
        lines.append(pad + "}")
        return lines

    def field(self, node: ts.Node, declarators: list[ts.Node], depth: int) -> list[str]:
        pad = INDENT * depth
        lines = self.doc(node, depth)
        if self.rank < Rank.SIGNATURES:
            return [*lines, pad + ", ".join(field_text(d, "name") for d in declarators)]
        type_node = node.child_by_field_name("type")
        prefix = collapse(self.slice(node.start_byte, type_node.end_byte if type_node else node.start_byte))
        if self.rank < Rank.KEY_LOGIC:
            parts = [field_text(d, "name") + field_text(d, "dimensions") for d in declarators]
        else:
            parts = [collapse(self.source(d)) for d in declarators]
        return [*lines, f"{pad}{self.note(node)}{prefix} {', '.join(parts)};"]

    # ── bodies: control flow at STRUCTURAL_OUTLINE, plus key statements at KEY_LOGIC ──

    def statements(self, block: ts.Node, depth: int, out: list[str], nesting: int) -> None:
        for child in block.named_children:
            self.statement(child, depth, out, nesting + 1)

    def branch(self, node: ts.Node | None, depth: int, out: list[str], nesting: int) -> None:
        if node is not None and node.type in ("block", "constructor_body", "switch_block"):
            self.statements(node, depth, out, nesting)
        elif node is not None:
            self.statement(node, depth, out, nesting + 1)

    def expression(self, node: ts.Node | None, placeholder: str = "(…)") -> str:
        """An expression's text at KEY_LOGIC, a placeholder in the outline."""
        if node is None:
            return ""
        return collapse(self.source(node)) if self.rank >= Rank.KEY_LOGIC else placeholder

    def statement(self, node: ts.Node, depth: int, out: list[str], nesting: int) -> None:
        pad = INDENT * depth
        kind = node.type
        if nesting > MAX_NESTING or depth > MAX_NESTING:
            out.append(pad + "…")
        elif kind == "block":
            out.append(pad + "{")
            self.statements(node, depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind == "if_statement":
            out.append(f"{pad}if {self.expression(node.child_by_field_name('condition'))} {{")
            self.branch(node.child_by_field_name("consequence"), depth + 1, out, nesting)
            alternative = node.child_by_field_name("alternative")
            while alternative is not None and alternative.type == "if_statement":
                out.append(f"{pad}}} else if {self.expression(alternative.child_by_field_name('condition'))} {{")
                self.branch(alternative.child_by_field_name("consequence"), depth + 1, out, nesting)
                alternative = alternative.child_by_field_name("alternative")
            if alternative is not None:
                out.append(pad + "} else {")
                self.branch(alternative, depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind in LOOPS:
            body = node.child_by_field_name("body")
            if self.rank >= Rank.KEY_LOGIC and body is not None:
                head = collapse(self.slice(node.start_byte, body.start_byte))
            else:
                head = f"{LOOPS[kind]} (…)"
            out.append(f"{pad}{head} {{")
            self.branch(body, depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind == "do_statement":
            out.append(pad + "do {")
            self.branch(node.child_by_field_name("body"), depth + 1, out, nesting)
            out.append(f"{pad}}} while {self.expression(node.child_by_field_name('condition'))};")
        elif kind in ("try_statement", "try_with_resources_statement"):
            resources = node.child_by_field_name("resources")
            out.append(f"{pad}try {self.expression(resources)} {{".replace("try  {", "try {"))
            self.branch(node.child_by_field_name("body"), depth + 1, out, nesting)
            for clause in node.named_children:
                if clause.type == "catch_clause":
                    caught = next((c for c in clause.named_children if c.type == "catch_formal_parameter"), None)
                    out.append(f"{pad}}} catch ({collapse(self.source(caught)) if caught else ''}) {{")
                    self.branch(clause.child_by_field_name("body"), depth + 1, out, nesting)
                elif clause.type == "finally_clause":
                    out.append(pad + "} finally {")
                    self.branch(clause.named_children[-1] if clause.named_children else None, depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind == "switch_expression":
            out.append(f"{pad}switch {self.expression(node.child_by_field_name('condition'))} {{")
            body = node.child_by_field_name("body")
            for group in body.named_children if body is not None else ():
                self.switch_group(group, depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind == "synchronized_statement":
            lock = next((c for c in node.named_children if c.type == "parenthesized_expression"), None)
            out.append(f"{pad}synchronized {self.expression(lock)} {{")
            self.branch(node.child_by_field_name("body"), depth + 1, out, nesting)
            out.append(pad + "}")
        elif kind == "labeled_statement":
            label, *rest = node.named_children or [node]
            out.append(f"{pad}{text(label)}:")
            for inner in rest:
                self.statement(inner, depth, out, nesting + 1)
        elif kind in TYPE_CLASSES:
            out += self.type_declaration(node, depth)
        elif kind in EXITS:
            if self.rank >= Rank.KEY_LOGIC:
                out.append(pad + collapse(self.source(node)))
            else:
                keyword = kind.removesuffix("_statement")
                valued = kind in ("return_statement", "throw_statement", "yield_statement") and node.named_children
                out.append(f"{pad}{keyword}{' …' if valued else ''};")
        elif self.rank >= Rank.KEY_LOGIC and (kind in KEY_STATEMENTS or self.key_expression(node)):
            out.append(pad + collapse(self.source(node)))

    def switch_group(self, group: ts.Node, depth: int, out: list[str], nesting: int) -> None:
        pad = INDENT * depth
        for part in group.named_children:
            if part.type == "switch_label":
                label = collapse(self.source(part))
                if self.rank < Rank.KEY_LOGIC and label != "default":
                    label = "case …"
                out.append(f"{pad}{label}{' ->' if group.type == 'switch_rule' else ':'}")
            elif part.type == "block" and group.type == "switch_rule":
                self.statements(part, depth + 1, out, nesting)
            else:
                self.statement(part, depth + 1, out, nesting + 1)

    @staticmethod
    def key_expression(node: ts.Node) -> bool:
        """Assignments, increments and assertion calls: what KEY_LOGIC keeps of expression statements."""
        if node.type != "expression_statement" or not node.named_children:
            return False
        inner = node.named_children[0]
        if inner.type in ("assignment_expression", "update_expression"):
            return True
        name = field_text(inner, "name") if inner.type == "method_invocation" else ""
        return name.startswith("assert") or name in ("fail", "verify", "check", "require", "requireNonNull")

    # ── NEAR_COMPLETE: the source without comments, logging and imports ──

    def logging(self, node: ts.Node) -> bool:
        call = node.named_children[0] if node.named_children else None
        if call is None or call.type != "method_invocation":
            return False
        receiver = call.child_by_field_name("object")
        if field_text(call, "name") == "printStackTrace":
            return True
        return receiver is not None and LOGGER.match(collapse(self.source(receiver))) is not None

    def near_complete(self, node: ts.Node, drop_imports: bool) -> str:
        cuts: list[tuple[int, int]] = []
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            dropped = kind in COMMENTS or (drop_imports and kind == "import_declaration")
            if dropped or (kind == "expression_statement" and self.logging(current)):
                cuts.append((current.start_byte, current.end_byte))
            else:
                stack.extend(current.named_children)
        data, start, end = self.data, node.start_byte, node.end_byte
        pieces: list[bytes] = []
        position = start
        for cut_start, cut_end in sorted(cuts):
            if cut_start < position:
                continue
            line_start = data.rfind(b"\n", start, cut_start) + 1 or start
            line_end = data.find(b"\n", cut_end, end)
            if (
                not data[line_start:cut_start].strip()
                and not data[cut_end : line_end if line_end != -1 else end].strip()
            ):
                cut_start = max(line_start, position)  # the whole line goes
                cut_end = line_end + 1 if line_end != -1 else end
            pieces.append(data[position:cut_start])
            position = cut_end
        pieces.append(data[position:end])
        lines = b"".join(pieces).decode("utf-8", errors="replace").splitlines()
        # The node starts mid-line: its later lines lose the indentation of its first.
        first_line = data[data.rfind(b"\n", 0, start) + 1 : start].decode("utf-8", errors="replace")
        indent = first_line if not first_line.strip() else ""
        kept: list[str] = []
        for number, line in enumerate(lines):
            line = line.rstrip()
            line = line.removeprefix(indent) if number else line
            if line or (kept and kept[-1]):  # runs of blank lines (left by cuts) shrink to one
                kept.append(line)
        return "\n".join(kept).strip("\n")


def find(root: ts.Node, start: int, end: int) -> ts.Node | None:
    """The declaration (or comment, import) node that spans exactly ``start``..``end``."""
    node = root.descendant_for_byte_range(start, end)
    while node is not None and node.start_byte >= start and node.end_byte <= end:
        if node.start_byte == start and node.end_byte == end and node.type in RENDERABLE:
            return node
        node = node.parent
    return None


class JavaAnalyzer:
    name = "java"
    version = "2"

    def handles(self, path: str) -> bool:
        return path.endswith(".java")

    def file_types(self, path: str) -> tuple[str, ...]:
        return (COMPILATION_UNIT,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        walk = _FileWalk(source)
        try:
            tree = parse(tree_sitter_java.language, source.data)
            walk.run(tree.root_node)
        except Exception as exc:  # only the parse itself: declarations are isolated inside
            return file_failure(walk.unit, exc)
        with walk.isolation.phase("resolution"):
            walk.finish()
        errors: list[Problem] = []
        with walk.isolation.phase("syntax errors"):
            errors = walk.problems(tree)
        with walk.isolation.phase("fingerprints"):
            comments = ("line_comment", "block_comment")
            add_fingerprints(
                walk.entities, comment_fingerprints(tree_sitter_java.language, tree.root_node, source.data, comments)
            )
        return walk.isolation.finish(FileAnalysis(walk.entities, walk.references, errors))

    def render(self, request: RenderRequest) -> str:
        level = Rank[request.level] if request.level in Rank.__members__ else Rank(min(request.depth, Rank.FULL_SOURCE))
        data, where = request.content, request.span
        if level == Rank.FULL_SOURCE:
            return (
                data.decode("utf-8", errors="replace")
                if where is None
                else data[where.start_byte : where.end_byte].decode("utf-8", errors="replace")
            )
        root = parse(tree_sitter_java.language, data).root_node
        renderer = _Renderer(data, level)
        node = root if where is None or request.key == "" else find(root, where.start_byte, where.end_byte)
        if node is None:  # the content no longer has this node: show what the span covers
            return renderer.slice(where.start_byte, where.end_byte) if where is not None else ""
        if level == Rank.NEAR_COMPLETE and node.type != "block_comment":
            return renderer.near_complete(node, drop_imports=node is root)
        lines = renderer.module(root, request.path) if node is root else renderer.node(node)
        return "\n".join(lines)


ANALYZERS = [JavaAnalyzer()]
