"""The analyzer contract: what an analyzer is given, what it returns, how it renders.

An analyzer sees one file in isolation and describes it as a tree of ``Entity`` records
(the file node first, key ``""``) plus ``Reference`` records it could not resolve
alone (calls, imports, foreign keys, links). The indexer turns entities into UKO
triples with provenance, and the linker resolves references across every file of the
resources in scope. Analyzers never touch the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

# A literal value of an entity property. Python types map to XSD: str -> xsd:string,
# bool -> xsd:boolean, int -> xsd:integer, float -> xsd:double.
Value = str | bool | int | float


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a file. Lines are 1-based, columns and bytes 0-based, ends exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int
    start_byte: int
    end_byte: int

    def literal(self) -> str:
        """The ``uko:sourceRange`` form ``line:col-line:col`` (1-based lines), e.g. ``'15:1-87:0'``."""
        return f"{self.start_line}:{self.start_col}-{self.end_line}:{self.end_col}"

    @classmethod
    def parse(cls, text: str) -> tuple[int, int, int, int]:
        start, end = text.split("-")
        sl, sc = start.split(":")
        el, ec = end.split(":")
        return int(sl), int(sc), int(el), int(ec)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file handed to an analyzer."""

    path: str  # POSIX path relative to the resource root
    data: bytes
    content_hash: str  # 'sha256:<hex>' of ``data``

    def text(self) -> str:
        """The content decoded as UTF-8; undecodable bytes become U+FFFD."""
        return self.data.decode("utf-8", errors="replace")


@dataclass(slots=True)
class Entity:
    """One UKO node of a file.

    ``key`` names the node within its file (``""`` for the file node itself, then e.g.
    ``"Model.save"`` or ``"import/os"``); it must be stable across edits that do not
    change what the node is, because the node's IRI is derived from it and a stable IRI
    is what turns an edit into a new revision of the same entity.
    """

    key: str
    types: tuple[str, ...]  # class IRIs, most specific first
    name: str
    parent: str | None = None  # key of the containing entity (uko:contains); None for the file node
    span: Span | None = None
    values: dict[str, list[Value]] = field(default_factory=dict)  # predicate IRI -> literals
    links: list[tuple[str, str]] = field(default_factory=list)  # (predicate IRI, key of another entity here)
    # Names this entity can be found by from other files: (namespace, qualified name),
    # e.g. ("py", "django.db.models.base.Model").
    symbols: tuple[tuple[str, str], ...] = ()

    def add(self, predicate: str, value: Value) -> None:
        self.values.setdefault(predicate, []).append(value)


@dataclass(frozen=True, slots=True)
class Reference:
    """An edge whose target lives by name somewhere in the indexed resources.

    The linker tries ``targets`` in order (qualified names in ``namespace``, each with the
    confidence a hit would deserve: the analyzer knows whether a name came through an
    import, the enclosing scope, or a guess). If none is defined and ``simple_name`` is
    given, a bare-name match across the namespace is the last resort, at low confidence
    and only when the candidates are few. Edges carry ``ca:resolvedBy "name-match"``.
    Namespace ``"*"`` searches every namespace (documents naming code identifiers).
    """

    source: str  # key of the referring entity in this file
    predicate: str  # edge IRI, e.g. uko-code:calls
    namespace: str
    targets: tuple[tuple[str, float], ...]
    simple_name: str | None = None
    line: int = 0
    # (0-based line, byte column) of the name a language server should resolve, e.g. the
    # ``c`` of ``a.b.c()``; None where the edge has no single name in the text.
    position: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """A parse error or other trouble in one file; the file is still indexed."""

    message: str
    span: Span | None = None
    # Definitions the error hid from the parse (e.g. 'def handler'), so nothing is dropped silently.
    hidden: tuple[str, ...] = ()


@dataclass(slots=True)
class FileAnalysis:
    entities: list[Entity]  # entities[0] is the file node (key "")
    references: list[Reference] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RenderRequest:
    """Render one node at one detail level from stored content."""

    key: str  # the entity's key in its file
    types: tuple[str, ...]  # the node's asserted UKO classes
    path: str
    content: bytes  # the whole file at the requested revision
    span: Span | None  # the node's range in ``content`` (None for the file node)
    level: str  # effective level name, e.g. 'SIGNATURES'
    depth: int  # the level's integer depth in the node type's effective map


@runtime_checkable
class Analyzer(Protocol):
    """A plugin that turns files into UKO entities.

    Built-ins live in ``analyzers/``; a user's analyzer is a Python file in a directory
    named by the ``analyzers.path`` config key, or an entry point in the group
    ``cleveragents.analyzers``. Either way the module (or entry point) exposes
    ``ANALYZERS``: a list of objects with this shape.
    """

    name: str  # e.g. 'python'
    version: str  # bump when output changes, so cached analyses are recomputed

    def handles(self, path: str) -> bool:
        """Whether this analyzer takes the file at ``path`` (relative POSIX path)."""
        ...

    def file_types(self, path: str) -> tuple[str, ...]:
        """Classes of the file node; used alone when a file is too large to analyze."""
        ...

    def analyze(self, source: SourceFile) -> FileAnalysis:
        """Describe one file. Must not raise on bad syntax: report ``Problem``s instead."""
        ...

    def render(self, request: RenderRequest) -> str:
        """The node's text at ``request.level``; FULL_SOURCE-like levels are the exact source."""
        ...
