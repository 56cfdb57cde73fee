"""The Go analyzer: packages, types, functions, methods, imports, calls, tests, parse errors, renderings, real code."""

from __future__ import annotations

import itertools
import json
import re
import time

import pytest
import tree_sitter as ts
import tree_sitter_go

from cleveragents.analyzers._brace import LEVELS
from cleveragents.analyzers.go import ANALYZERS, default_name, import_targets, package_path
from cleveragents.indexing.model import Analyzer, FileAnalysis, Reference, RenderRequest
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.tbox.lookup import expand_term
from cleveragents.terms import UKO, UKO_CODE, UKO_GO, UKO_OO
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

GO = ANALYZERS[0]
CALLS = UKO_CODE + "calls"
TESTS = UKO_CODE + "testsCallable"

SERVER = """\
// Package server serves things.
package server

import (
	"fmt"
	str "strings"
	. "math"
	_ "embed"
	"github.com/acme/app/v2/internal/store"
	"gopkg.in/yaml.v3"
)

// Handler handles requests.
// It is an interface.
type Handler interface {
	io.Closer
	Named
	Serve(req *Request, opts ...Option) (int, error)
}

// Server holds state.
type Server struct {
	Name, addr string `json:"name"`
	*Base
	store.Store
	handlers map[string]Handler
}

type (
	// ID names a server.
	ID int
	Alias = Server
	box[T any] struct{ v T }
)

const Version = "1.0"

const (
	One, Two = 1, 2
	three    = 3
)

var registry = map[string]*Server{}

// New makes a server.
func New(name string) *Server {
	s := &Server{Name: name}
	s.init()
	return s
}

// Start runs it.
func (s *Server) Start(port int, hosts ...string) (err error) {
	s.init()
	fmt.Println(str.ToUpper(s.Name))
	store.Open()
	yaml.Marshal(nil)
	helper(len(hosts))
	Sqrt(2)
	Server.Stop(*s)
	return nil
}

func (s Server) Stop() {}

func (s *Server) init() {}

func (b *box[T]) Get() T { return b.v }

func (x *External) Method() {}

func helper(n int) int { return n }
"""

SERVER_TEST = """\
package server

import "testing"

func TestNew(t *testing.T) {
	s := New("x")
	if s == nil {
		t.Fatal("nil")
	}
}

func TestServer_Start(t *testing.T) { New("y").Start(1) }

func TestHelper(t *testing.T) {}

func TestMain(m *testing.M) {}

func Testify(t *testing.T) {}

func BenchmarkNew(b *testing.B) {}
"""


def refs(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> list[Reference]:
    return [r for r in analysis.references if r.source == source and r.predicate == predicate]


def targets(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> set[tuple[tuple[str, float], ...]]:
    return {r.targets for r in refs(analysis, source, predicate)}


def values(analysis: FileAnalysis, key: str, predicate: str) -> list[object]:
    return entity(analysis, key).values.get(predicate, [])


def kinds(analysis: FileAnalysis, key: str) -> set[str]:
    return {t.rsplit("#", 1)[1] for t in entity(analysis, key).types}


def render(path: str, source: str | bytes, key: str, level: str) -> str:
    data = source.encode() if isinstance(source, str) else source
    node = entity(analyze(GO, path, data), key)
    depth = LEVELS.index(level) if level in LEVELS else 99
    return GO.render(RenderRequest(key, node.types, path, data, node.span, level, depth))


def test_is_a_registered_analyzer_for_go_files() -> None:
    assert isinstance(GO, Analyzer)
    assert GO.name == "go" and GO.handles("cmd/main.go") and not GO.handles("go.mod")
    assert GO.file_types("a/b.go") == (UKO_GO + "SourceFile",)


@pytest.mark.parametrize(
    ("path", "package", "qual"),
    [("pkg/auth/token.go", "auth", "pkg.auth"), ("main.go", "main", "main"), ("cmd/tool/main.go", "main", "cmd.tool")],
)
def test_package_qualified_name_is_the_directory(path: str, package: str, qual: str) -> None:
    assert package_path(path, package) == qual


@pytest.mark.parametrize(
    ("path", "name", "found"),
    [
        ("fmt", "fmt", [("fmt", 0.9)]),
        ("net/http", "http", [("net.http", 0.9)]),
        (
            "github.com/acme/app/internal/store",
            "store",
            [("github.com.acme.app.internal.store", 0.9), ("internal.store", 0.7)],
        ),
        ("github.com/acme/app/v2/util", "util", [("github.com.acme.app.v2.util", 0.9), ("util", 0.7)]),
        ("github.com/acme/app/v2", "app", [("github.com.acme.app.v2", 0.9)]),
        ("gopkg.in/yaml.v3", "yaml", [("gopkg.in.yaml.v3", 0.9)]),
        ("github.com/mattn/go-sqlite3", "sqlite3", [("github.com.mattn.go-sqlite3", 0.9)]),
    ],
)
def test_import_paths_names_and_targets(path: str, name: str, found: list[tuple[str, float]]) -> None:
    assert default_name(path) == name
    assert import_targets(path) == found


def test_file_node_package_docs_and_language() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    file = analysis.entities[0]
    assert (file.key, file.types, file.name, file.symbols) == (
        "",
        (UKO_GO + "SourceFile",),
        "server.go",
        (("go", "internal.server"),),
    )
    assert values(analysis, "", UKO_CODE + "qualifiedName") == ["internal.server"]
    assert values(analysis, "", UKO_GO + "packageName") == ["server"]
    assert values(analysis, "", UKO_CODE + "language") == ["go"]
    assert values(analysis, "", UKO_CODE + "docstring") == ["Package server serves things."]
    assert entity(analysis, "/doc").span.start_line == 1
    assert analysis.problems == []


def test_declarations_of_every_kind() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    expected = {
        "Handler": {"Interface"},
        "Handler.Serve": {"Method"},
        "Server": {"Struct"},
        "Server.Name": {"Field"},
        "Server.addr": {"Field"},
        "Server.Base": {"Field"},
        "Server.Store": {"Field"},
        "Server.handlers": {"Field"},
        "ID": {"DefinedType"},
        "Alias": {"TypeAlias"},
        "box": {"Struct"},
        "box.v": {"Field"},
        "Version": {"Constant"},
        "One": {"Constant"},
        "Two": {"Constant"},
        "three": {"Constant"},
        "registry": {"Variable"},
        "New": {"Function"},
        "Server.Start": {"Method"},
        "Server.Stop": {"Method"},
        "box.Get": {"Method"},
        "External.Method": {"Method"},
        "helper": {"Function"},
    }
    for key, kind in expected.items():
        assert kinds(analysis, key) == kind, key
    assert entity(analysis, "Server.Start").symbols == (("go", "internal.server.Server.Start"),)
    assert entity(analysis, "One").span == entity(analysis, "Two").span  # one spec declares both
    assert len({e.key for e in analysis.entities}) == len(analysis.entities)


def test_methods_attach_to_receiver_types_defined_here() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    assert entity(analysis, "Server.Start").parent == "Server"
    assert entity(analysis, "box.Get").parent == "box"
    assert entity(analysis, "External.Method").parent == ""  # its type is in another file
    assert (UKO_OO + "hasMethod", "Server.Stop") in entity(analysis, "Server").links
    assert (UKO_OO + "hasMethod", "Handler.Serve") in entity(analysis, "Handler").links
    assert values(analysis, "Server.Start", UKO_GO + "receiverType") == ["*Server"]
    assert values(analysis, "box.Get", UKO_GO + "receiverType") == ["*box[T]"]


def test_visibility_docs_tags_signatures_and_parameters() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    assert values(analysis, "Server", UKO_CODE + "visibility") == ["public"]
    assert values(analysis, "Server.addr", UKO_CODE + "visibility") == ["package"]
    assert values(analysis, "helper", UKO_CODE + "visibility") == ["package"]
    assert values(analysis, "Handler", UKO_CODE + "docstring") == ["Handler handles requests.\nIt is an interface."]
    assert values(analysis, "ID", UKO_CODE + "docstring") == ["ID names a server."]
    assert values(analysis, "Server.Name", UKO_GO + "structTag") == ['json:"name"']
    assert values(analysis, "Server.Start", UKO_CODE + "signature") == [
        "func (s *Server) Start(port int, hosts ...string) (err error)"
    ]
    assert values(analysis, "Server.Start", UKO_CODE + "hasReturnType") == ["(err error)"]
    assert json.loads(str(values(analysis, "Server.Start", UKO_CODE + "hasParameters")[0])) == [
        {"name": "port", "type": "int", "default": None, "kind": "positional"},
        {"name": "hosts", "type": "string", "default": None, "kind": "variadic"},
    ]
    assert json.loads(str(values(analysis, "Handler.Serve", UKO_CODE + "hasParameters")[0]))[1]["kind"] == "variadic"
    assert values(analysis, "Version", UKO_CODE + "signature") == ['const Version = "1.0"']
    assert values(analysis, "Server", UKO_CODE + "signature") == ["type Server struct"]


def test_embedding_is_inheritance() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    assert targets(analysis, "Server", UKO_OO + "inheritsFrom") == {
        (("internal.server.Base", 0.9),),
        (("github.com.acme.app.v2.internal.store.Store", 0.9), ("internal.store.Store", 0.7)),
    }
    # io is not imported by the file: io.Closer cannot be named; Named is in the package.
    assert targets(analysis, "Handler", UKO_OO + "inheritsFrom") == {(("internal.server.Named", 0.9),)}


def test_imports_become_nodes_and_dependencies() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    imports = {e.key: e.name for e in analysis.entities if UKO_CODE + "Import" in e.types}
    assert imports == {
        "import/fmt": "fmt",
        "import/strings": "str",
        "import/math": ".",
        "import/embed": "_",
        "import/github.com.acme.app.v2.internal.store": "store",
        "import/gopkg.in.yaml.v3": "yaml",
    }
    assert values(analysis, "import/gopkg.in.yaml.v3", UKO_CODE + "importedName") == ["gopkg.in/yaml.v3"]
    assert targets(analysis, "import/strings", UKO + "dependsOn") == {(("strings", 0.9),)}


def test_calls_by_package_alias_same_package_and_receiver() -> None:
    analysis = analyze(GO, "internal/server/server.go", SERVER)
    assert targets(analysis, "Server.Start") == {
        (("internal.server.Server.init", 0.8),),
        (("fmt.Println", 0.9),),
        (("strings.ToUpper", 0.9),),
        (("github.com.acme.app.v2.internal.store.Open", 0.9), ("internal.store.Open", 0.7)),
        (("gopkg.in.yaml.v3.Marshal", 0.9),),
        (("internal.server.helper", 0.9), ("math.helper", 0.7)),
        (("internal.server.Sqrt", 0.9), ("math.Sqrt", 0.7)),
        (("internal.server.Server.Stop", 0.9),),
    }
    assert refs(analysis, "New") == []  # s is a local variable, not a receiver: nothing is claimed


def test_tests_and_what_they_test() -> None:
    analysis = analyze(GO, "internal/server/server_test.go", SERVER_TEST)
    assert kinds(analysis, "TestNew") == {"TestCase", "Function"}
    assert targets(analysis, "TestNew", TESTS) == {(("internal.server.New", 0.7), ("internal.server.new", 0.7))}
    assert targets(analysis, "TestServer_Start", TESTS) == {
        (
            ("internal.server.Server.Start", 0.7),
            ("internal.server.Server", 0.7),
            ("internal.server.server.Start", 0.7),
            ("internal.server.server", 0.7),
        )
    }
    assert targets(analysis, "TestNew") == {(("internal.server.New", 0.9),)}
    for name in ("TestMain", "Testify", "BenchmarkNew"):  # not func TestXxx(t *testing.T)
        assert kinds(analysis, name) == {"Function"}, name
    assert kinds(analysis, "TestHelper") == {"TestCase", "Function"}
    elsewhere = analyze(GO, "internal/server/server.go", SERVER_TEST)  # not a _test.go file
    assert kinds(elsewhere, "TestNew") == {"Function"} and refs(elsewhere, "TestNew", TESTS) == []


def test_parse_errors_are_problems_naming_hidden_definitions() -> None:
    source = "package p\n\nfunc good() {}\n\ntype S struct { a int,, func lost() {} }\n\nfunc after() {}\n"
    analysis = analyze(GO, "p/p.go", source)
    assert [(p.message, p.span.start_line, p.hidden) for p in analysis.problems] == [
        ("syntax error", 5, ("type S", "func lost"))
    ]
    assert [e.key for e in analysis.entities] == ["", "good", "after"]
    rows = select(graph(GO, "p/p.go", source), f"SELECT ?n WHERE {{ <{iri('p/p.go')}> ca:parseErrorCount ?n }}")
    assert int(rows[0]["n"]) == len(analysis.problems)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00garbage",
        b"package p\nfunc f() {" * 3000,
        b"package p\nfunc f() { x := " + b"(" * 3000 + b" }",
        b"package p\nvar x = " + b"[]int{" * 3000 + b"}" * 3000,
        b"package p\nfunc (",
        "package p\n// Grüße\nfunc Grüße() {}\n".encode(),
    ],
)
def test_bad_input_never_raises_and_renders(data: bytes) -> None:
    analysis = analyze(GO, "p/x.go", data)
    assert analysis.entities[0].key == ""
    for node in analysis.entities[:5]:
        for level in ("MODULE_LISTING", "SIGNATURES", "STRUCTURAL_OUTLINE", "NEAR_COMPLETE", "FULL_SOURCE"):
            request = RenderRequest(node.key, node.types, "p/x.go", data, node.span, level, 0)
            assert isinstance(GO.render(request), str)


def test_a_file_without_package_clause_is_named_by_its_stem() -> None:
    assert analyze(GO, "tool.go", b"").entities[0].symbols == (("go", "tool"),)
    assert analyze(GO, "cmd/tool.go", b"func f() {}").entities[0].symbols == (("go", "cmd"),)


def test_broken_utf8_keeps_names_and_byte_spans() -> None:
    data = b"package p\n// \xff\xfe\nfunc Caf\xc3\xa9() {}\n"
    analysis = analyze(GO, "p/x.go", data)
    node = entity(analysis, "Café")
    assert data[node.span.start_byte : node.span.end_byte] == b"func Caf\xc3\xa9() {}"
    assert values(analysis, "Café", UKO_CODE + "docstring") == ["\ufffd\ufffd"]


def test_triples_load_and_answer_queries() -> None:
    store = graph(GO, "internal/server/server.go", SERVER)
    rows = select(
        store,
        f"SELECT ?name WHERE {{ <{iri('internal/server/server.go', 'Server')}> uko:contains ?m . "
        "?m a uko-go:Method ; uko:name ?name } ORDER BY ?name",
    )
    assert [r["name"] for r in rows] == ["Start", "Stop", "init"]
    rows = select(store, "SELECT ?t WHERE { ?f uko-go:structTag ?t }")
    assert [r["t"] for r in rows] == ['json:"name"', 'json:"name"']


# ── renderings ────────────────────────────────────────────────────

OUTLINE = """\
// Package shop sells.
package shop

import (
	"errors"
	"log"
)

// Cart holds items.
type Cart struct {
	Items []string
	total int
}

// Add adds one.
func (c *Cart) Add(item string) error {
	// reject empties
	if item == "" {
		return errors.New("empty")
	} else if len(c.Items) > 10 {
		log.Printf("full")
		panic("full")
	}
	for i := range c.Items {
		switch c.Items[i] {
		case item:
			return nil
		default:
			c.total++
		}
	}
	c.Items = append(c.Items, item)
	return nil
}

// Pricer prices.
type Pricer interface {
	// Price of one.
	Price(item string) int
}
"""


@pytest.mark.parametrize("key", ["", "Cart", "Cart.Add", "Pricer", "Pricer.Price", "Cart.Items"])
def test_every_level_of_each_kind_renders(key: str) -> None:
    analysis = analyze(GO, "shop/shop.go", OUTLINE)
    node = entity(analysis, key)
    levels = [level.name for level in effective_levels(expand_term(node.types[0]))]
    assert levels[0] == "MODULE_LISTING" and levels[-1] == "FULL_SOURCE"
    shown = {level: render("shop/shop.go", OUTLINE, key, level) for level in levels}
    assert all(text.strip() for text in shown.values())
    start, end = (node.span.start_byte, node.span.end_byte) if node.span else (0, len(OUTLINE.encode()))
    assert shown["FULL_SOURCE"] == OUTLINE.encode()[start:end].decode()
    outline = [n for n in ("MODULE_GRAPH", "MEMBER_LISTING", "CLASS_HIERARCHY") if n in shown]
    for smaller, larger in itertools.pairwise(outline):
        assert set(shown[smaller].splitlines()) <= set(shown[larger].splitlines()), (smaller, larger)


def test_levels_of_a_method_add_what_the_spec_says() -> None:
    level = {name: render("shop/shop.go", OUTLINE, "Cart.Add", name) for name in LEVELS}
    assert level["MODULE_LISTING"] == "func (*Cart) Add"
    assert level["MODULE_GRAPH"] == "func (*Cart) Add\n  → errors.New\n  → log.Printf"  # not len, panic, append
    assert level["MEMBER_SUMMARY"].splitlines()[0] == "func (*Cart) Add — Add adds one."
    assert level["SIGNATURES"] == "func (c *Cart) Add(item string) error"
    assert level["SIGNATURES_WITH_DOCS"] == "// Add adds one.\nfunc (c *Cart) Add(item string) error"
    assert level["VISIBILITY_ANNOTATED"] == "// Add adds one.\nfunc (c *Cart) Add(item string) error  // exported"
    assert level["STRUCTURAL_OUTLINE"].splitlines()[1:] == [
        "func (c *Cart) Add(item string) error {  // exported",
        "\tif …",
        "\telse if …",
        "\tfor …",
        "\t\tswitch …",
        "\t\t\tcase …:",
        "\t\t\tdefault:",
        "}",
    ]
    key = level["KEY_LOGIC"].splitlines()
    for line in ('\t\treturn errors.New("empty")', '\t\tpanic("full")', "\t\t\t\treturn nil", "\treturn nil"):
        assert line in key
    assert "\tc.Items = append(c.Items, item)" in key
    near = level["NEAR_COMPLETE"]
    assert "reject empties" not in near and "log.Printf" not in near and 'panic("full")' in near
    assert level["MODULE_GRAPH"] == level["MEMBER_LISTING"] == level["CLASS_HIERARCHY"]
    assert len(set(level.values())) == len(LEVELS) - 2


def test_levels_of_the_file_and_a_struct() -> None:
    file = {name: render("shop/shop.go", OUTLINE, "", name) for name in LEVELS}
    assert file["MODULE_LISTING"] == "package shop (shop)"
    assert file["MODULE_GRAPH"] == "package shop (shop)\n  → errors\n  → log"
    assert "  type Cart\n    field Items\n    field total\n  func (*Cart) Add\n  type Pricer" in file["MEMBER_LISTING"]
    assert "  type Pricer — Pricer prices.\n    method Price — Price of one." in file["MEMBER_SUMMARY"]
    assert file["SIGNATURES"].splitlines()[:5] == [
        "package shop",
        'import "errors"',
        'import "log"',
        "type Cart struct {",
        "\tItems []string",
    ]
    assert (
        "// Pricer prices.\ntype Pricer interface {\n\t// Price of one.\n\tPrice(item string) int\n}"
        in file["SIGNATURES_WITH_DOCS"]
    )
    assert "\ttotal int  // unexported" in file["VISIBILITY_ANNOTATED"]
    assert 'import (\n\t"errors"' not in file["NEAR_COMPLETE"] and "// Cart holds items." in file["NEAR_COMPLETE"]
    assert file["FULL_SOURCE"] == OUTLINE
    embedded = "package p\ntype A struct {\n\tB\n\t*C\n\tx int\n}\n"
    assert render("p/p.go", embedded, "A", "CLASS_HIERARCHY").endswith("  ⇒ A embeds B\n  ⇒ A embeds C")
    assert render("p/p.go", embedded, "A", "MODULE_GRAPH") == "type A\n  → B\n  → C"


# ── real Go: the go-jsonnet module in gojsonnet's sdist ───────────

ORACLE = "(source_file (type_declaration (type_spec type: (struct_type)) @struct))"  # not local types
FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?\w+", re.M)
BIG = 1_000_000  # astgen/stdast.go (8.6 MB of generated AST) is analyzed by its own test


def test_gojsonnet_go_sources() -> None:
    """Every .go file but one giant: no error, and as many functions, methods and structs as oracles find."""
    root = corpus_dir("gojsonnet-0.22.0")
    files = sorted(p for p in root.rglob("*.go") if p.stat().st_size < BIG)
    assert len(files) == 61
    language = ts.Language(tree_sitter_go.language())
    parser, query = ts.Parser(language), ts.Query(language, ORACLE)
    elapsed, size, tests, calls = 0.0, 0, 0, 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        started = time.perf_counter()
        analysis = analyze(GO, path.relative_to(root).as_posix(), data)
        elapsed += time.perf_counter() - started
        found = ts.QueryCursor(query).captures(parser.parse(data).root_node)
        functions = [
            e
            for e in analysis.entities
            if UKO_GO + "Function" in e.types or (UKO_GO + "Method" in e.types and UKO_GO + "receiverType" in e.values)
        ]
        structs = [e for e in analysis.entities if UKO_GO + "Struct" in e.types]
        assert len(functions) == len(FUNC.findall(data.decode())), path
        assert len(structs) == len(found.get("struct", [])), path
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), path
        assert analysis.problems == [], path
        tests += sum(1 for e in analysis.entities if UKO_CODE + "TestCase" in e.types)
        calls += sum(1 for r in analysis.references if r.predicate == CALLS)
    assert tests > 20 and calls > 1000
    print(f"\ngojsonnet-0.22.0: {len(files)} .go files, {size / 1e6:.2f} MB analyzed in {elapsed:.2f} s")
    assert elapsed < 15


@pytest.mark.slow
def test_gojsonnet_generated_ast() -> None:
    """astgen/stdast.go: one 8.6 MB variable initializer of 2 million nodes."""
    path = corpus_dir("gojsonnet-0.22.0") / "astgen" / "stdast.go"
    data = path.read_bytes()
    started = time.perf_counter()
    analysis = analyze(GO, "astgen/stdast.go", data)
    elapsed = time.perf_counter() - started
    assert analysis.problems == []
    assert len(FUNC.findall(data.decode())) == sum(1 for e in analysis.entities if UKO_GO + "Function" in e.types)
    print(f"\nstdast.go: {len(data) / 1e6:.1f} MB analyzed in {elapsed:.1f} s")


def test_references_point_a_language_server_at_the_name() -> None:
    """Each reference carries the (row, byte column) of the name a language server resolves."""
    text = (
        "package shapes\n"
        "\n"
        "import (\n"
        '\tf "fmt"\n'
        '\t"github.com/acme/geo/v2"\n'
        '\t"testing"\n'
        ")\n"
        "\n"
        "type Circle struct {\n"
        "\tgeo.Shape\n"
        "\t*Base\n"
        "\tr float64\n"
        "}\n"
        "\n"
        'func (c *Circle) Area() float64 { s := "é"; f.Println(s); c.radius(); helper(); return geo.Pi * c.r }\n'
        "\n"
        "func TestCircle_Area(t *testing.T) { Circle.Area(Circle{}) }\n"
    )
    analysis = analyze(GO, "shapes/circle_test.go", text)
    lines = text.encode().split(b"\n")
    named = {
        (r.predicate.rsplit("#", 1)[1], lines[r.position[0]][r.position[1] :].decode()[:7])
        for r in analysis.references
        if r.position
    }
    assert ("dependsOn", 'fmt"') in named  # inside the import path: its last segment
    assert ("dependsOn", 'v2"') in named
    assert ("inheritsFrom", "Shape") in named
    assert ("inheritsFrom", "Base") in named
    assert ("calls", "Println") in named  # the byte column counts the two-byte é before it
    assert ("calls", "radius(") in named
    assert ("calls", "helper(") in named
    assert ("calls", "Area(Ci") in named
    # TestXxx -> Xxx is a naming convention, not a name in the text.
    assert [r.position for r in analysis.references if r.predicate == TESTS] == [None]
