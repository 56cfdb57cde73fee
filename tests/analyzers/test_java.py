"""The Java analyzer: entities, references, tests, parse errors and renderings of real code."""

from __future__ import annotations

import itertools
import json
import time

import pytest
import tree_sitter as ts
import tree_sitter_java

from cleveragents.analyzers.java import ANALYZERS, Rank
from cleveragents.indexing.model import Analyzer, FileAnalysis, Reference, RenderRequest
from cleveragents.terms import UKO, UKO_CODE, UKO_JAVA, UKO_OO
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

JAVA = ANALYZERS[0]

CALLS = UKO_CODE + "calls"
TESTS = UKO_CODE + "testsCallable"


def refs(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> list[Reference]:
    return [r for r in analysis.references if r.source == source and r.predicate == predicate]


def targets(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> list[tuple[tuple[str, float], ...]]:
    return [r.targets for r in refs(analysis, source, predicate)]


def value(analysis: FileAnalysis, key: str, local: str) -> list[object]:
    return entity(analysis, key).values.get(UKO_CODE + local, [])


def render(path: str, source: str, key: str, level: str) -> str:
    analysis = analyze(JAVA, path, source)
    node = entity(analysis, key)
    request = RenderRequest(key, node.types, path, source.encode(), node.span, level, Rank[level].value)
    return JAVA.render(request)


AUTH = """\
package com.acme.auth;

import java.util.List;
import java.util.*;
import com.acme.store.Store;
import static org.junit.Assert.assertEquals;
import static java.lang.Math.*;

/**
 * Manages sessions.
 * Second line.
 */
@Deprecated
public final class AuthManager<T extends Comparable<T>> extends BaseManager<T> implements Runnable, Closeable {
    private static final int LIMIT = 3, SIZES[] = {1};
    protected Store store;

    /** Makes one. */
    public AuthManager(int retries, String... names) throws java.io.IOException {
        super(retries);
        this.run();
    }

    @Override
    public void run() { login("x"); }

    @SuppressWarnings("unchecked")
    public synchronized <R> List<R> login(final String user) { return null; }

    List<String> login(String user, int attempts) { Store.open(); return null; }

    static native void login();

    abstract void check();

    class Session { void touch() { run(); new Token(); } }

    static class Token {}
}
"""


# ── the file node, types and members ─────────────────────────────


def test_is_a_registered_analyzer_for_java_files() -> None:
    assert isinstance(JAVA, Analyzer)
    assert JAVA.name == "java"
    assert JAVA.handles("src/main/java/A.java") and not JAVA.handles("A.class")
    assert JAVA.file_types("A.java") == (UKO_JAVA + "CompilationUnit",)


def test_file_node_is_the_compilation_unit_named_by_package_and_stem() -> None:
    analysis = analyze(JAVA, "src/com/acme/auth/AuthManager.java", AUTH)
    unit = analysis.entities[0]
    assert unit.key == "" and unit.types == (UKO_JAVA + "CompilationUnit",)
    assert unit.values[UKO_CODE + "language"] == ["java"]
    assert unit.values[UKO_CODE + "qualifiedName"] == ["com.acme.auth.AuthManager"]
    assert unit.values[UKO_JAVA + "packageName"] == ["com.acme.auth"]
    # The public class answers to the file's qualified name; the file does not compete with it.
    assert unit.symbols == ()
    info = analyze(JAVA, "com/acme/package-info.java", "/** The package. */\npackage com.acme;\n")
    assert info.entities[0].symbols == (("java", "com.acme.package-info"),)
    assert entity(info, "/doc").types == (UKO_CODE + "Docstring",)


def test_types_of_every_kind_with_nested_keys_and_symbols() -> None:
    source = """package p;
class Outer { class Inner { interface Deep {} } }
interface Shape {}
enum Color { RED }
record Point(int x, int y) {}
@interface Marker {}
"""
    analysis = analyze(JAVA, "p/Outer.java", source)
    kinds = {
        "Outer": "Class",
        "Outer.Inner": "Class",
        "Outer.Inner.Deep": "Interface",
        "Shape": "Interface",
        "Color": "Enum",
        "Point": "Record",
        "Marker": "AnnotationType",
    }
    for key, kind in kinds.items():
        found = entity(analysis, key)
        assert found.types == (UKO_JAVA + kind,), key
        assert found.symbols == (("java", f"p.{key}"),)
        assert found.values[UKO_CODE + "qualifiedName"] == [f"p.{key}"]
    assert entity(analysis, "Outer.Inner.Deep").parent == "Outer.Inner"
    assert entity(analysis, "Outer").parent == ""


def test_members_modifiers_visibility_annotations_and_signatures() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    cls = entity(analysis, "AuthManager")
    assert value(analysis, "AuthManager", "modifiers") == ["public", "final"]
    assert value(analysis, "AuthManager", "hasDecorator") == ["Deprecated"]
    assert value(analysis, "AuthManager", "signature") == [
        "@Deprecated public final class AuthManager<T extends Comparable<T>> extends BaseManager<T>"
        " implements Runnable, Closeable"
    ]
    ctor = entity(analysis, "AuthManager.AuthManager")
    assert ctor.types == (UKO_JAVA + "Constructor",)
    assert ctor.symbols == (("java", "com.acme.auth.AuthManager.AuthManager"),)
    assert UKO_CODE + "hasReturnType" not in ctor.values
    login = entity(analysis, "AuthManager.login")
    assert login.types == (UKO_JAVA + "Method",)
    assert value(analysis, "AuthManager.login", "modifiers") == ["public", "synchronized"]
    assert value(analysis, "AuthManager.login", "hasDecorator") == ['SuppressWarnings("unchecked")']
    assert value(analysis, "AuthManager.login", "hasReturnType") == ["List<R>"]
    assert value(analysis, "AuthManager.login", "signature") == [
        '@SuppressWarnings("unchecked") public synchronized <R> List<R> login(final String user)'
    ]
    assert value(analysis, "AuthManager.run", "hasDecorator") == ["Override"]
    assert value(analysis, "AuthManager.login~3", "modifiers") == ["static", "native"]
    assert value(analysis, "AuthManager.check", "modifiers") == ["abstract"]
    assert value(analysis, "AuthManager.check", "visibility") == ["package"]
    assert value(analysis, "AuthManager.store", "visibility") == ["protected"]
    # One field node per declarator, dimensions kept with the name.
    assert value(analysis, "AuthManager.LIMIT", "signature") == ["private static final int LIMIT"]
    assert value(analysis, "AuthManager.SIZES", "signature") == ["private static final int SIZES[]"]
    assert entity(analysis, "AuthManager.SIZES").types == (UKO_JAVA + "Field",)
    assert (UKO_OO + "hasMethod", "AuthManager.login~2") in cls.links
    assert (UKO_OO + "hasAttribute", "AuthManager.SIZES") in cls.links


def test_overloads_are_keyed_in_source_order_and_share_the_symbol() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    overloads = [e for e in analysis.entities if e.name == "login"]
    assert [e.key for e in overloads] == ["AuthManager.login", "AuthManager.login~2", "AuthManager.login~3"]
    assert {e.symbols for e in overloads} == {(("java", "com.acme.auth.AuthManager.login"),)}
    assert [e.span.start_line for e in overloads if e.span] == [27, 30, 32]
    assert json.loads(str(value(analysis, "AuthManager.login~2", "hasParameters")[0])) == [
        {"name": "user", "type": "String", "default": None, "kind": "positional"},
        {"name": "attempts", "type": "int", "default": None, "kind": "positional"},
    ]


def test_parameters_json_with_varargs_generics_and_arrays() -> None:
    source = (
        "class P { <K, V> Map<K, List<V>> m(final Map<? super K, V>[] maps, int grid[][], @Nullable Object... rest)"
        " { return null; } }"
    )
    analysis = analyze(JAVA, "P.java", source)
    assert json.loads(str(value(analysis, "P.m", "hasParameters")[0])) == [
        {"name": "maps", "type": "Map<? super K, V>[]", "default": None, "kind": "positional"},
        {"name": "grid", "type": "int[][]", "default": None, "kind": "positional"},
        {"name": "rest", "type": "Object", "default": None, "kind": "var_positional"},
    ]
    assert value(analysis, "P.m", "hasReturnType") == ["Map<K, List<V>>"]
    assert value(analysis, "P.m", "signature")[0].startswith("<K, V> Map<K, List<V>> m(")


def test_javadoc_is_an_annotation_node_and_the_owners_docstring() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    doc = entity(analysis, "AuthManager/doc")
    assert doc.types == (UKO_CODE + "Docstring",)
    assert doc.parent == "AuthManager"
    assert doc.span is not None and (doc.span.start_line, doc.span.end_line) == (9, 12)
    assert value(analysis, "AuthManager", "docstring") == ["Manages sessions.\nSecond line."]
    assert value(analysis, "AuthManager.AuthManager", "docstring") == ["Makes one."]
    # A plain block comment is not Javadoc.
    plain = analyze(JAVA, "A.java", "class A { /* not doc */ void m() {} /**\n *\n */ void n() {} }")
    assert "A.m/doc" not in [e.key for e in plain.entities]
    assert "A.n/doc" not in [e.key for e in plain.entities] and value(plain, "A.n", "docstring") == []


def test_implicit_visibility_of_interface_and_enum_members() -> None:
    source = """interface Api { int LIMIT = 1; void call(); default void twice() {} class Impl {} }
enum Level { LOW; Level() {} void up() {} }
"""
    analysis = analyze(JAVA, "Api.java", source)
    assert value(analysis, "Api.LIMIT", "visibility") == ["public"]
    assert value(analysis, "Api.call", "visibility") == ["public"]
    assert value(analysis, "Api.twice", "modifiers") == ["default"]
    assert value(analysis, "Api.Impl", "visibility") == ["public"]
    assert value(analysis, "Level.Level", "visibility") == ["private"]
    assert value(analysis, "Level.up", "visibility") == ["package"]
    assert value(analysis, "Level.LOW", "visibility") == ["public"]


# ── imports, hierarchy, calls ─────────────────────────────────────


def test_imports_become_nodes_and_file_dependencies() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    expected = {
        "import/java.util.List": (("java.util.List", 0.9),),
        "import/java.util.*": (("java.util", 0.9),),
        "import/com.acme.store.Store": (("com.acme.store.Store", 0.9),),
        "import/org.junit.Assert.assertEquals": (("org.junit.Assert.assertEquals", 0.9), ("org.junit.Assert", 0.9)),
        "import/java.lang.Math.*": (("java.lang.Math", 0.9),),
    }
    for key, wanted in expected.items():
        node = entity(analysis, key)
        assert node.types == (UKO_CODE + "Import",) and node.parent == ""
        assert node.values[UKO_CODE + "importedName"] == [key.removeprefix("import/")]
        (reference,) = refs(analysis, key, UKO_CODE + "imports")
        assert reference.targets == wanted and reference.namespace == "java" and reference.simple_name is None
    # The file itself depends on everything it imports.
    assert targets(analysis, "", UKO + "dependsOn") == list(expected.values())
    assert value(analysis, "import/java.lang.Math.*", "modifiers") == ["static"]


def test_supertypes_resolve_through_imports_package_and_java_lang() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    (extends,) = refs(analysis, "AuthManager", UKO_OO + "inheritsFrom")
    # Not imported: the same package first, then each on-demand import; the bare name last.
    assert extends.targets == (("com.acme.auth.BaseManager", 0.7), ("java.util.BaseManager", 0.7))
    assert extends.simple_name == "BaseManager"
    implemented = refs(analysis, "AuthManager", UKO_OO + "implements")
    # java.lang is external: never matched by bare name.
    assert [(r.targets, r.simple_name) for r in implemented] == [
        ((("com.acme.auth.Runnable", 0.7), ("java.lang.Runnable", 0.9)), None),
        ((("com.acme.auth.Closeable", 0.7), ("java.util.Closeable", 0.7)), "Closeable"),
    ]
    (throws,) = refs(analysis, "AuthManager.AuthManager", UKO_JAVA + "throws")
    assert throws.targets == (("java.io.IOException", 0.9),)
    source = """package p;
import q.Base;
class A extends Base implements A.Inner, java.io.Serializable { interface Inner {} }
interface B extends Base.Nested {}
"""
    other = analyze(JAVA, "p/A.java", source)
    assert targets(other, "A", UKO_OO + "inheritsFrom") == [(("q.Base", 0.9),)]
    assert targets(other, "A", UKO_OO + "implements") == [(("p.A.Inner", 0.9),), (("java.io.Serializable", 0.9),)]
    assert targets(other, "B", UKO_OO + "inheritsFrom") == [(("q.Base.Nested", 0.9),)]


def test_calls_resolve_by_scope_imports_and_receiver_types() -> None:
    analysis = analyze(JAVA, "com/acme/auth/AuthManager.java", AUTH)
    # this.run() and the implicit super(...) of the constructor.
    assert targets(analysis, "AuthManager.AuthManager") == [
        (("com.acme.auth.BaseManager.BaseManager", 0.7), ("java.util.BaseManager.BaseManager", 0.7)),
        (
            ("com.acme.auth.AuthManager.run", 0.8),
            ("com.acme.auth.BaseManager.run", 0.7),
            ("java.util.BaseManager.run", 0.7),
            ("com.acme.auth.Runnable.run", 0.7),
            ("java.lang.Runnable.run", 0.7),
            ("com.acme.auth.Closeable.run", 0.7),
            ("java.util.Closeable.run", 0.7),
        ),
    ]
    (unqualified,) = refs(analysis, "AuthManager.run")
    assert unqualified.targets[0] == ("com.acme.auth.AuthManager.login", 0.8)
    assert unqualified.targets[-1] == ("java.lang.Math.login", 0.7)  # the static on-demand import, last
    assert unqualified.simple_name is None
    # Type.staticM() through an import.
    assert targets(analysis, "AuthManager.login~2") == [(("com.acme.store.Store.open", 0.9),)]
    # In a nested class: its own scope, then the enclosing class; `new` names the class.
    run, token = refs(analysis, "AuthManager.Session.touch")
    assert run.targets[:2] == (("com.acme.auth.AuthManager.Session.run", 0.8), ("com.acme.auth.AuthManager.run", 0.8))
    assert token.targets == (("com.acme.auth.AuthManager.Token", 0.9),)


def test_receivers_of_known_and_unknown_types() -> None:
    source = """package p;
import q.Repo;
import static q.Util.helper;
class Service {
    private Repo repo;
    Service(Repo r) { this(); }
    Service() {}
    void work(Repo param, java.util.List<String> names) {
        repo.save();
        this.repo.flush();
        param.load();
        var made = new Repo();
        made.close();
        names.size();
        lookup().chain();
        something.unknown();
        helper();
        java.util.Collections.sort(names);
        Service.create();
        for (Repo each : all) { each.touch(); }
    }
}
"""
    analysis = analyze(JAVA, "p/Service.java", source)
    assert targets(analysis, "Service.Service") == [(("p.Service.Service", 0.8),)]
    assert targets(analysis, "Service.work") == [
        (("q.Repo.save", 0.8),),
        (("q.Repo.flush", 0.8),),
        (("q.Repo.load", 0.8),),
        (("q.Repo", 0.9),),
        (("q.Repo.close", 0.8),),
        (("java.util.List.size", 0.8),),
        (("p.Service.lookup", 0.8),),
        (("p.Service.helper", 0.8), ("q.Util.helper", 0.9)),
        (("java.util.Collections.sort", 0.9),),
        (("p.Service.create", 0.9),),
        (("q.Repo.touch", 0.8),),
    ]  # lookup().chain() and something.unknown(): no guess


def test_junit_tests_and_what_they_test() -> None:
    source = """package com.acme;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.List;
import static org.junit.jupiter.api.Assertions.assertEquals;
class CalcTest {
    private Calc calc = new Calc();
    @Test void adds() { assertEquals(2, calc.add(1, 1)); List<String> l = List.of(); l.size(); helper(); }
    @org.junit.Test public void subtracts() { Calc c = new Calc(3); c.sub(1); Calc.parse("1"); }
    @ParameterizedTest void many(int n) { new Other().add(n); }
    void helper() {}
}
class LegacyTest extends junit.framework.TestCase {
    public void testOld() { new Legacy().go(); }
    public void notATest(int x) {}
}
"""
    analysis = analyze(JAVA, "com/acme/CalcTest.java", source)
    for key in ("CalcTest.adds", "CalcTest.subtracts", "CalcTest.many", "LegacyTest.testOld"):
        assert UKO_CODE + "TestCase" in entity(analysis, key).types, key
    for key in ("CalcTest.helper", "LegacyTest.notATest"):
        assert UKO_CODE + "TestCase" not in entity(analysis, key).types, key
    # Calls on the class under test (Calc, by the FooTest convention); List, assertEquals and Other are not it.
    assert targets(analysis, "CalcTest.adds", TESTS) == [(("com.acme.Calc.add", 0.7),)]
    assert targets(analysis, "CalcTest.subtracts", TESTS) == [
        (("com.acme.Calc.Calc", 0.7),),
        (("com.acme.Calc.sub", 0.7),),
        (("com.acme.Calc.parse", 0.7),),
    ]
    assert targets(analysis, "CalcTest.many", TESTS) == []
    assert targets(analysis, "LegacyTest.testOld", TESTS) == [(("com.acme.Legacy.Legacy", 0.7),)]


# ── anonymous, local, enum and record bodies ──────────────────────


def test_anonymous_and_local_classes() -> None:
    source = """package p;
class Outer {
    Runnable field = new Runnable() { public void run() { tick(); } };
    void work() {
        class Local { void helper() {} }
        new Thread(new Runnable() { public void run() { new Local().helper(); } }).start();
    }
    void tick() {}
}
"""
    analysis = analyze(JAVA, "p/Outer.java", source)
    first, second = entity(analysis, "Outer.$1"), entity(analysis, "Outer.$2")
    assert first.types == (UKO_JAVA + "Class",) and first.parent == "Outer.field" and first.symbols == ()
    assert second.parent == "Outer.work" and second.name == "<anonymous Runnable>"
    local = entity(analysis, "Outer.work.Local")
    assert local.parent == "Outer.work" and local.symbols == ()
    assert entity(analysis, "Outer.$1.run").symbols == ()
    # Calls inside an anonymous class belong to its method; the enclosing class is still in scope.
    (tick,) = refs(analysis, "Outer.$1.run")
    assert tick.targets == (("p.Runnable.tick", 0.7), ("java.lang.Runnable.tick", 0.7), ("p.Outer.tick", 0.8))
    assert targets(analysis, "Outer.field") == [(("p.Runnable", 0.7), ("java.lang.Runnable", 0.9))]
    assert targets(analysis, "Outer.work")[0] == (("p.Thread", 0.7), ("java.lang.Thread", 0.9))


def test_enums_with_constant_bodies_and_records() -> None:
    source = """package p;
enum Op implements java.util.function.IntSupplier {
    /** Adds. */
    PLUS(1) { int apply(int a) { return a; } },
    MINUS(2);
    private final int code;
    Op(int code) { this.code = code; }
    int apply(int a) { return -a; }
    public int getAsInt() { return code; }
}
record Range(int low, int high) implements Comparable<Range> {
    Range { check(low); }
    static void check(int v) {}
    public int compareTo(Range o) { return 0; }
}
"""
    analysis = analyze(JAVA, "p/Op.java", source)
    plus = entity(analysis, "Op.PLUS")
    assert plus.types == (UKO_JAVA + "Field",) and plus.symbols == (("java", "p.Op.PLUS"),)
    assert value(analysis, "Op.PLUS", "docstring") == ["Adds."]
    body = entity(analysis, "Op.$1")
    assert body.parent == "Op.PLUS" and body.name == "<anonymous PLUS>"
    assert entity(analysis, "Op.$1.apply").parent == "Op.$1"
    assert [e.key for e in analysis.entities if e.parent == "Op"] == [
        "Op.PLUS",
        "Op.MINUS",
        "Op.code",
        "Op.Op",
        "Op.apply",
        "Op.getAsInt",
    ]
    assert targets(analysis, "Range", UKO_OO + "implements") == [(("p.Comparable", 0.7), ("java.lang.Comparable", 0.9))]
    low = entity(analysis, "Range.low")
    assert low.types == (UKO_JAVA + "Field",) and value(analysis, "Range.low", "visibility") == ["private"]
    compact = entity(analysis, "Range.Range")
    assert compact.types == (UKO_JAVA + "Constructor",)
    assert [p["name"] for p in json.loads(str(value(analysis, "Range.Range", "hasParameters")[0]))] == ["low", "high"]
    assert targets(analysis, "Range.Range") == [
        (("p.Range.check", 0.8), ("p.Comparable.check", 0.7), ("java.lang.Comparable.check", 0.7))
    ]


# ── bad input ─────────────────────────────────────────────────────


def test_parse_errors_are_problems_naming_hidden_definitions() -> None:
    # A missing '}' makes the parser read the following method as statements of the first.
    source = "package p;\nclass A {\n  void a() {\n    if (x) {\n  }\n  int hidden(int y) { return y; }\n"
    analysis = analyze(JAVA, "p/A.java", source)
    assert analysis.problems
    assert any("int hidden" in p.hidden for p in analysis.problems)
    assert [e.key for e in analysis.entities[:3]] == ["", "A", "A.a"]
    swallowed = analyze(JAVA, "B.java", "}}} class Z { void k() {} } {{{ void lost(int a) { }")
    assert any("void lost" in p.hidden for p in swallowed.problems)
    assert "Z.k" in [e.key for e in swallowed.entities]
    store = graph(JAVA, "p/A.java", source)
    rows = select(store, "SELECT ?n WHERE { ?f uko:hasParseErrors true ; ca:hiddenByParseError ?n }")
    assert {"int hidden"} <= {r["n"] for r in rows}
    clean = analyze(JAVA, "C.java", "class C { void m() { Runnable r = new Runnable() { public void run() {} }; } }")
    assert clean.problems == []


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00garbage\x80",
        b'class A { void m() { String s = "\xc3\x28"; } /** caf\xe9 */ void n() {} }',
        b"class A { void m() { int x = " + b"(" * 3000 + b"1" + b")" * 3000 + b"; } }",
        b"class A { void m() { " + b"if (a) { " * 1500 + b"}" * 1500 + b" } }",
        b"class A {" * 500 + b"}" * 500,
    ],
    ids=["empty", "binary", "broken-utf8", "deep-expression", "deep-blocks", "deep-classes"],
)
def test_bad_input_never_raises_and_renders(data: bytes) -> None:
    analysis = analyze(JAVA, "A.java", data)
    assert analysis.entities[0].key == ""
    graph(JAVA, "A.java", data)  # every literal must survive N-Triples
    for node in analysis.entities[:3]:
        for level in (Rank.SIGNATURES, Rank.STRUCTURAL_OUTLINE, Rank.KEY_LOGIC, Rank.NEAR_COMPLETE):
            request = RenderRequest(node.key, node.types, "A.java", data, node.span, level.name, level.value)
            assert isinstance(JAVA.render(request), str)


def test_broken_utf8_keeps_names_and_spans_in_bytes() -> None:
    data = b'class A { void m() { String s = "\xc3\x28"; } /** caf\xe9 */ void n() {} }'
    analysis = analyze(JAVA, "A.java", data)
    n = entity(analysis, "A.n")
    assert value(analysis, "A.n", "docstring") == ["caf\ufffd"]
    assert n.span is not None and data[n.span.start_byte : n.span.end_byte] == b"void n() {}"


def test_triples_load_and_answer_queries() -> None:
    store = graph(JAVA, "src/com/acme/auth/AuthManager.java", AUTH)
    rows = select(
        store,
        "SELECT ?m WHERE { ?c uko-oo:hasMethod ?m . ?m a uko-java:Constructor . ?c uko:name 'AuthManager' }",
    )
    assert [r["m"] for r in rows] == [iri("src/com/acme/auth/AuthManager.java", "AuthManager.AuthManager")]


# ── rendering ─────────────────────────────────────────────────────

RENDERED = """\
package com.acme;

import java.util.List;
import org.slf4j.Logger;

/** Counts things. More detail. */
public class Counter extends Base implements Runnable {
    private int count;

    /** Adds one.
     * @param by how much */
    public int add(int by) throws Overflow {
        // a comment
        LOG.debug("adding");
        if (by < 0) {
            throw new IllegalArgumentException("negative");
        } else if (by == 0) {
            return count;
        }
        for (int i = 0; i < by; i++) {
            count += 1;
        }
        try (Lock l = lock()) {
            assert count > 0 : "positive";
        } catch (IllegalStateException e) {
            e.printStackTrace();
        }
        switch (by) {
            case 1: return 1;
            default: break;
        }
        return count;
    }

    void run() { add(1); }
}
"""


def test_every_level_of_a_method() -> None:
    path, key = "com/acme/Counter.java", "Counter.add"
    levels = {level: render(path, RENDERED, key, level.name) for level in Rank}
    assert levels[Rank.MODULE_LISTING] == "add"
    assert levels[Rank.MEMBER_LISTING] == "public add(…)"
    assert levels[Rank.MEMBER_SUMMARY] == "/** Adds one. */\npublic add(…)"
    assert levels[Rank.SIGNATURES] == "/** Adds one. */\npublic int add(int by) throws Overflow;"
    assert levels[Rank.SIGNATURES_WITH_DOCS] == (
        "/** Adds one.\n * @param by how much */\npublic int add(int by) throws Overflow;"
    )
    assert levels[Rank.STRUCTURAL_OUTLINE] == "\n".join(
        [
            "/** Adds one.",
            " * @param by how much */",
            "public int add(int by) throws Overflow {",
            "    if (…) {",
            "        throw …;",
            "    } else if (…) {",
            "        return …;",
            "    }",
            "    for (…) {",
            "    }",
            "    try (…) {",
            "    } catch (IllegalStateException e) {",
            "    }",
            "    switch (…) {",
            "        case …:",
            "            return …;",
            "        default:",
            "            break;",
            "    }",
            "    return …;",
            "}",
        ]
    )
    key_logic = levels[Rank.KEY_LOGIC]
    for line in (
        "    if (by < 0) {",
        '        throw new IllegalArgumentException("negative");',
        "    for (int i = 0; i < by; i++) {",
        "        count += 1;",
        "    try (Lock l = lock()) {",
        '        assert count > 0 : "positive";',
        "        case 1:",
        "    return count;",
    ):
        assert line in key_logic.splitlines(), line
    assert "LOG.debug" not in key_logic and "printStackTrace" not in key_logic
    near = levels[Rank.NEAR_COMPLETE]
    assert "// a comment" not in near and "LOG.debug" not in near and "printStackTrace" not in near
    assert "    if (by < 0) {" in near.splitlines() and near.startswith("public int add(int by)")
    start = RENDERED.index("public int add")
    assert levels[Rank.FULL_SOURCE] == RENDERED[start : RENDERED.index("    void run()") - 2]


def test_every_level_of_a_class_and_the_module() -> None:
    path = "com/acme/Counter.java"
    cls = {level: render(path, RENDERED, "Counter", level.name) for level in Rank}
    assert cls[Rank.MODULE_LISTING] == "class Counter"
    assert cls[Rank.MEMBER_LISTING] == "class Counter extends Base {\n    count\n    public add(…)\n    run()\n}"
    assert cls[Rank.CLASS_HIERARCHY].startswith("class Counter extends Base implements Runnable {")
    assert cls[Rank.MEMBER_SUMMARY].splitlines()[:4] == [
        "/** Counts things. */",
        "class Counter extends Base implements Runnable {",
        "    count",
        "    /** Adds one. */",
    ]
    assert "    private int count;" in cls[Rank.SIGNATURES].splitlines()
    assert (
        "{\n        if" not in cls[Rank.SIGNATURES]
        and "public int add(int by) throws Overflow;" in cls[Rank.SIGNATURES]
    )
    assert "/** Counts things. More detail. */" in cls[Rank.SIGNATURES_WITH_DOCS]
    assert "    /* package-private */ void run();" in cls[Rank.VISIBILITY_ANNOTATED].splitlines()
    assert "    /* package-private */ void run() {" in cls[Rank.STRUCTURAL_OUTLINE].splitlines()
    assert "        add(1);" not in cls[Rank.KEY_LOGIC].splitlines()  # a bare call is not key logic
    assert cls[Rank.FULL_SOURCE] == RENDERED[RENDERED.index("public class") : RENDERED.rindex("}") + 1]
    # From MEMBER_LISTING on, each level of the class shows something the one before did not;
    # the module-graph level adds nothing to a class (imports belong to its file).
    assert cls[Rank.MODULE_GRAPH] == cls[Rank.MODULE_LISTING]
    ordered = [cls[level] for level in Rank][Rank.MODULE_GRAPH :]
    assert all(a != b for a, b in itertools.pairwise(ordered))
    module = {level: render(path, RENDERED, "", level.name) for level in Rank}
    assert module[Rank.MODULE_LISTING] == "com.acme.Counter"
    assert module[Rank.MODULE_GRAPH] == "package com.acme;\nimport java.util.List;\nimport org.slf4j.Logger;"
    assert module[Rank.MEMBER_LISTING].endswith(
        "class Counter extends Base {\n    count\n    public add(…)\n    run()\n}"
    )
    assert "import" not in module[Rank.NEAR_COMPLETE] and module[Rank.NEAR_COMPLETE].startswith("package com.acme;")
    assert module[Rank.FULL_SOURCE] == RENDERED


def test_rendering_other_nodes_and_unknown_levels() -> None:
    source = "package p;\nimport java.util.List;\nenum E { A(1) { void f() {} }, B; E(int x) {} }\n"
    assert render("p/E.java", source, "E.A", "SIGNATURES") == "A"
    assert render("p/E.java", source, "E.A", "KEY_LOGIC") == "A(1) {\n    /* package-private */ void f() {\n    }\n}"
    assert render("p/E.java", source, "E.$1", "MEMBER_LISTING") == "A {\n    f()\n}"
    assert render("p/E.java", source, "import/java.util.List", "MODULE_LISTING") == "java.util.List"
    assert render("p/E.java", source, "import/java.util.List", "FULL_SOURCE") == "import java.util.List;"
    analysis = analyze(JAVA, "p/E.java", source)
    node = entity(analysis, "E.E")
    # A level name the Java map does not know falls back to its depth.
    request = RenderRequest("E.E", node.types, "p/E.java", source.encode(), node.span, "WITH_TESTS", 99)
    assert JAVA.render(request) == "E(int x) {}"
    # Stale content (the node moved): the span's text rather than a wrong node.
    stale = b"class Other { int moved; }".ljust(200, b"x")
    request = RenderRequest("E.E", node.types, "p/E.java", stale, node.span, "SIGNATURES", 5)
    assert node.span is not None
    assert JAVA.render(request) == stale[node.span.start_byte : node.span.end_byte].decode()


# ── a real code base ──────────────────────────────────────────────

ORACLE = """
[(class_declaration) (interface_declaration) (enum_declaration) (record_declaration)
 (annotation_type_declaration)] @type
[(method_declaration) (constructor_declaration) (compact_constructor_declaration)
 (annotation_type_element_declaration)] @callable
(object_creation_expression (class_body) @anonymous)
(enum_constant body: (class_body) @anonymous)
"""


def test_jpype_java_sources() -> None:
    """Every .java file of JPype1's sdist: no error, and as many types and callables as a tree-sitter query finds."""
    root = corpus_dir("jpype1-1.5.2")
    files = sorted(root.rglob("*.java"))
    assert len(files) == 114
    language = ts.Language(tree_sitter_java.language())
    parser, query = ts.Parser(language), ts.Query(language, ORACLE)
    elapsed, size = 0.0, 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        started = time.perf_counter()
        analysis = analyze(JAVA, path.relative_to(root).as_posix(), data)
        elapsed += time.perf_counter() - started
        found = ts.QueryCursor(query).captures(parser.parse(data).root_node)
        kinds = {UKO_JAVA + k for k in ("Class", "Interface", "Enum", "Record", "AnnotationType")}
        named = [e for e in analysis.entities if set(e.types) & kinds and not e.key.rsplit(".", 1)[-1].startswith("$")]
        callables = [e for e in analysis.entities if {UKO_JAVA + "Method", UKO_JAVA + "Constructor"} & set(e.types)]
        anonymous = [e for e in analysis.entities if e.key.rsplit(".", 1)[-1].startswith("$")]
        assert len(named) == len(found.get("type", [])), path
        assert len(callables) == len(found.get("callable", [])), path
        assert len(anonymous) == len(found.get("anonymous", [])), path
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), path
        assert analysis.problems == [], path
    print(f"\njpype1-1.5.2: {len(files)} files, {size / 1e6:.2f} MB analyzed in {elapsed:.2f} s")
    assert elapsed < 15


def test_references_point_a_language_server_at_the_name() -> None:
    """Each reference carries the (row, byte column) of the name a language server resolves."""
    text = (
        "package shapes;\n"
        "\n"
        "import java.util.List;\n"
        "import static java.lang.Math.max;\n"
        "\n"
        "public class CircleTest extends Base<Circle> implements Shape, java.io.Serializable {\n"
        "    CircleTest() throws java.io.IOException { super(); }\n"
        "    @Test\n"
        "    void area() {\n"
        '        String s = "é"; Circle c = new Circle(2);\n'
        "        c.area();\n"
        "        helper(max(1, 2));\n"
        "        List.of(s).forEach(System.out::println);\n"
        "    }\n"
        "    void helper(int x) {}\n"
        "}\n"
    )
    analysis = analyze(JAVA, "src/shapes/CircleTest.java", text)
    lines = text.encode().split(b"\n")
    named = {
        (r.predicate.rsplit("#", 1)[1], lines[r.position[0]][r.position[1] :].decode()[:7])
        for r in analysis.references
        if r.position
    }
    assert ("dependsOn", "List;") in named
    assert ("imports", "List;") in named
    assert ("imports", "max;") in named
    assert ("inheritsFrom", "Base<Ci") in named
    assert ("implements", "Shape, ") in named
    assert ("implements", "Seriali") in named
    assert ("throws", "IOExcep") in named
    assert ("calls", "super()") in named
    assert ("calls", "Circle(") in named  # the byte column counts the two-byte é before it
    assert ("calls", "area();") in named
    assert ("calls", "helper(") in named
    assert ("calls", "max(1, ") in named
    assert ("calls", "of(s).f") in named
    assert ("calls", "println") in named
    assert ("testsCallable", "area();") in named
    assert all(r.position for r in analysis.references)
