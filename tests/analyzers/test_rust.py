"""The Rust analyzer: module paths, items, impls, uses, calls, tests, parse errors, renderings, a real crate."""

from __future__ import annotations

import itertools
import json
import time

import pytest
import tree_sitter as ts
import tree_sitter_rust

from cleveragents.analyzers import _brace
from cleveragents.analyzers._brace import LEVELS
from cleveragents.analyzers.rust import ANALYZERS, module_path
from cleveragents.indexing.model import Analyzer, FileAnalysis, Reference, RenderRequest
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.tbox.lookup import expand_term
from cleveragents.terms import UKO, UKO_CODE, UKO_OO, UKO_RS
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

RUST = ANALYZERS[0]
CALLS = UKO_CODE + "calls"
TESTS = UKO_CODE + "testsCallable"

SHAPES = """\
//! Geometry.
//! Second line.
use std::collections::HashMap;
use std::fmt::{self, Display as Show};
use crate::util::{helper, other as renamed};
use super::sibling;
use serde::Serialize;

/// A point.
#[derive(Debug, Clone)]
pub(crate) struct Point<'a, T: Clone> where T: Copy {
    /// The x.
    pub x: i32,
    y: &'a T,
}

pub struct Pair(pub u8, String);

enum Shape {
    Circle(f64),
    Square { side: f64 },
    Empty,
}

pub trait Area: Show {
    fn area(&self) -> f64;
    fn describe(&self) -> String { self.area().to_string() }
}

impl<'a, T: Clone + Copy> Point<'a, T> {
    pub const ORIGIN: i32 = 0;
    pub async unsafe fn new(x: i32, y: &'a T, mut rest: Vec<u8>) -> Self {
        let map = HashMap::new();
        Self::check(x);
        helper(renamed(1));
        fmt::format(format_args!(""));
        Point { x, y }
    }
    fn check(x: i32) -> bool { x > 0 }
    fn twice(&self) -> i32 { self.norm() * 2 }
    fn norm(&self) -> i32 { self.x }
}

impl<'a, T: Clone + Copy> Area for Point<'a, T> {
    fn area(&self) -> f64 { 0.0 }
}

impl fmt::Display for Vec<Shape> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

pub type Grid = HashMap<(i32, i32), Shape>;
const LIMIT: usize = 10;
static mut COUNTER: u32 = 0;

#[macro_export]
macro_rules! square { ($x:expr) => { $x * $x }; }

pub mod inner {
    //! Inner docs.
    pub fn deep() -> u8 { super::free(1) }
}

mod outlined;

pub const extern "C" fn free(n: u8) -> u8 { crate::util::helper(n); sibling::go(); inner::deep(); n }
"""

TESTS_MODULE = """\
pub fn add(a: i32, b: i32) -> i32 { a + b }
fn validate() -> bool { true }

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> i32 { 2 }

    #[test]
    fn adds() {
        assert_eq!(add(fixture(), 2), 4);
        assert!(validate());
    }

    #[tokio::test]
    async fn adds_async() { let _ = crate::shapes::add(1, 1); }
}
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
    node = entity(analyze(RUST, path, data), key)
    depth = LEVELS.index(level) if level in LEVELS else 99
    return RUST.render(RenderRequest(key, node.types, path, data, node.span, level, depth))


def test_is_a_registered_analyzer_for_rs_files() -> None:
    assert isinstance(RUST, Analyzer)
    assert RUST.name == "rust" and RUST.handles("src/lib.rs") and not RUST.handles("src/lib.rsx")
    assert RUST.file_types("src/lib.rs") == (UKO_RS + "Crate", UKO_RS + "Module")
    assert analyze(RUST, "src/main.rs", "fn main() {}").entities[0].types == (UKO_RS + "Crate", UKO_RS + "Module")
    assert RUST.file_types("src/a/b.rs") == (UKO_RS + "Module",)


@pytest.mark.parametrize(
    ("path", "qual", "alias"),
    [
        ("src/lib.rs", "crate", None),
        ("src/main.rs", "crate", None),
        ("src/a/b.rs", "crate.a.b", None),
        ("src/a/mod.rs", "crate.a", None),
        ("crates/my-crate/src/x/y.rs", "crate.x.y", "my_crate"),
        ("pydantic_core-2.27.1/src/lib.rs", "crate", "pydantic_core"),
        ("src/rust/src/x509/ocsp.rs", "crate.x509.ocsp", "rust"),
        ("build.rs", "crate.build", None),
        ("tests/it.rs", "crate.tests.it", None),
    ],
)
def test_module_path_from_the_place_under_src(path: str, qual: str, alias: str | None) -> None:
    assert module_path(path) == (qual, alias)


def test_file_node_language_qualified_name_symbols_and_inner_docs() -> None:
    analysis = analyze(RUST, "geo/src/shapes.rs", SHAPES)
    file = analysis.entities[0]
    assert (file.key, file.types, file.name, file.parent) == ("", (UKO_RS + "Module",), "shapes.rs", None)
    assert values(analysis, "", UKO_CODE + "language") == ["rust"]
    assert values(analysis, "", UKO_CODE + "qualifiedName") == ["crate.shapes"]
    assert file.symbols == (("rust", "crate.shapes"), ("rust", "geo.shapes"))
    assert values(analysis, "", UKO_CODE + "docstring") == ["Geometry.\nSecond line."]
    doc = entity(analysis, "/doc")
    assert (doc.types, doc.parent, doc.span.start_line, doc.span.end_line) == ((UKO_CODE + "Docstring",), "", 1, 3)
    assert values(analysis, "inner", UKO_CODE + "docstring") == ["Inner docs."]
    assert analysis.problems == []


def test_items_of_every_kind_with_keys_types_and_symbols() -> None:
    analysis = analyze(RUST, "src/shapes.rs", SHAPES)
    expected = {
        "Point": {"Struct"},
        "Point.x": {"Field"},
        "Pair": {"Struct"},
        "Pair.0": {"Field"},
        "Pair.1": {"Field"},
        "Shape": {"Enum"},
        "Shape.Circle": {"Variant"},
        "Shape.Square": {"Variant"},
        "Area": {"Trait"},
        "Area.area": {"Method"},
        "Area.describe": {"Method"},
        "impl/Point": {"Impl"},
        "impl/Area for Point": {"Impl"},
        "impl/fmt::Display for Vec": {"Impl"},
        "Point.ORIGIN": {"Variable"},
        "Point.new": {"Method"},
        "Point.area": {"Method"},
        "Vec.fmt": {"Method"},
        "Grid": {"TypeAlias"},
        "LIMIT": {"Variable"},
        "COUNTER": {"Variable"},
        "square": {"Macro"},
        "inner": {"Module"},
        "inner.deep": {"Function"},
        "free": {"Function"},
    }
    for key, kind in expected.items():
        assert kinds(analysis, key) == kind, key
    assert "outlined" not in {e.key for e in analysis.entities}  # `mod outlined;` is another file
    assert entity(analysis, "Point.new").symbols == (("rust", "crate.shapes.Point.new"),)
    assert entity(analysis, "inner.deep").symbols == (("rust", "crate.shapes.inner.deep"),)
    assert values(analysis, "square", UKO_CODE + "qualifiedName") == ["crate.square"]  # #[macro_export]
    assert len({e.key for e in analysis.entities}) == len(analysis.entities)


def test_methods_attach_to_their_type_and_impls_link_traits() -> None:
    analysis = analyze(RUST, "src/shapes.rs", SHAPES)
    point = entity(analysis, "Point")
    assert entity(analysis, "Point.new").parent == "Point"
    assert entity(analysis, "Point.area").parent == "Point"
    assert (UKO_OO + "hasMethod", "Point.twice") in point.links
    assert (UKO_RS + "implFor", "Point") in entity(analysis, "impl/Area for Point").links
    assert entity(analysis, "Area.describe").parent == "Area"
    assert targets(analysis, "Point", UKO_OO + "implements") == {(("crate.shapes.Area", 0.9),)}
    # A foreign type: the methods stay in the impl block, the impl names its type, the file the trait.
    assert entity(analysis, "Vec.fmt").parent == "impl/fmt::Display for Vec"
    [for_type] = refs(analysis, "impl/fmt::Display for Vec", UKO_RS + "implFor")
    assert (for_type.targets, for_type.simple_name) == ((), "Vec")
    assert targets(analysis, "", UKO_OO + "implements") == {(("std.fmt.Display", 0.9),)}
    supertrait = refs(analysis, "Area", UKO_OO + "inheritsFrom")
    assert [r.targets for r in supertrait] == [(("std.fmt.Display", 0.9),)]


def test_modifiers_visibility_attributes_and_generics() -> None:
    analysis = analyze(RUST, "src/shapes.rs", SHAPES)
    assert values(analysis, "Point", UKO_CODE + "visibility") == ["pub(crate)"]
    assert values(analysis, "Point", UKO_CODE + "hasDecorator") == ["derive(Debug, Clone)"]
    assert values(analysis, "Point", UKO_RS + "lifetimeParameters") == ["<'a>"]
    assert values(analysis, "Point", UKO_RS + "traitBounds") == ["<'a, T: Clone> where T: Copy"]
    assert values(analysis, "Point.x", UKO_CODE + "visibility") == ["public"]
    assert values(analysis, "Point.y", UKO_CODE + "visibility") == ["private"]
    assert values(analysis, "Point.new", UKO_CODE + "modifiers") == ["async", "unsafe"]
    assert values(analysis, "free", UKO_CODE + "modifiers") == ["const", "extern"]
    assert values(analysis, "COUNTER", UKO_CODE + "modifiers") == ["static", "mut"]
    assert values(analysis, "LIMIT", UKO_CODE + "modifiers") == ["const"]
    assert values(analysis, "Area.area", UKO_CODE + "visibility") == ["public"]  # as visible as the trait
    assert values(analysis, "Point.check", UKO_CODE + "visibility") == ["private"]
    assert values(analysis, "Point", UKO_CODE + "docstring") == ["A point."]
    assert entity(analysis, "Point.x/doc").parent == "Point.x"


def test_signatures_parameters_and_return_types() -> None:
    analysis = analyze(RUST, "src/shapes.rs", SHAPES)
    assert values(analysis, "Point.new", UKO_CODE + "signature") == [
        "pub async unsafe fn new(x: i32, y: &'a T, mut rest: Vec<u8>) -> Self"
    ]
    assert json.loads(str(values(analysis, "Point.new", UKO_CODE + "hasParameters")[0])) == [
        {"name": "x", "type": "i32", "default": None, "kind": "positional"},
        {"name": "y", "type": "&'a T", "default": None, "kind": "positional"},
        {"name": "rest", "type": "Vec<u8>", "default": None, "kind": "positional"},
    ]
    assert values(analysis, "Point.new", UKO_CODE + "hasReturnType") == ["Self"]
    self_param = json.loads(str(values(analysis, "Point.twice", UKO_CODE + "hasParameters")[0]))
    assert self_param == [{"name": "self", "type": "&self", "default": None, "kind": "self"}]
    assert values(analysis, "Point", UKO_CODE + "signature") == ["pub(crate) struct Point<'a, T: Clone> where T: Copy"]
    assert values(analysis, "LIMIT", UKO_CODE + "signature") == ["const LIMIT: usize = 10;"]


def test_uses_become_imports_with_resolved_targets() -> None:
    analysis = analyze(RUST, "src/geo/shapes.rs", SHAPES)
    imports = {e.key: e for e in analysis.entities if UKO_CODE + "Import" in e.types}
    assert set(imports) == {
        "import/std.collections.HashMap",
        "import/std.fmt",
        "import/std.fmt.Display",
        "import/crate.util.helper",
        "import/crate.util.other",
        "import/crate.geo.sibling",
        "import/serde.Serialize",
    }
    assert imports["import/std.fmt.Display"].name == "Show"
    assert values(analysis, "import/crate.geo.sibling", UKO_CODE + "importedName") == ["super::sibling"]
    depends = {r.source: r.targets for r in analysis.references if r.predicate == UKO + "dependsOn"}
    assert depends["import/crate.util.other"] == (("crate.util.other", 0.9),)
    assert depends["import/serde.Serialize"] == (("serde.Serialize", 0.9), ("serde", 0.5))
    assert depends["import/crate.geo.sibling"] == (("crate.geo.sibling", 0.9),)


def test_calls_resolve_through_uses_the_module_self_and_paths() -> None:
    analysis = analyze(RUST, "src/shapes.rs", SHAPES)
    assert targets(analysis, "Point.new") == {
        (("std.collections.HashMap.new", 0.9),),
        (("crate.shapes.Point.check", 0.8),),
        (("crate.util.helper", 0.9),),
        (("crate.util.other", 0.9),),
        (("std.fmt.format", 0.9),),
    }
    assert targets(analysis, "Point.twice") == {(("crate.shapes.Point.norm", 0.8),)}
    assert targets(analysis, "Area.describe") == {(("crate.shapes.Area.area", 0.8),)}
    assert targets(analysis, "free") == {
        (("crate.util.helper", 0.9),),
        (("crate.sibling.go", 0.9),),
        (("crate.shapes.inner.deep", 0.9),),
    }
    assert targets(analysis, "inner.deep") == {(("crate.shapes.free", 0.9),)}
    assert all(0 < c < 1 for r in analysis.references for _, c in r.targets)


def test_unresolved_bare_calls_fall_back_to_the_simple_name() -> None:
    analysis = analyze(RUST, "src/x.rs", "fn f() { g(); Some(1); let v = Vec::new(); v.push(1); }")
    found = refs(analysis, "f")
    assert [(r.targets, r.simple_name) for r in found] == [((), "g"), ((("Vec.new", 0.9),), None)]


def test_tests_and_what_they_test() -> None:
    analysis = analyze(RUST, "src/shapes.rs", TESTS_MODULE)
    assert kinds(analysis, "tests.adds") == {"TestCase", "Function"}
    assert kinds(analysis, "tests.adds_async") == {"TestCase", "Function"}
    assert kinds(analysis, "tests.fixture") == {"Function"}
    # Calls in assert_eq!'s arguments are found although macro arguments are not parsed.
    assert targets(analysis, "tests.adds") == {
        (("crate.shapes.add", 0.7),),
        (("crate.shapes.tests.fixture", 0.9),),
        (("crate.shapes.validate", 0.7),),
    }
    assert targets(analysis, "tests.adds", TESTS) == {(("crate.shapes.add", 0.7),), (("crate.shapes.validate", 0.7),)}
    assert targets(analysis, "tests.adds_async", TESTS) == {(("crate.shapes.add", 0.7),)}
    assert refs(analysis, "tests.fixture", TESTS) == []
    assert values(analysis, "tests", UKO_CODE + "hasDecorator") == ["cfg(test)"]


def test_local_items_and_uses_inside_bodies() -> None:
    source = "fn outer() {\n    use std::mem::swap;\n    fn local() { swap(); }\n    local();\n}\n"
    analysis = analyze(RUST, "src/x.rs", source)
    assert entity(analysis, "local").parent == "outer"
    assert entity(analysis, "import/std.mem.swap").parent == "outer"
    assert targets(analysis, "local") == {(("std.mem.swap", 0.9),)}
    assert targets(analysis, "outer") == {(("crate.x.local", 0.9),)}


def test_parse_errors_are_problems_naming_hidden_definitions() -> None:
    source = "fn good() -> u8 { 1 }\nstruct S { a: u8,, fn lost() {} }\npub fn after() {}\n"
    analysis = analyze(RUST, "src/x.rs", source)
    assert [p.hidden for p in analysis.problems] == [(), ("fn lost",)]
    assert analysis.problems[1].span.start_line == 2
    assert {e.key for e in analysis.entities} == {"", "good", "S", "S.a", "after"}
    store = graph(RUST, "src/x.rs", source)
    rows = select(store, f"SELECT ?n WHERE {{ <{iri('src/x.rs')}> ca:parseErrorCount ?n }}")
    assert int(rows[0]["n"]) == len(analysis.problems)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00garbage",
        b"fn f() {" * 3000,
        b"fn f() { " + b"(" * 3000 + b" }",
        b"fn f() { " + b"{" * 3000 + b"}" * 3000 + b" }",
        b"impl for {} trait mod ::: use ;;",
        "/// Dokument \u00e4\u00f6\nfn gr\u00fc\u00dfe() {}\n".encode(),
    ],
)
def test_bad_input_never_raises_and_renders(data: bytes) -> None:
    analysis = analyze(RUST, "src/x.rs", data)
    assert analysis.entities[0].key == ""
    for node in analysis.entities[:5]:
        for level in ("MODULE_LISTING", "SIGNATURES", "STRUCTURAL_OUTLINE", "NEAR_COMPLETE", "FULL_SOURCE"):
            request = RenderRequest(node.key, node.types, "src/x.rs", data, node.span, level, 0)
            assert isinstance(RUST.render(request), str)


def test_a_huge_error_region_loses_calls_not_declarations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_brace, "ERROR_CHILDREN_LIMIT", 3)
    source = "// note\nfn f() { g(); }\nstruct S;\nfn h() { ((((( }\n"
    analysis = analyze(RUST, "src/x.rs", source)
    assert analysis.problems[-1].message.startswith("calls not collected: a syntax error region of ")
    assert [e.key for e in analysis.entities] == ["", "f", "S", "h"] and analysis.references == []
    assert render("src/x.rs", source, "f", "MODULE_GRAPH") == "fn f\n  → g"  # f itself is sound
    assert render("src/x.rs", source, "", "NEAR_COMPLETE") == source  # the file is not: its text as is


def test_broken_utf8_keeps_names_and_byte_spans() -> None:
    data = b"// \xff\xfe\nfn caf\xc3\xa9() {}\nstruct S { a: u8 }\n"
    analysis = analyze(RUST, "src/x.rs", data)
    node = entity(analysis, "café")
    assert data[node.span.start_byte : node.span.end_byte] == b"fn caf\xc3\xa9() {}"
    assert render("src/x.rs", data, "S", "FULL_SOURCE") == "struct S { a: u8 }"


def test_triples_load_and_answer_queries() -> None:
    store = graph(RUST, "src/shapes.rs", SHAPES)
    rows = select(
        store,
        f"SELECT ?field WHERE {{ <{iri('src/shapes.rs', 'Point')}> a uko-rs:Struct ; uko:contains ?f . "
        "?f a uko-code:Field ; uko:name ?field } ORDER BY ?field",
    )
    assert [r["field"] for r in rows] == ["x", "y"]
    rows = select(store, f"SELECT ?m WHERE {{ <{iri('src/shapes.rs', 'Point')}> uko-oo:hasMethod ?m }}")
    assert len(rows) == 5  # new, check, twice, norm, area
    rows = select(store, "SELECT ?d WHERE { ?s uko-code:docstring ?d ; a uko-rs:Struct }")
    assert [r["d"] for r in rows] == ["A point."]


# ── renderings ────────────────────────────────────────────────────

OUTLINE = """\
use std::io;

/// Parses.
/// Really.
#[inline]
pub fn parse(input: &str) -> Result<u32, String> {
    // count digits
    let mut total = 0;
    for c in input.chars() {
        if c.is_ascii_digit() {
            total += 1;
        } else if c == '-' {
            return Err("negative".into());
        } else {
            log::debug!("skip {}", c);
        }
    }
    match total {
        0 => helper(),
        _ => {}
    }
    assert!(total < 100);
    Ok(total)
}

pub struct Config {
    /// Name.
    pub name: String,
    level: u8,
}

impl Config {
    pub fn new() -> Self { Self { name: String::new(), level: 0 } }
}

pub trait Source {
    /// Reads.
    fn read(&self) -> u8;
}

impl Source for Config {
    fn read(&self) -> u8 { if self.level > 0 { self.level } else { 0 } }
}
"""


def type_levels(key: str) -> list[str]:
    analysis = analyze(RUST, "src/p.rs", OUTLINE)
    return [level.name for level in effective_levels(expand_term(entity(analysis, key).types[0]))]


@pytest.mark.parametrize("key", ["", "parse", "Config", "Config.new", "Source", "Config.read", "Config.name"])
def test_every_level_of_each_kind_renders(key: str) -> None:
    analysis = analyze(RUST, "src/p.rs", OUTLINE)
    node = entity(analysis, key)
    levels = type_levels(key)
    assert levels[0] == "MODULE_LISTING" and levels[-1] == "FULL_SOURCE"
    shown = {level: render("src/p.rs", OUTLINE, key, level) for level in levels}
    assert all(text.strip() for text in shown.values())
    start, end = (node.span.start_byte, node.span.end_byte) if node.span else (0, len(OUTLINE.encode()))
    assert shown["FULL_SOURCE"] == OUTLINE.encode()[start:end].decode()
    outline = [n for n in ("MODULE_GRAPH", "MEMBER_LISTING", "CLASS_HIERARCHY") if n in shown]
    for smaller, larger in itertools.pairwise(outline):  # each listing level adds to the one before
        assert set(shown[smaller].splitlines()) <= set(shown[larger].splitlines()), (smaller, larger)
    assert all(shown[n].startswith(shown["MODULE_LISTING"]) for n in (*outline, "MEMBER_SUMMARY"))


def test_levels_of_a_function_add_what_the_spec_says() -> None:
    level = {name: render("src/p.rs", OUTLINE, "parse", name) for name in LEVELS}
    assert level["MODULE_LISTING"] == "fn parse"
    assert level["MODULE_GRAPH"] == "fn parse\n  → helper"  # not the prelude's Ok and Err
    assert level["MEMBER_SUMMARY"].splitlines()[0] == "fn parse — Parses."
    assert level["SIGNATURES"] == "fn parse(input: &str) -> Result<u32, String>;"
    assert level["SIGNATURES_WITH_DOCS"] == "/// Parses.\n/// Really.\nfn parse(input: &str) -> Result<u32, String>;"
    assert level["VISIBILITY_ANNOTATED"] == (
        "/// Parses.\n/// Really.\n#[inline]\npub fn parse(input: &str) -> Result<u32, String>;"
    )
    outline = level["STRUCTURAL_OUTLINE"]
    assert outline.splitlines()[3:] == [
        "pub fn parse(input: &str) -> Result<u32, String> {",
        "    for …",
        "        if …",
        "        else if …",
        "        else",
        "    match …",
        "        0 =>",
        "        _ =>",
        "}",
    ]
    key = level["KEY_LOGIC"]
    for line in ("    let mut total = 0;", "            total += 1", '            return Err("negative".into())'):
        assert line in key.splitlines()
    assert "    assert!(total < 100)" in key.splitlines() and "    Ok(total)" in key.splitlines()
    assert "            helper()" in key.splitlines()  # a match arm's value
    near = level["NEAR_COMPLETE"]
    assert "count digits" not in near and "log::debug!" not in near and "total += 1;" in near
    # A function has no members and no hierarchy: those levels add nothing to its dependencies.
    assert level["MODULE_GRAPH"] == level["MEMBER_LISTING"] == level["CLASS_HIERARCHY"]
    assert len(set(level.values())) == len(LEVELS) - 2


def test_levels_of_the_module_and_a_type() -> None:
    module = {name: render("src/p.rs", OUTLINE, "", name) for name in LEVELS}
    assert module["MODULE_LISTING"] == "mod crate.p"
    assert module["MODULE_GRAPH"] == "mod crate.p\n  → std::io"
    assert "  struct Config\n    field name\n    field level\n  impl Config\n    fn new" in module["MEMBER_LISTING"]
    assert "  ⇒ Config implements Source" in module["CLASS_HIERARCHY"]
    assert "  trait Source\n    fn read — Reads." in module["MEMBER_SUMMARY"]
    assert module["SIGNATURES"].splitlines()[:3] == [
        "use std::io;",
        "fn parse(input: &str) -> Result<u32, String>;",
        "struct Config {",
    ]
    assert "    name: String,\n    level: u8,\n}" in module["SIGNATURES"]
    assert "    /// Name.\n    name: String," in module["SIGNATURES_WITH_DOCS"]
    assert "pub struct Config {\n    /// Name.\n    pub name: String," in module["VISIBILITY_ANNOTATED"]
    assert "    fn read(&self) -> u8 {\n        if …\n        else\n    }" in module["STRUCTURAL_OUTLINE"]
    assert "    pub fn new() -> Self {\n        Self { name: String::new(), level: 0 }\n    }" in module["KEY_LOGIC"]
    assert "use std::io;" not in module["NEAR_COMPLETE"] and "/// Parses." in module["NEAR_COMPLETE"]
    assert module["FULL_SOURCE"] == OUTLINE
    config = {name: render("src/p.rs", OUTLINE, "Config", name) for name in LEVELS}
    assert config["MODULE_GRAPH"] == "struct Config\n  → String"
    assert config["CLASS_HIERARCHY"].endswith("  ⇒ Config implements Source")
    assert config["SIGNATURES"] == "struct Config {\n    name: String,\n    level: u8,\n}"
    trait = render("src/p.rs", OUTLINE, "Source", "SIGNATURES_WITH_DOCS")
    assert trait == "trait Source {\n    /// Reads.\n    fn read(&self) -> u8;\n}"


def test_rendering_docs_imports_and_unknown_levels() -> None:
    analysis = analyze(RUST, "src/p.rs", OUTLINE)
    doc = entity(analysis, "parse/doc")
    request = RenderRequest(doc.key, doc.types, "src/p.rs", OUTLINE.encode(), doc.span, "MODULE_LISTING", 0)
    assert RUST.render(request) == "/// Parses."
    with pytest.raises(ValueError, match="unknown detail level"):
        render("src/p.rs", OUTLINE, "parse", "WITH_TESTS")


# ── a real crate ──────────────────────────────────────────────────

ORACLE = "[(function_item) (function_signature_item)] @function [(struct_item) (union_item)] @struct"


def test_cryptography_rust_sources() -> None:
    """Every .rs file of cryptography's sdist: no error, and as many functions and structs as an oracle finds."""
    root = corpus_dir("cryptography-41.0.7")
    files = sorted(root.rglob("*.rs"))
    assert len(files) == 49
    language = ts.Language(tree_sitter_rust.language())
    parser, query = ts.Parser(language), ts.Query(language, ORACLE)
    elapsed, size, calls = 0.0, 0, 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        started = time.perf_counter()
        analysis = analyze(RUST, path.relative_to(root).as_posix(), data)
        elapsed += time.perf_counter() - started
        found = ts.QueryCursor(query).captures(parser.parse(data).root_node)
        functions = [e for e in analysis.entities if {UKO_RS + "Function", UKO_RS + "Method"} & set(e.types)]
        structs = [e for e in analysis.entities if UKO_RS + "Struct" in e.types]
        assert len(functions) == len(found.get("function", [])), path
        assert len(structs) == len(found.get("struct", [])), path
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), path
        assert analysis.problems == [], path
        calls += sum(1 for r in analysis.references if r.predicate == CALLS)
    assert calls > 1000
    print(f"\ncryptography-41.0.7: {len(files)} .rs files, {size / 1e6:.2f} MB analyzed in {elapsed:.2f} s")
    assert elapsed < 15


def test_references_point_a_language_server_at_the_name() -> None:
    """Each reference carries the (row, byte column) of the name a language server resolves."""
    text = (
        "use std::collections::HashMap;\n"
        "use crate::geo::{self, shapes::Polygon as Poly, units::*};\n"
        "trait Shape: fmt::Display + Area {}\n"
        "struct Circle;\n"
        "impl ext::Drawable<u8> for Circle {}\n"
        "impl Shape for &mut ext::Square<T> {}\n"
        "impl Circle {\n"
        '    fn area(&self) -> f64 { let s = "é"; self.radius(); geo::scale::<f64>(s);\n'
        '        println!("{}", fmt_it(1)); 0.0 }\n'
        "    fn radius(&self) -> f64 { 1.0 }\n"
        "}\n"
        "#[test]\n"
        "fn circle_area() { shapes_lib::area_of(); }\n"
    )
    analysis = analyze(RUST, "src/lib.rs", text)
    lines = text.encode().split(b"\n")
    named = {
        (r.predicate.rsplit("#", 1)[1], lines[r.position[0]][r.position[1] :].decode()[:7])
        for r in analysis.references
        if r.position
    }
    assert ("dependsOn", "HashMap") in named
    assert ("dependsOn", "geo::{s") in named  # `self` in a use list: the module it names
    assert ("dependsOn", "Polygon") in named
    assert ("dependsOn", "units::") in named  # a glob: the module it opens
    assert ("inheritsFrom", "Display") in named
    assert ("inheritsFrom", "Area {}") in named
    assert ("implements", "Drawabl") in named
    assert ("implFor", "Square<") in named
    assert ("implements", "Shape f") in named
    assert ("calls", "radius(") in named
    assert ("calls", "scale::") in named  # the byte column counts the two-byte é before it
    assert ("calls", "fmt_it(") in named  # inside a macro's arguments
    assert ("calls", "area_of") in named
    assert ("testsCallable", "area_of") in named
    assert all(r.position for r in analysis.references)


@pytest.mark.parametrize("target", ["u8", "&str", "[A]", "(u8, u8)", "fn()"])
def test_an_impl_for_a_type_that_is_not_a_path_keeps_the_file(target: str) -> None:
    """``impl Bound for u8`` used to raise IndexError in name resolution and drop the whole file."""
    analysis = analyze(
        RUST, "src/lib.rs", f"pub trait Bound {{ fn f(&self); }}\nimpl<A> Bound for {target} {{ fn f(&self) {{}} }}\n"
    )
    assert not analysis.problems
    keys = {e.key for e in analysis.entities}
    assert {"Bound", f"impl/Bound for {target}", "Bound.f"} <= keys
    implements = [r for r in analysis.references if r.predicate == UKO_OO + "implements"]
    assert [r.targets for r in implements] == [(("crate.Bound", 0.9),)]
