"""The graph backend: the store itself, queried with SPARQL at the request's revision.

Scoping convention: a query marks where the scope goes with ``$SCOPE(?var)``, ``?var`` being
bound to resource IRIs (``?node uko:sourceResource ?var``); it is replaced by
``VALUES ?var { <resource> ... }`` for the resources in scope, or removed when the scope is
every resource. As a safety net, rows that name a source node or a resource outside the scope
are dropped, so a query that forgets the marker still cannot return another project's nodes."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

import pyoxigraph as ox

from cleveragents import iris
from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.graph.store import GraphStore, View
from cleveragents.graph.workspace import Workspace
from cleveragents.indexing import renderings
from cleveragents.indexing.plugins import AnalyzerSet
from cleveragents.iris import RESOURCE_BASE

RENDER_CACHE_SIZE = 8192  # renderings kept per revision (a few MB of text)
_SCOPE = re.compile(r"\$SCOPE\(\s*\?(\w+)\s*\)")
_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGERS = {_XSD + t for t in ("integer", "int", "long", "short", "nonNegativeInteger", "positiveInteger")}


def scope_values(var: str, resources: Iterable[str]) -> str:
    """``VALUES ?var { <resource IRI> ... }`` for resource ULIDs."""
    return f"VALUES ?{var} {{ {' '.join(f'<{RESOURCE_BASE}{r}>' for r in sorted(resources))} }}"


def apply_scope(sparql: str, resources: AbstractSet[str]) -> str:
    """Replace each ``$SCOPE(?var)`` marker: VALUES for a scope, nothing for every resource."""
    return _SCOPE.sub(lambda m: scope_values(m.group(1), resources) if resources else "", sparql)


def python_value(term: Any) -> Any:
    """A SPARQL result term as a Python value: IRIs and strings as str, numbers and booleans
    as numbers and booleans; None when unbound."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        try:
            if datatype in _INTEGERS:
                return int(term.value)
            if datatype in (_XSD + "decimal", _XSD + "double", _XSD + "float"):
                return float(term.value)
        except ValueError:
            return term.value
        if datatype == _XSD + "boolean":
            return term.value == "true"
        return term.value
    return str(term)


def resource_of(value: Any) -> str | None:
    """The resource ULID a value belongs to (a source node or a resource IRI), else None."""
    if not isinstance(value, str):
        return None
    if value.startswith(RESOURCE_BASE):
        return value[len(RESOURCE_BASE) :].split("/", 1)[0] or None
    parts = iris.split_iri(value)
    return parts[0] if parts else None


class StoreGraphBackend:
    """SPARQL and rendering over the store at one revision."""

    def __init__(self, ws: Workspace, revision: int, analyzers: AnalyzerSet | None = None) -> None:
        self.ws = ws
        self.revision = revision
        self._analyzers = analyzers
        self._lock = threading.Lock()
        self._store: GraphStore | None = None  # opened once: an open costs ~10 ms, a query less
        self._views: dict[bool, View] = {}
        self._session: renderings.RenderSession | None = None
        # Renderings at one revision never change, and strategies render the same nodes:
        # (node, depth) -> (text, depth used), or None for a node without content.
        self._rendered: OrderedDict[tuple[str, str], tuple[str, int] | None] = OrderedDict()

    def _view(self, inferred: bool) -> tuple[GraphStore, View]:
        with self._lock:
            if self._store is None:
                self.ws.require()
                self._store = GraphStore.open_read_only(self.ws.store_dir)
            if inferred not in self._views:
                self._views[inferred] = self._store.view(self.revision, inferred=inferred)
            return self._store, self._views[inferred]

    def _render_session(self) -> renderings.RenderSession:
        """One session for every render: it reads the ontology once and caches detail levels."""
        store, _ = self._view(False)
        with self._lock:
            if self._session is None:
                self._session = renderings.RenderSession(self.ws, store, self.analyzers, self.revision)
            return self._session

    def close(self) -> None:
        with self._lock:
            self._store, self._views, self._session = None, {}, None
            self._rendered.clear()

    @property
    def analyzers(self) -> AnalyzerSet:
        if self._analyzers is None:  # loading analyzers imports tree-sitter grammars: only when rendering
            from cleveragents.indexing.plugins import load_analyzers

            self._analyzers = load_analyzers()
        return self._analyzers

    def query_sparql(
        self,
        sparql: str,
        *,
        resource_filter: AbstractSet[str] = frozenset(),
        bindings: dict[str, Any] | None = None,
        inferred: bool = True,
    ) -> list[dict[str, Any]]:
        """SELECT results as dicts of Python values (ASK: ``[{"result": bool}]``), limited to
        ``resource_filter`` (empty: all resources) by the ``$SCOPE(?var)`` marker and by dropping
        rows naming nodes outside it. ``bindings`` substitute variables with pyoxigraph terms."""
        text = apply_scope(sparql, resource_filter)
        store, view = self._view(inferred)
        result = store.query(text, view=view, bindings=bindings)
        if isinstance(result, ox.QueryBoolean):
            return [{"result": bool(result)}]
        if not isinstance(result, ox.QuerySolutions):
            raise ValidationError("query_sparql runs SELECT and ASK queries; CONSTRUCT and DESCRIBE are not supported")
        names = [v.value for v in result.variables]
        rows = [{name: python_value(solution[name]) for name in names} for solution in result]
        if resource_filter:
            rows = [row for row in rows if _in_scope(row, resource_filter)]
        return rows

    def render(
        self, uko_node: str, depth: int | str, *, resource_filter: set[str] | None = None
    ) -> tuple[str, int] | None:
        """The node's text at ``depth`` (named levels resolve through its DetailLevelMap) and the
        integer depth used; None for a node without stored content, absent at this revision, or
        outside ``resource_filter``. An unknown named depth, or one beyond the node's deepest level,
        raises ValidationError."""
        owner = resource_of(uko_node)
        if owner is None or (resource_filter and owner not in resource_filter):
            return None
        key = (uko_node, str(depth))
        with self._lock:
            if key in self._rendered:
                self._rendered.move_to_end(key)
                return self._rendered[key]
        try:
            done = self._render_session().render(uko_node, str(depth))
            result: tuple[str, int] | None = (done.text, done.depth)
        except NotFoundError as exc:
            if str(exc).startswith("unknown detail level"):  # bad input, not a missing node
                raise ValidationError(str(exc)) from None
            result = None
        with self._lock:
            self._rendered[key] = result
            if len(self._rendered) > RENDER_CACHE_SIZE:
                self._rendered.popitem(last=False)
        return result


def _in_scope(row: dict[str, Any], resources: AbstractSet[str]) -> bool:
    for value in row.values():
        owner = resource_of(value)
        if owner is not None and owner not in resources:
            return False
    return True
