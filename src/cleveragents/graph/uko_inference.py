"""The UKO inference engine.

From the triples the analyzers assert it derives, for every UKO node (an instance of
uko:InformationUnit through the RDFS closure):

* ``uko:layer``: the layer (0 universal, 1 domain, 2 paradigm, 3 technology) of the
  ontology module that defines the node's most specific type. Each asserted UKO type
  counts with its most specific class that has a layer; the highest layer wins;
* ``uko:implicitContains`` (URI prefix containment): a node that no asserted triple puts
  in a container (no ``?x p ?node`` with ``p`` uko:contains or a sub-property) is
  contained by the node whose IRI is its longest proper prefix ending at a structural
  boundary ('.' or '/' in the fragment, '#', '/' in the path), e.g. ``…/models.py#User``
  for ``…/models.py#User.helper``. Nearest ancestor only. A node in no container with no
  such ancestor yet is marked ``ca:awaitsContainer true``, so that an ancestor appearing
  later finds it without a scan;
* ``uko:implicitDependsOn`` (URI reference in object values): a string value of the node
  names another node, by its IRI or by a relative path of a file or directory of the
  same resource (against the node's directory first, then the resource root), as in a
  compose file's ``build: ./api`` or a document linking ``../src/app.py``. In free text a
  path is a token with a '/' or a known file extension; a whole value may also be a
  dotfile (``.env``). A token that could name the node itself, its file or a container
  above it is ignored, and so is a target the node already depends on by an asserted
  edge. The IRIs a node's values may name are recorded as ``ca:mentions`` (at most
  MAX_MENTIONS per node; a token is resolved only when recorded), so that a node
  appearing later finds the nodes that name it;
* ``uko:implicitSiblingOf`` (co-occurrence): two nodes referenced together. At least
  SIBLING_MIN_SHARED referrers have an asserted uko:dependsOn / uko:references edge (or a
  sub-property) to both, and they are at least half of the referrers of each. A referrer
  with more than SIBLING_MAX_FANOUT targets says little about any pair and does not
  count; a node with more than SIBLING_MAX_REFERRERS referrers is too common to have
  siblings; a node and one nested in it by IRI (a class and its method) are not
  siblings. Symmetric (stored both ways); a pair depends only on its shared referrers and
  on each side's referrer count; a node has at most 2 × SIBLING_MAX_FANOUT siblings.

Each implicit edge has a reifier, as the analyzers' edges do, with ca:confidence 0.7 and
ca:resolvedBy "inference".

Everything derived is an inferred triple: the commit engine writes it to the ``inf/``
interval graphs beside the RDFS closure, which takes the implicit edges as base facts (so
``?a uko:dependsOn ?b`` sees implicit dependencies); never while the same triple is
asserted; with history like any triple.

A commit re-derives only what its delta can change. Every derived fact has an owner: a
layer, a mention, an implicit dependency: its subject; an implicit container or a
marker: the contained node; a sibling pair: both nodes. The owners of a commit are the
nodes whose inputs it changes (retyped nodes, subjects of changed text values, ends of
changed edges, the targets of referrers whose references changed, the namers and
orphans below nodes that appeared or vanished); their facts are derived again and
reconciled with the live ones. The owners are found by SPARQL patterns over the commit's
graphs, once, and the facts are derived by queries bound to them (VALUES). An owner with
no asserted triple in the live state (a new node: every node of a first index) needs no
join with the live state for what it says itself: its text values are read by one scan
of the commit's graph, its layer from its own types, and it has no live derived facts to
reconcile. Only the few facts that need Python (text tokens, prefixes, co-occurrence
thresholds) come out. ``derive_all`` derives the whole state with the same queries,
every UKO node being an owner (a pattern, not a set).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import pyoxigraph as ox

from cleveragents.graph import layout
from cleveragents.graph.hierarchy import TBox
from cleveragents.graph.inference import drop_present
from cleveragents.graph.results import dataset, ntriples, solutions
from cleveragents.graph.store import GraphStore
from cleveragents.iris import edge_iri, file_iri, split_iri
from cleveragents.terms import CA, OWL, RDF_REIFIES, RDF_TYPE, UKO, XSD
from cleveragents.vocabulary import ca, uko

VANN: Final = "http://purl.org/vocab/vann/"
TYPE = ox.NamedNode(RDF_TYPE)
INFORMATION_UNIT = ox.NamedNode(uko.InformationUnit)
LAYER = ox.NamedNode(uko.layer)
IMPLICIT_CONTAINS = ox.NamedNode(uko.implicitContains)
IMPLICIT_DEPENDS_ON = ox.NamedNode(uko.implicitDependsOn)
IMPLICIT_SIBLING_OF = ox.NamedNode(uko.implicitSiblingOf)
MENTIONS = ox.NamedNode(ca.mentions)
AWAITS_CONTAINER = ox.NamedNode(ca.awaitsContainer)
CONFIDENCE_PREDICATE = ox.NamedNode(ca.confidence)
RESOLVED_BY_PREDICATE = ox.NamedNode(ca.resolvedBy)
REIFIES_PREDICATE = ox.NamedNode(RDF_REIFIES)
TRUE = ox.Literal("true", datatype=ox.NamedNode(XSD + "boolean"))
INTEGER = ox.NamedNode(XSD + "integer")

CONFIDENCE: Final = ox.Literal("0.7", datatype=ox.NamedNode(XSD + "decimal"))
RESOLVED_BY: Final = ox.Literal("inference")
# The engine's edges: the RDFS closure takes them as base facts, as it takes asserted ones.
IMPLICIT_EDGES: Final = frozenset({IMPLICIT_CONTAINS, IMPLICIT_DEPENDS_ON, IMPLICIT_SIBLING_OF})
# Every predicate the engine writes, reifiers aside.
DERIVED_PREDICATES: Final = IMPLICIT_EDGES | {LAYER, MENTIONS, AWAITS_CONTAINER}

SIBLING_MIN_SHARED: Final = 2
SIBLING_MAX_FANOUT: Final = 32
SIBLING_MAX_REFERRERS: Final = 64
MAX_MENTIONS: Final = 64

# String values that are not text: where the node is, hashes, the product's own
# bookkeeping (ca:); a qualified name is an identifier, not a path.
NOT_TEXT: Final = frozenset(
    {
        uko.sourcePath,
        uko.sourceRange,
        uko.contentHash,
        "https://cleveragents.ai/ontology/uko/code#qualifiedName",
    }
)
FILE_EXTENSIONS: Final = frozenset(
    {"py", "pyi", "md", "rst", "txt", "toml", "yaml", "yml", "json", "cfg", "ini", "env", "sql"}
    | {"js", "mjs", "cjs", "jsx", "ts", "tsx", "go", "rs", "java", "kt", "html", "htm", "css", "scss"}
    | {"xml", "csv", "sh", "bash", "sqlite", "sqlite3", "proto", "graphql", "tf"}
)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`{}|\\^\[\]()]+")
_WORD = re.compile(r"[\w./@+~-]+")
_STRING_TYPES: Final = frozenset({XSD + "string", "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"})
# The values worth reading: a superset, evaluated inside Oxigraph, of those is_text and
# mentioned_tokens accept (a '/', a known extension, or a value starting with a dot).
_EXTENSIONS_RE = "|".join(sorted(FILE_EXTENSIONS))
TEXT_FILTER: Final = (
    f"isLiteral(?o) && ?p NOT IN ({', '.join(f'<{p}>' for p in sorted(NOT_TEXT))}) "
    f'&& !STRSTARTS(STR(?p), "{CA}") && (datatype(?o) = <{XSD}string> || lang(?o) != "") '
    f'&& REGEX(STR(?o), "/|\\\\.({_EXTENSIONS_RE})([^A-Za-z0-9_]|$)|^\\\\s*\\\\.[A-Za-z0-9]", "i")'
)
# Scratch-graph markers of owners computed in Python; never published.
_MARK_SOURCE = ox.NamedNode(CA + "ukoInferenceSource")
_MARK_CONTAINED = ox.NamedNode(CA + "ukoInferenceContained")

Triple = tuple[ox.NamedNode, ox.NamedNode, object]
Edge = tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode]


# -- the ontology's part -------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """What the engine needs of the ontology: the hierarchy, and each module's layer."""

    tbox: TBox
    # (namespace, layer) of each ontology module that declares a uko:layer, longest first
    module_layers: tuple[tuple[str, int], ...]
    unit_classes: frozenset[ox.NamedNode]
    contains_predicates: frozenset[ox.NamedNode]  # uko:contains and its sub-properties
    depends_predicates: frozenset[ox.NamedNode]  # uko:dependsOn and its sub-properties
    referring_predicates: frozenset[ox.NamedNode]  # what counts as a reference for siblings

    @classmethod
    def for_store(cls, store: GraphStore) -> Vocabulary:
        """The vocabulary of the ontology loaded in ``store``."""
        return cls.from_store(store.raw, TBox.from_store(store.raw))

    @classmethod
    def from_store(cls, raw: ox.Store, tbox: TBox) -> Vocabulary:
        rows = solutions(
            raw.query(
                f"SELECT ?m ?layer ?ns WHERE {{ GRAPH {layout.ONTOLOGY} {{ ?m a <{OWL}Ontology> ; <{UKO}layer> ?layer "
                f"OPTIONAL {{ ?m <{VANN}preferredNamespaceUri> ?ns }} }} }}"
            )
        )
        layers = []
        for row in rows:
            namespace = row["ns"].value if row["ns"] is not None else row["m"].value + "#"
            try:
                layers.append((namespace, int(row["layer"].value)))
            except ValueError:
                continue
        units = {c for c, supers in tbox.superclasses.items() if INFORMATION_UNIT in supers}

        def family(top: str) -> frozenset[ox.NamedNode]:
            root = ox.NamedNode(UKO + top)
            return frozenset({root} | {p for p, supers in tbox.superproperties.items() if root in supers})

        return cls(
            tbox,
            tuple(sorted(layers, key=lambda kv: -len(kv[0]))),
            frozenset(units | {INFORMATION_UNIT}),
            family("contains"),
            family("dependsOn"),
            (family("references") | family("dependsOn")) - IMPLICIT_EDGES,
        )

    def layer_of_class(self, cls: ox.NamedNode) -> int | None:
        for namespace, layer in self.module_layers:
            if cls.value.startswith(namespace):
                return layer
        return None

    def classify_type(self, cls: ox.NamedNode) -> tuple[int, ox.NamedNode] | None:
        """(layer, class) of the most specific class with a layer among ``cls`` and its
        superclasses (the highest layer first, then by IRI); None without one."""
        known = {
            c: layer
            for c in (cls, *self.tbox.superclasses.get(cls, ()))
            if (layer := self.layer_of_class(c)) is not None
        }
        specific = [c for c in known if not any(c in self.tbox.superclasses.get(d, ()) for d in known if d != c)]
        if not specific:
            return None
        best = min(specific, key=lambda c: (-known[c], c.value))
        return known[best], best

    def classify(self, types: Iterable[ox.NamedNode]) -> tuple[int, ox.NamedNode] | None:
        """(layer, primary type) of a node with these asserted types: each UKO type gives
        its most specific layered class; the highest layer wins, then the first IRI."""
        found = [c for t in types if t in self.unit_classes and (c := self.classify_type(t)) is not None]
        return min(found, key=lambda lc: (-lc[0], lc[1].value)) if found else None

    def layer_table(self) -> str:
        """SPARQL VALUES rows (?t ?l): each UKO class and the layer it gives a node."""
        rows = [(c, found[0]) for c in self.unit_classes if (found := self.classify_type(c)) is not None]
        return " ".join(f"({c} {layer})" for c, layer in sorted(rows, key=lambda r: r[0].value))

    @property
    def watched_predicates(self) -> frozenset[ox.NamedNode]:
        """The edges derivation reads."""
        return self.contains_predicates | self.depends_predicates | self.referring_predicates | IMPLICIT_EDGES


# -- IRIs and text ---------------------------------------------------------------------------


def prefix_ancestors(iri: str) -> Iterator[str]:
    """The IRIs that could contain ``iri`` by prefix, nearest first: its proper prefixes
    ending where a fragment part ('.', '/'), the fragment ('#') or a path segment ('/',
    with and without the slash) ends, down to the authority."""
    base, hashed, fragment = iri.partition("#")
    if hashed:
        for i in range(len(fragment) - 1, 0, -1):
            if fragment[i] in "./":
                yield f"{base}#{fragment[:i]}"
        yield base
    scheme_end = base.find("://")
    floor = base.find("/", scheme_end + 3) if scheme_end >= 0 else base.find(":")
    path = base[:-1] if base.endswith("/") else base
    for i in range(len(path) - 1, max(floor, 0), -1):
        if path[i] == "/":
            yield path[: i + 1]
            yield path[:i]


def nested(a: ox.NamedNode, b: ox.NamedNode) -> bool:
    """One IRI is a prefix ancestor of the other: a class and its own method are
    referenced together by nature (a call of ``C()`` resolves to ``C.__init__``), which
    makes them container and member, not siblings."""
    return b.value in prefix_ancestors(a.value) or a.value in prefix_ancestors(b.value)


def is_text(predicate: ox.NamedNode, value: object) -> bool:
    """A string value that may name a node (the Python side of _TEXT_FILTER)."""
    return (
        isinstance(value, ox.Literal)
        and value.datatype.value in _STRING_TYPES
        and predicate.value not in NOT_TEXT
        and not predicate.value.startswith(CA)
        and ("/" in value.value or "." in value.value)
    )


def _is_pathlike(token: str, whole_value: bool) -> bool:
    if token.startswith(("/", "~")) or not any(c.isalnum() for c in token):
        return False
    if "/" in token:
        return True
    stem, dot, extension = token.rpartition(".")
    if dot and stem and extension.lower() in FILE_EXTENSIONS:
        return True
    return whole_value and token.startswith(".") and len(token) > 1 and token[1].isalnum()


def mentioned_tokens(text: str) -> Iterator[tuple[str, bool]]:
    """(token, is_url) for each URL and path-like token of a string value, in order."""
    for match in _URL.finditer(text):
        yield match.group(0).rstrip(".,;:"), True
    rest = _URL.sub(" ", text)
    whole = rest.strip()
    for match in _WORD.finditer(rest):
        token = match.group(0).rstrip(".")
        if _is_pathlike(token, token == whole):
            yield token, False


def candidate_keys(node: str, token: str, is_url: bool) -> list[str]:
    """The IRIs (without a trailing '/') a token of ``node``'s values may name, the most
    likely first: a URL as it is; a path against the node's directory, then its root."""
    if is_url:
        key = token.rstrip("/")
        return [key] if key else []
    parts = split_iri(node)
    if parts is None:
        return []
    ulid, path, _ = parts
    here = path if node.endswith("/") else posixpath.dirname(path)
    out: list[str] = []
    for base in dict.fromkeys([here, ""]):
        resolved = posixpath.normpath(posixpath.join(base, token))
        if resolved in (".", "..") or resolved.startswith(("../", "/")):
            continue
        key = file_iri(ulid, resolved)
        if key not in out:
            out.append(key)
    return out


def _named(iri: str) -> ox.NamedNode | None:
    try:
        return ox.NamedNode(iri)
    except ValueError:
        return None


def reifier_of(s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode) -> ox.NamedNode:
    return ox.NamedNode(edge_iri(s.value, p.value, o.value))


def edge_triples(s: ox.NamedNode, p: ox.NamedNode, o: ox.NamedNode) -> list[Triple]:
    """An inferred edge and its reifier (the form of the analyzers' edges, emit.edge_lines)."""
    reifier = reifier_of(s, p, o)
    return [
        (s, p, o),
        (reifier, REIFIES_PREDICATE, ox.Triple(s, p, o)),
        (reifier, CONFIDENCE_PREDICATE, CONFIDENCE),
        (reifier, RESOLVED_BY_PREDICATE, RESOLVED_BY),
    ]


def _values(nodes: Iterable[ox.NamedNode]) -> str:
    """Terms for a SPARQL VALUES block."""
    return " ".join(str(n) for n in nodes)


def _listed(nodes: Iterable[ox.NamedNode]) -> str:
    """Terms for a SPARQL IN list (a filter on a bound term beats a lookup per value)."""
    return ", ".join(str(n) for n in nodes)


def _block(patterns: Iterable[str]) -> str:
    """The distinct ?n of a union of group patterns."""
    branches = " UNION ".join(f"{{ {p} }}" for p in patterns)
    return f"{{ SELECT DISTINCT ?n WHERE {{ {branches} }} }}"


# -- reading the state a commit leaves ---------------------------------------------------------


class _State:
    """The asserted state after a commit, for SPARQL: the default graph is the live mirror
    plus the commit's additions; the asserted quads it removes are copied to a scratch
    graph that patterns exclude (``kept``). Owners computed in Python are marked in a
    second scratch graph. Both are dropped by ``close`` (and never published)."""

    def __init__(
        self,
        store: GraphStore,
        vocabulary: Vocabulary,
        revision: int,
        added_g: ox.NamedNode | None = None,
        removed: Iterable[ox.Quad] = (),
    ) -> None:
        self.store = store
        self.raw = store.raw
        self.vocabulary = vocabulary
        self.added_g = added_g
        self.graphs: list[ox.NamedNode | ox.DefaultGraph] = [layout.LIVE] + ([added_g] if added_g else [])
        self.removed_g = layout.stage_graph(revision, "uko-removed")
        self.marks_g = layout.stage_graph(revision, "uko-owners")
        self.removed_keys: set[tuple] = set()
        self.removed_texts: set[ox.NamedNode] = set()
        self.removed_typed: set[ox.NamedNode] = set()
        copies = []
        for quad in removed:
            s, p, o = quad.subject, quad.predicate, quad.object
            self.removed_keys.add((s, p, o))
            if isinstance(o, ox.NamedNode):
                copies.append(ox.Quad(s, p, o, self.removed_g))
                if p == TYPE:
                    self.removed_typed.add(s)  # type: ignore[arg-type]
            elif is_text(p, o):
                self.removed_texts.add(s)  # type: ignore[arg-type]
        self.removed_edges = bool(copies)
        if copies:
            self.raw.extend(copies)
        self._units: dict[ox.NamedNode, bool] = {}
        self._added_texts: list[tuple[ox.NamedNode, str]] | None = None

    def close(self) -> None:
        self.raw.remove_graph(self.removed_g)
        self.raw.remove_graph(self.marks_g)

    def kept(self, s: str, p: str, o: str) -> str:
        """A filter keeping ``s p o`` only if the commit does not remove it."""
        return f"FILTER NOT EXISTS {{ GRAPH {self.removed_g} {{ {s} {p} {o} }} }}" if self.removed_edges else ""

    def unit(self, var: str) -> str:
        """An expression true when ``var`` is a UKO node after the commit."""
        u = f"?unit_{var.lstrip('?')}"
        classes = _listed(self.vocabulary.unit_classes)
        return f"EXISTS {{ {var} a {u} FILTER({u} IN ({classes})) {self.kept(var, 'a', u)} }}"

    def rows(self, query: str) -> list[Any]:
        return list(solutions(self.raw.query(query, default_graph=dataset(self.graphs))))

    def construct(self, query: str) -> bytes:
        return ntriples(self.raw.query(query, default_graph=dataset(self.graphs)))

    def nodes(self, pattern: str) -> set[ox.NamedNode]:
        """The IRIs a pattern binds to ?n."""
        return {r["n"] for r in self.rows(f"SELECT ?n WHERE {{ {pattern} }}") if isinstance(r["n"], ox.NamedNode)}

    def added_texts(self) -> list[tuple[ox.NamedNode, str]]:
        """(node, value) of the text values the commit adds (a scan of its graph, once)."""
        if self._added_texts is None:
            rows = self.rows(f"SELECT ?n ?o WHERE {{ GRAPH {self.added_g} {{ ?n ?p ?o FILTER({TEXT_FILTER}) }} }}")
            self._added_texts = [(r["n"], r["o"].value) for r in rows if isinstance(r["n"], ox.NamedNode)]
        return self._added_texts

    def fresh(self, nodes: set[ox.NamedNode]) -> frozenset[ox.NamedNode]:
        """The nodes no asserted triple has as subject in the live state (a seek each)."""
        live = layout.LIVE
        return frozenset(n for n in nodes if next(iter(self.raw.quads_for_pattern(n, None, None, live)), None) is None)

    def units(self, owners: _Owners, name: str) -> tuple[str, str]:
        """A pattern binding ?n to the owners ``name`` that are UKO nodes after the commit,
        and the filter it still needs (none once the owners are known)."""
        if owners.nodes is None:
            return getattr(owners, name), f"FILTER({self.unit('?n')})"
        found = sorted((n for n in owners.nodes[name] if self.is_unit(n)), key=str)
        return f"VALUES ?n {{ {_values(found)} }}", ""

    def mark(self, marker: ox.NamedNode, nodes: Iterable[ox.NamedNode]) -> str:
        """Mark nodes in the scratch graph; the pattern binding ?n to them."""
        quads = [ox.Quad(n, marker, TRUE, self.marks_g) for n in nodes]
        if quads:
            self.raw.extend(quads)
        return f"GRAPH {self.marks_g} {{ ?n {marker} true }}"

    def is_unit(self, node: ox.NamedNode) -> bool:
        """A UKO node after the commit (a seek or two: for the few nodes Python resolves)."""
        if node not in self._units:
            added = list(self.raw.quads_for_pattern(node, TYPE, None, self.added_g)) if self.added_g else []
            if not added and node not in self.removed_typed:
                self._units[node] = was_unit(self.raw, node)  # its types did not change
            else:
                types = [q.object for q in self.raw.quads_for_pattern(node, TYPE, None, layout.LIVE)]
                types = [t for t in types if (node, TYPE, t) not in self.removed_keys]
                units = self.vocabulary.unit_classes
                self._units[node] = any(t in units for t in [*types, *(q.object for q in added)])
        return self._units[node]

    def has(self, s: ox.NamedNode, p: ox.NamedNode, o: object) -> bool:
        """The triple is asserted after the commit."""
        if ox.Quad(s, p, o, layout.LIVE) in self.raw and (s, p, o) not in self.removed_keys:  # type: ignore[arg-type]
            return True
        return self.added_g is not None and ox.Quad(s, p, o, self.added_g) in self.raw  # type: ignore[arg-type]


def was_unit(raw: ox.Store, node: ox.NamedNode) -> bool:
    """A UKO node in the live state (the closure types every unit as uko:InformationUnit)."""
    return any(ox.Quad(node, TYPE, INFORMATION_UNIT, g) in raw for g in (layout.LIVE_INFERRED, layout.LIVE))


@dataclass
class _Owners:
    """The nodes whose derived facts are derived again, as SPARQL patterns binding ?n.

    In a commit the owners are computed once (``nodes``, each set bound by a VALUES
    pattern), and ``fresh`` holds those with no asserted triple in the live state (new
    nodes, such as every node of a first index): what is known of them is in the commit's
    own graph, and they have no live derived facts. None and empty in ``derive_all``."""

    layered: str
    sources: str
    contained: str
    paired: str
    nodes: dict[str, set[ox.NamedNode]] | None = None
    fresh: frozenset[ox.NamedNode] = frozenset()

    @classmethod
    def of(cls, nodes: dict[str, set[ox.NamedNode]], fresh: frozenset[ox.NamedNode] = frozenset()) -> _Owners:
        patterns = {name: f"VALUES ?n {{ {_values(sorted(found, key=str))} }}" for name, found in nodes.items()}
        return cls(**patterns, nodes=nodes, fresh=fresh)  # type: ignore[arg-type]

    def stale(self) -> _Owners:
        """The owners that may have live derived facts (those not fresh)."""
        assert self.nodes is not None
        return _Owners.of({name: found - self.fresh for name, found in self.nodes.items()})


# -- the engine ---------------------------------------------------------------------------------


class UkoInferenceEngine:
    """Derives layers and implicit edges (see the module docstring)."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self._layer_table = vocabulary.layer_table()
        self._class_layers = {
            c: found[0] for c in vocabulary.unit_classes if (found := vocabulary.classify_type(c)) is not None
        }

    @classmethod
    def from_store(cls, raw: ox.Store, tbox: TBox) -> UkoInferenceEngine:
        return cls(Vocabulary.from_store(raw, tbox))

    def derive(
        self,
        store: GraphStore,
        added_g: ox.NamedNode,
        inferred_g: ox.NamedNode,
        removals: dict[tuple, ox.Quad],
    ) -> list[ox.Quad]:
        """One commit: ``added_g`` holds its asserted additions and ``removals`` the live
        quads it closes. Writes the derived triples that become live into ``inferred_g``
        (which holds nothing else yet) and returns the live derived quads to close."""
        graphs = store.interval_graphs()
        removed = [q for q in removals.values() if (iv := graphs.get(q.graph_name)) and iv.family == "iv"]  # type: ignore[arg-type]
        if not self._touches(store.raw, added_g, removed):
            return []
        revision = layout.parse_graph(added_g).start  # type: ignore[union-attr]
        state = _State(store, self.vocabulary, revision, added_g, removed)
        try:
            owners = self._owners(state)
            self._write_desired(state, owners, inferred_g)
            current = self._current(state, owners)
            closed = set(removals)
            closes = [
                q
                for q in current
                if (q.subject, q.predicate, q.object) not in closed
                and ox.Quad(q.subject, q.predicate, q.object, inferred_g) not in store.raw
            ]
            live = [g for g, iv in graphs.items() if iv.is_open and iv.start <= store.head]
            drop_present(store, inferred_g, [*live, added_g])
            return closes
        finally:
            state.close()

    def derive_all(self, store: GraphStore, inferred_g: ox.NamedNode) -> None:
        """Write every derived triple of the live state, computed from scratch, into
        ``inferred_g`` (graph/inference.rederive_all reconciles it with the live ones)."""
        revision = layout.parse_graph(inferred_g).start  # type: ignore[union-attr]
        state = _State(store, self.vocabulary, revision)
        every = _block([f"?n a {INFORMATION_UNIT}", f"GRAPH {layout.LIVE_INFERRED} {{ ?n a {INFORMATION_UNIT} }}"])
        try:
            self._write_desired(state, _Owners(every, every, every, every), inferred_g)
        finally:
            state.close()

    # -- owners ---------------------------------------------------------------------------

    def _touches(self, raw: ox.Store, added_g: ox.NamedNode, removed: list[ox.Quad]) -> bool:
        """Whether the commit changes what derivation reads: a UKO type, an edge it follows,
        or a text value of a UKO node. Data outside the UKO (a DBpedia import: no UKO type,
        no UKO node) is passed over without reading its text values."""
        v = self.vocabulary
        watched = v.watched_predicates
        for q in removed:
            if (q.predicate == TYPE and q.object in v.unit_classes) or q.predicate in watched:
                return True
        if any(is_text(q.predicate, q.object) and was_unit(raw, q.subject) for q in removed):  # type: ignore[arg-type]
            return True
        types = " ".join(str(c) for c in sorted(v.unit_classes, key=str))
        predicates = " ".join(str(p) for p in sorted(watched, key=str))
        if raw.query(
            f"ASK {{ GRAPH {added_g} {{ {{ ?s a ?t VALUES ?t {{ {types} }} }} "
            f"UNION {{ ?s ?p ?o VALUES ?p {{ {predicates} }} }} }} }}"
        ):
            return True
        # A text value added to a node that was a UKO node already, in the inferred or the
        # asserted (default graph) mirror. Units first: a store of other data has none, and
        # the commit's values are not read.
        units = f"{{ GRAPH {layout.LIVE_INFERRED} {{ ?s a {INFORMATION_UNIT} }} }} UNION {{ ?s a {INFORMATION_UNIT} }}"
        return bool(raw.query(f"ASK {{ {units} GRAPH {added_g} {{ ?s ?p ?o FILTER({TEXT_FILTER}) }} }}"))

    def _owners(self, state: _State) -> _Owners:
        v = self.vocabulary
        changed = [state.added_g] + ([state.removed_g] if state.removed_edges else [])

        def in_changed(pattern: str) -> list[str]:
            return [f"GRAPH {g} {{ {pattern} }}" for g in changed]

        def values(predicates: Iterable[ox.NamedNode]) -> str:
            return " ".join(str(p) for p in predicates)

        # Only a UKO type makes or unmakes a UKO node (and gives its layer).
        retyped = state.nodes(_block(in_changed(f"?n a ?t0 VALUES ?t0 {{ {values(v.unit_classes)} }}")))
        # Nodes naming a node that appeared or vanished (any retyped node: a superset).
        keys = {m.value[:-1] if m.value.endswith("/") else m.value for m in retyped}
        namers = state.nodes(
            f"VALUES ?k0 {{ {' '.join(str(ox.Literal(k)) for k in sorted(keys))} }} "
            f"GRAPH {layout.LIVE_INFERRED} {{ ?n {MENTIONS} ?k0 }}"
        )
        # An asserted dependency that appears or goes changes whether an implicit one is
        # needed, for a node whose unchanged texts name something (it has ca:mentions).
        depends = in_changed(
            f"?n ?p0 ?x0 VALUES ?p0 {{ {values(v.depends_predicates)} }} "
            f"FILTER EXISTS {{ GRAPH {layout.LIVE_INFERRED} {{ ?n {MENTIONS} ?k1 }} }}"
        )
        sources = [*depends, state.mark(_MARK_SOURCE, state.removed_texts)]
        containers = in_changed(f"?x0 ?p0 ?n VALUES ?p0 {{ {values(v.contains_predicates)} }}")
        contained = [*containers, state.mark(_MARK_CONTAINED, self._orphans_below_retyped(state))]
        referring = values(v.referring_predicates)
        paired = [
            *in_changed(f"?n {IMPLICIT_SIBLING_OF} ?x0"),
            *in_changed(f"?x0 {IMPLICIT_SIBLING_OF} ?n"),
            # every target, before and after, of a referrer whose references changed
            *(
                f"{{ SELECT DISTINCT ?r0 WHERE {{ {p} }} }} ?r0 ?p1 ?n "
                f"FILTER(?p1 IN ({_listed(v.referring_predicates)}) && isIRI(?n))"
                for p in in_changed(f"?r0 ?p0 ?x0 VALUES ?p0 {{ {referring} }}")
            ),
        ]
        nodes = {
            "layered": retyped,
            "sources": retyped | namers | state.nodes(_block(sources)) | {n for n, _ in state.added_texts()},
            "contained": retyped | state.nodes(_block(contained)),
            "paired": retyped | state.nodes(_block(paired)),
        }
        fresh = state.fresh(set().union(*nodes.values()))
        return _Owners.of(nodes, fresh)

    def _orphans_below_retyped(self, state: _State) -> set[ox.NamedNode]:
        """Nodes in no asserted container (so with an implicit one, or marked as awaiting
        one) that have a retyped node among their prefix ancestors."""
        raw, mirror = state.raw, layout.LIVE_INFERRED
        orphans = [q.object for q in raw.quads_for_pattern(None, IMPLICIT_CONTAINS, None, mirror)]
        orphans += [q.subject for q in raw.quads_for_pattern(None, AWAITS_CONTAINER, TRUE, mirror)]
        out = set()
        for node in orphans:
            if isinstance(node, ox.NamedNode):
                for iri in prefix_ancestors(node.value):
                    ancestor = _named(iri)
                    if ancestor is not None and (
                        ancestor in state.removed_typed
                        or next(iter(raw.quads_for_pattern(ancestor, TYPE, None, state.added_g)), None) is not None
                    ):
                        out.add(node)
                        break
        return out

    # -- desired facts ----------------------------------------------------------------------

    def _write_desired(self, state: _State, owners: _Owners, inferred_g: ox.NamedNode) -> None:
        raw = state.raw
        facts: set[Triple] = set()
        edges: set[Edge] = set()
        if owners.nodes is not None:  # a few seeks per node beat a join
            facts |= self._layers(state, owners.nodes["layered"], owners.fresh)
        else:
            layers = state.construct(
                f"CONSTRUCT {{ ?n {LAYER} ?layer }} WHERE {{ {{ SELECT ?n (MAX(?l) AS ?layer) WHERE {{ "
                f"{owners.layered} LATERAL {{ ?n a ?t VALUES (?t ?l) {{ {self._layer_table} }} "
                f"{state.kept('?n', 'a', '?t')} }} }} GROUP BY ?n }} }}"
            )
            if layers:
                raw.bulk_load(layers, ox.RdfFormat.N_TRIPLES, to_graph=inferred_g)
        mentions, depends = self._mentions(state, owners)
        facts |= {(node, MENTIONS, ox.Literal(key)) for node, keys in mentions.items() for key in keys}
        edges |= {(node, IMPLICIT_DEPENDS_ON, target) for node, targets in depends.items() for target in targets}
        for node in self._uncontained(state, owners):
            container = self._nearest_ancestor(state, node)
            if container is None:
                facts.add((node, AWAITS_CONTAINER, TRUE))
            else:
                edges.add((container, IMPLICIT_CONTAINS, node))
        for node, sibling in self._siblings(state, owners):
            edges |= {(node, IMPLICIT_SIBLING_OF, sibling), (sibling, IMPLICIT_SIBLING_OF, node)}
        for s, p, o in edges:
            if not state.has(s, p, o):  # never inferred while asserted
                facts.update(edge_triples(s, p, o))
        quads = [ox.Quad(s, p, o, inferred_g) for s, p, o in facts]  # type: ignore[arg-type]
        if quads:
            raw.extend(quads)

    def _layers(self, state: _State, nodes: set[ox.NamedNode], fresh: frozenset[ox.NamedNode]) -> set[Triple]:
        """The layer of each node after the commit (what the CONSTRUCT of derive_all computes)."""
        raw, out = state.raw, set()
        added: dict[object, list[object]] = defaultdict(list)
        for q in raw.quads_for_pattern(None, TYPE, None, state.added_g):  # one scan of the types it adds
            added[q.subject].append(q.object)
        for node in nodes:
            types = list(added.get(node, ()))
            if node not in fresh:
                live = (q.object for q in raw.quads_for_pattern(node, TYPE, None, layout.LIVE))
                types += [t for t in live if (node, TYPE, t) not in state.removed_keys]
            found = [layer for t in types if (layer := self._class_layers.get(t)) is not None]  # type: ignore[arg-type]
            if found:
                out.add((node, LAYER, ox.Literal(str(max(found)), datatype=INTEGER)))
        return out

    def _nearest_ancestor(self, state: _State, node: ox.NamedNode) -> ox.NamedNode | None:
        for iri in prefix_ancestors(node.value):
            candidate = _named(iri)
            if candidate is not None and state.is_unit(candidate):
                return candidate
        return None

    def _mentions(
        self, state: _State, owners: _Owners
    ) -> tuple[dict[ox.NamedNode, list[str]], dict[ox.NamedNode, set[ox.NamedNode]]]:
        """Per source: the IRIs its text values may name, and the units they do name."""
        texts: dict[ox.NamedNode, list[str]] = defaultdict(list)
        sources = owners.sources
        if owners.nodes is not None:
            # A fresh source's values are all in the commit's graph, read by one scan.
            fresh = owners.nodes["sources"] & owners.fresh
            for node, value in state.added_texts():
                if node in fresh and state.is_unit(node):
                    texts[node].append(value)
            sources = f"VALUES ?n {{ {_values(sorted(owners.nodes['sources'] - fresh, key=str))} }}"
        rows = state.rows(
            f"SELECT ?n ?p ?o WHERE {{ {sources} LATERAL {{ FILTER({state.unit('?n')}) ?n ?p ?o "
            f"FILTER({TEXT_FILTER}) }} }}"
        )
        for row in rows:
            if (row["n"], row["p"], row["o"]) not in state.removed_keys:
                texts[row["n"]].append(row["o"].value)
        mentions: dict[ox.NamedNode, list[str]] = {}
        depends: dict[ox.NamedNode, set[ox.NamedNode]] = {}
        for node, values in texts.items():
            keys, targets = _named_by(state, node, sorted(set(values)))
            if keys:
                mentions[node] = keys
            if targets:
                depends[node] = targets
        if depends:  # a target the node depends on by an asserted edge needs no implicit one
            rows = state.rows(
                f"SELECT ?n ?t WHERE {{ VALUES ?n {{ {_values(depends)} }} LATERAL {{ ?n ?p ?t "
                f"FILTER(?p IN ({_listed(self.vocabulary.depends_predicates)})) {state.kept('?n', '?p', '?t')} }} }}"
            )
            for row in rows:
                depends[row["n"]].discard(row["t"])
        return mentions, depends

    def _uncontained(self, state: _State, owners: _Owners) -> list[ox.NamedNode]:
        """The contained owners that are units in no asserted container."""
        contained, unit = state.units(owners, "contained")
        rows = state.rows(
            f"SELECT ?n WHERE {{ {contained} LATERAL {{ {unit} FILTER NOT EXISTS {{ "
            f"?x ?pc ?n FILTER(?pc IN ({_listed(self.vocabulary.contains_predicates)})) "
            f"{state.kept('?x', '?pc', '?n')} }} }} }}"
        )
        return [row["n"] for row in rows if isinstance(row["n"], ox.NamedNode)]

    def _siblings(self, state: _State, owners: _Owners) -> set[tuple[ox.NamedNode, ox.NamedNode]]:
        referring = _listed(self.vocabulary.referring_predicates)

        def edge(referrer: str, predicate: str, target: str, extra: str = "") -> str:
            """A referring edge, after the commit, between two distinct IRIs."""
            return (
                f"{referrer} {predicate} {target} FILTER({predicate} IN ({referring}) && isIRI({referrer}) "
                f"&& isIRI({target}) && {referrer} != {target}{extra}) "
                f"{state.kept(referrer, predicate, target)}"
            )

        def referrers(limit: int) -> str:
            """?c: the number of referrers of ?n, counted up to ``limit``."""
            return (
                f"LATERAL {{ SELECT ?n (COUNT(?r) AS ?c) WHERE {{ SELECT DISTINCT ?n ?r WHERE {{ "
                f"{edge('?r', '?p', '?n')} }} LIMIT {limit} }} GROUP BY ?n }}"
            )

        # The owners with a countable number of referrers, and those referrers.
        paired, unit = state.units(owners, "paired")
        rows = state.rows(
            f"SELECT ?n ?r WHERE {{ {paired} {unit} LATERAL {{ SELECT DISTINCT ?n ?r "
            f"WHERE {{ {edge('?r', '?p', '?n')} }} LIMIT {SIBLING_MAX_REFERRERS + 1} }} }}"
        )
        referrers_of: dict[ox.NamedNode, set[ox.NamedNode]] = defaultdict(set)
        for row in rows:
            referrers_of[row["n"]].add(row["r"])
        referrers_of = {
            n: found for n, found in referrers_of.items() if SIBLING_MIN_SHARED <= len(found) <= SIBLING_MAX_REFERRERS
        }
        counts = {n: len(found) for n, found in referrers_of.items()}
        if not counts:
            return set()
        # Their targets' co-occurrence: referrers shared with each other target, counting
        # only referrers with few enough targets (each referrer's targets read once).
        rows = state.rows(
            f"SELECT ?r ?t WHERE {{ VALUES ?r {{ {_values(set().union(*referrers_of.values()))} }} "
            f"LATERAL {{ SELECT DISTINCT ?r ?t WHERE {{ {edge('?r', '?p', '?t')} }} "
            f"LIMIT {SIBLING_MAX_FANOUT + 1} }} }}"
        )
        targets: dict[ox.NamedNode, set[ox.NamedNode]] = defaultdict(set)
        for row in rows:
            targets[row["r"]].add(row["t"])
        shared: dict[tuple[ox.NamedNode, ox.NamedNode], int] = defaultdict(int)
        for n, found in referrers_of.items():
            for r in found:
                if len(targets[r]) <= SIBLING_MAX_FANOUT:
                    for b in targets[r]:
                        if b != n:
                            shared[(n, b)] += 1
        pairs = [
            (a, b, count) for (a, b), count in shared.items() if count >= SIBLING_MIN_SHARED and 2 * count >= counts[a]
        ]
        # The other side: counted already, or counted now (its referrers did not change).
        others = {b for _, b, _ in pairs} - set(counts)
        if others:
            rows = state.rows(
                f"SELECT ?n ?c WHERE {{ VALUES ?n {{ {_values(others)} }} FILTER({state.unit('?n')}) "
                f"{referrers(SIBLING_MAX_REFERRERS + 1)} }}"
            )
            counts.update({row["n"]: int(row["c"].value) for row in rows})
        return {
            (a, b)
            for a, b, shared in pairs
            if b in counts and counts[b] <= SIBLING_MAX_REFERRERS and 2 * shared >= counts[b] and not nested(a, b)
        }

    # -- live facts -------------------------------------------------------------------------

    def _current(self, state: _State, owners: _Owners) -> list[ox.Quad]:
        """The live derived quads of the owners, with the reifiers of their edges."""
        if owners.nodes is not None:
            owners = owners.stale()
            if not any(owners.nodes.values()):  # type: ignore[union-attr]
                return []
        store = state.store
        head = store.head
        live = {
            g for g, iv in store.interval_graphs().items() if iv.family == "inf" and iv.is_open and iv.start <= head
        }

        def outgoing(owner: str, predicates: Iterable[ox.NamedNode]) -> str:
            return f"{owner} LATERAL {{ VALUES ?p {{ {_values(predicates)} }} GRAPH ?g {{ ?n ?p ?o }} BIND(?n AS ?s) }}"

        def incoming(owner: str, predicate: ox.NamedNode) -> str:
            return f"{owner} LATERAL {{ VALUES ?p {{ {predicate} }} GRAPH ?g {{ ?s ?p ?n }} BIND(?n AS ?o) }}"

        branches = [
            outgoing(owners.layered, [LAYER]),
            outgoing(owners.sources, [MENTIONS, IMPLICIT_DEPENDS_ON]),
            outgoing(owners.contained, [AWAITS_CONTAINER]),
            incoming(owners.contained, IMPLICIT_CONTAINS),
            outgoing(owners.paired, [IMPLICIT_SIBLING_OF]),
            incoming(owners.paired, IMPLICIT_SIBLING_OF),
        ]
        query = f"SELECT DISTINCT ?s ?p ?o ?g WHERE {{ {' UNION '.join(f'{{ {b} }}' for b in branches)} }}"
        found = [ox.Quad(r["s"], r["p"], r["o"], r["g"]) for r in state.rows(query) if r["g"] in live]
        reifiers = {reifier_of(q.subject, q.predicate, q.object) for q in found if q.predicate in IMPLICIT_EDGES}  # type: ignore[arg-type]
        if reifiers:
            rows = state.rows(
                f"SELECT ?s ?p ?o ?g WHERE {{ VALUES ?s {{ {_values(reifiers)} }} "
                "LATERAL { GRAPH ?g { ?s ?p ?o } } }"
            )
            found += [ox.Quad(r["s"], r["p"], r["o"], r["g"]) for r in rows if r["g"] in live]
        return found


def _named_by(state: _State, node: ox.NamedNode, texts: list[str]) -> tuple[list[str], set[ox.NamedNode]]:
    """The IRIs the texts of ``node`` may name (at most MAX_MENTIONS), and the units the
    recorded ones name: for each token, the first of its candidates that is a unit."""
    excluded = {node.value, *prefix_ancestors(node.value)}
    keys: dict[str, None] = {}
    targets: set[ox.NamedNode] = set()
    for text in texts:
        for token, is_url in mentioned_tokens(text):
            candidates = candidate_keys(node.value, token, is_url)
            if any(k in excluded or k + "/" in excluded for k in candidates):
                continue  # the node naming itself or where it is
            new = [k for k in candidates if k not in keys]
            if len(keys) + len(new) > MAX_MENTIONS:
                return list(keys), targets
            keys.update(dict.fromkeys(new))
            target = next((t for k in candidates for t in _forms(k) if state.is_unit(t)), None)
            if target is not None:
                targets.add(target)
    return list(keys), targets


def _forms(key: str) -> Iterator[ox.NamedNode]:
    """The nodes a mention key may name: a file (or any IRI), then a directory."""
    for iri in (key, key + "/"):
        node = _named(iri)
        if node is not None:
            yield node


__all__ = [
    "CONFIDENCE",
    "DERIVED_PREDICATES",
    "IMPLICIT_EDGES",
    "RESOLVED_BY",
    "UkoInferenceEngine",
    "Vocabulary",
    "prefix_ancestors",
]
