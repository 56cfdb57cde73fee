"""The JavaScript/TypeScript analyzer: entities, references, tests, parse errors and renderings of real code."""

from __future__ import annotations

import functools
import itertools
import json
import time
from pathlib import Path

import pytest
import tree_sitter as ts
import tree_sitter_javascript
import tree_sitter_typescript

from cleveragents.analyzers.typescript import ANALYZERS, module_name, resolve_specifier
from cleveragents.indexing.model import FileAnalysis, Reference, RenderRequest
from cleveragents.indexing.plugins import builtin_analyzers
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.terms import UKO, UKO_CODE, UKO_OO, UKO_TS
from tests.analyzers.support import analyze, entity, graph, iri, select

TS = ANALYZERS[0]

CALLS = UKO_CODE + "calls"
TESTS = UKO_CODE + "testsCallable"
IMPORTS = UKO_CODE + "imports"
DEPENDS = UKO + "dependsOn"
INHERITS = UKO_OO + "inheritsFrom"
IMPLEMENTS = UKO_OO + "implements"


def refs(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> list[Reference]:
    return [r for r in analysis.references if r.source == source and r.predicate == predicate]


def targets(analysis: FileAnalysis, source: str, predicate: str = CALLS) -> set[tuple[tuple[str, float], ...]]:
    return {r.targets for r in refs(analysis, source, predicate)}


def simple_names(analysis: FileAnalysis, source: str) -> set[str | None]:
    return {r.simple_name for r in refs(analysis, source) if not r.targets}


def value(analysis: FileAnalysis, key: str, local: str, namespace: str = UKO_CODE) -> list[object]:
    return entity(analysis, key).values.get(namespace + local, [])


def keys(analysis: FileAnalysis) -> list[str]:
    return [e.key for e in analysis.entities]


def render(path: str, source: str | bytes, key: str, level: str) -> str:
    data = source.encode() if isinstance(source, str) else source
    node = entity(analyze(TS, path, data), key)
    depth = next((lv.depth for lv in effective_levels(node.types[0]) if lv.name == level), 99)
    return TS.render(RenderRequest(key, node.types, path, data, node.span, level, depth))


def levels_of(path: str, source: str, key: str) -> dict[str, str]:
    node = entity(analyze(TS, path, source), key)
    return {lv.name: render(path, source, key, lv.name) for lv in effective_levels(node.types[0])}


SERVICE = """\
import Base, { helper as h, Shape } from "./base";
import * as fmt from "../util/format";
import type { Options } from "./types";
import fs = require("fs");
import { map } from "lodash/fp";
export { Shape } from "./base";
export * from "./extra";

/**
 * Stores users.
 * @see Repo
 */
@Injectable({ scope: "app" })
export default abstract class UserService<T extends object = {}> extends Base<T> implements Repo, fmt.Printable {
  static readonly LIMIT: number = 10;
  #secret = "x";
  protected cache?: Map<string, T>;
  declare ready: boolean;

  constructor(private readonly store: Store, public name = "users", ...rest: unknown[]) {
    super(store);
  }

  /** Finds one user. */
  @Memo()
  async find<K extends keyof T>(id: string, key?: K, { deep } = { deep: false }): Promise<T | undefined> {
    this.validate(id);
    this.persist();
    h(id);
    fmt.pad(id);
    map(id);
    local(id);
    new Registry();
    super.find(id);
    return undefined;
  }

  validate(id: string): asserts id is string {}
  protected abstract persist(): void;
  get size(): number { return 0; }
  set size(value: number) {}
  #hide(): void {}
  onClick = (event: Event): void => { this.validate("x"); };
  private static create(): UserService<object> { return null!; }
}

interface Repo<T = unknown> extends Readable, fmt.Closeable {
  find(id: string): Promise<T>;
  readonly count: number;
  label?: string;
}

export type Id = string | number;
export const enum Color { Red, Green = "g" }

export function local(id: string): string;
export function local(id: number): string;
export function local(id: unknown): string { return String(id); }

export const double = (n: number): number => n * 2;
const config = { retries: 3 };
let counter: number;

namespace Legacy.Inner {
  export function old(): void { local("x"); }
}

class Registry {}
"""


# ── registration, names ───────────────────────────────────────────


def test_is_a_registered_analyzer_for_js_and_ts_files() -> None:
    assert any(a.name == "typescript" for a in builtin_analyzers())
    for path in ("a.js", "a.mjs", "a.cjs", "a.jsx", "a.ts", "a.mts", "a.cts", "a.tsx", "types/a.d.ts"):
        assert TS.handles(path), path
        assert TS.file_types(path) == (UKO_TS + "Module",)
    for path in ("a.json", "a.css", "a.py", "ts", "a.tsx.bak"):
        assert not TS.handles(path), path


def test_module_names_and_specifier_resolution() -> None:
    assert module_name("src/util/strings.ts") == "src.util.strings"
    assert module_name("src/util/index.tsx") == "src.util"
    assert module_name("types/global.d.ts") == "types.global"
    assert module_name("index.js") == "index"
    assert module_name("lib/a.test.mjs") == "lib.a.test"
    assert resolve_specifier("./b", "src/a.ts") == ["src.b"]
    assert resolve_specifier("../lib/x.js", "src/app/a.ts") == ["src.lib.x"]
    assert resolve_specifier("./dir/index", "a.ts") == ["dir"]
    assert resolve_specifier(".", "src/app/a.ts") == ["src.app"]
    assert resolve_specifier("../../out", "src/a.ts") == []  # leaves the resource
    assert resolve_specifier("react", "src/a.ts") == ["react"]
    assert resolve_specifier("lodash/fp", "src/a.ts") == ["lodash.fp", "lodash"]
    assert resolve_specifier("@scope/pkg/sub/x", "a.ts") == ["@scope/pkg.sub.x", "@scope/pkg"]
    assert resolve_specifier("@scope/pkg", "a.ts") == ["@scope/pkg"]
    assert resolve_specifier("node:fs", "a.ts") == ["fs"]


def test_file_node_is_the_module() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    node = analysis.entities[0]
    assert (node.key, node.types, node.name, node.parent, node.span) == ("", (UKO_TS + "Module",), "user", None, None)
    assert node.symbols == (("js", "src.services.user"),)
    assert value(analysis, "", "qualifiedName") == ["src.services.user"]
    assert value(analysis, "", "language") == ["typescript"]
    js = analyze(TS, "lib/index.jsx", "export const a = 1;")
    assert js.entities[0].name == "lib" and value(js, "", "language") == ["javascript"]
    assert js.entities[0].symbols == (("js", "lib"),)


# ── declarations ──────────────────────────────────────────────────


def test_declarations_of_every_kind_with_keys_types_and_symbols() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    expected = {
        "UserService": (UKO_TS + "Class",),
        "UserService.LIMIT": (UKO_OO + "Attribute",),
        "UserService.#secret": (UKO_OO + "Attribute",),
        "UserService.constructor": (UKO_OO + "Constructor", UKO_TS + "Method"),
        "UserService.store": (UKO_OO + "Attribute",),  # a parameter property
        "UserService.name": (UKO_OO + "Attribute",),
        "UserService.find": (UKO_TS + "Method",),
        "UserService.persist": (UKO_TS + "Method",),
        "UserService.size": (UKO_TS + "Method",),
        "UserService.size~2": (UKO_TS + "Method",),
        "UserService.onClick": (UKO_TS + "Method",),  # an arrow-function property
        "Repo": (UKO_TS + "Interface",),
        "Repo.find": (UKO_TS + "Method",),
        "Repo.count": (UKO_OO + "Attribute",),
        "Id": (UKO_TS + "TypeAlias",),
        "Color": (UKO_TS + "Enum",),
        "Color.Green": (UKO_CODE + "Field",),
        "local": (UKO_TS + "Function",),
        "local~3": (UKO_TS + "Function",),
        "double": (UKO_TS + "Function",),
        "config": (UKO_CODE + "Variable",),
        "counter": (UKO_CODE + "Variable",),
        "Legacy.Inner": (UKO_TS + "Namespace",),
        "Legacy.Inner.old": (UKO_TS + "Function",),
        "Registry": (UKO_TS + "Class",),
    }
    for key, types in expected.items():
        node = entity(analysis, key)
        assert node.types == types, key
        base = key.split("~")[0]
        assert node.symbols[0] == ("js", f"src.services.user.{base}"), key
    assert entity(analysis, "UserService.find").parent == "UserService"
    assert entity(analysis, "Legacy.Inner.old").parent == "Legacy.Inner"
    # Overloads keep their order and share one qualified name.
    assert [k for k in keys(analysis) if k.startswith("local")] == ["local", "local~2", "local~3"]
    assert value(analysis, "local~2", "qualifiedName") == ["src.services.user.local"]
    # Locals, object literal members and callbacks are not entities.
    assert not any(k.startswith(("config.", "UserService.find.")) for k in keys(analysis))
    assert len(set(keys(analysis))) == len(keys(analysis))
    links = entity(analysis, "UserService").links
    assert (UKO_OO + "hasMethod", "UserService.find") in links
    assert (UKO_OO + "hasAttribute", "UserService.store") in links


def test_modifiers_visibility_decorators_and_signatures() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    assert value(analysis, "UserService", "modifiers") == ["export", "default", "abstract"]
    assert value(analysis, "UserService", "isDefaultExport", UKO_TS) == [True]
    assert ("js", "src.services.user.default") in entity(analysis, "UserService").symbols
    assert value(analysis, "UserService", "typeParameters", UKO_TS) == ["<T extends object = {}>"]
    assert value(analysis, "UserService", "hasDecorator") == ['Injectable({ scope: "app" })']
    assert value(analysis, "UserService", "signature") == [
        "abstract class UserService<T extends object = {}> extends Base<T> implements Repo, fmt.Printable"
    ]
    assert value(analysis, "UserService.LIMIT", "modifiers") == ["static", "readonly"]
    assert value(analysis, "UserService.LIMIT", "visibility") == ["public"]
    assert value(analysis, "UserService.#secret", "visibility") == ["#private"]
    assert value(analysis, "UserService.#hide", "visibility") == ["#private"]
    assert value(analysis, "UserService.cache", "visibility") == ["protected"]
    assert value(analysis, "UserService.cache", "modifiers") == ["optional"]
    assert value(analysis, "UserService.ready", "modifiers") == ["declare"]
    assert value(analysis, "UserService.store", "visibility") == ["private"]
    assert value(analysis, "UserService.store", "modifiers") == ["readonly", "parameter-property"]
    assert value(analysis, "UserService.name", "visibility") == ["public"]
    assert value(analysis, "UserService.find", "modifiers") == ["async"]
    assert value(analysis, "UserService.find", "hasDecorator") == ["Memo()"]
    assert value(analysis, "UserService.find", "hasReturnType") == ["Promise<T | undefined>"]
    assert value(analysis, "UserService.find", "typeParameters", UKO_TS) == ["<K extends keyof T>"]
    assert value(analysis, "UserService.persist", "modifiers") == ["abstract"]
    assert value(analysis, "UserService.persist", "visibility") == ["protected"]
    assert value(analysis, "UserService.size", "modifiers") == ["get"]
    assert value(analysis, "UserService.size~2", "modifiers") == ["set"]
    assert value(analysis, "UserService.create", "modifiers") == ["static"]
    assert value(analysis, "UserService.create", "visibility") == ["private"]
    assert value(analysis, "UserService.validate", "hasReturnType") == ["asserts id is string"]
    assert value(analysis, "UserService.onClick", "signature") == ["onClick = (event: Event): void =>"]
    assert value(analysis, "Repo.count", "modifiers") == ["readonly"]
    assert value(analysis, "Repo.label", "modifiers") == ["optional"]
    assert value(analysis, "Color", "modifiers") == ["export", "const"]
    assert value(analysis, "Id", "signature") == ["type Id = string | number"]
    assert value(analysis, "local", "modifiers") == ["export"]
    assert value(analysis, "double", "modifiers") == ["const", "export"]
    assert value(analysis, "double", "signature") == ["double = (n: number): number =>"]
    assert value(analysis, "counter", "modifiers") == ["let"]
    assert value(analysis, "config", "signature") == ["config"]
    assert value(analysis, "Registry", "modifiers") == []


def test_parameters_json() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    find = json.loads(value(analysis, "UserService.find", "hasParameters")[0])
    assert find == [
        {"name": "id", "type": "string", "default": None, "kind": "required"},
        {"name": "key", "type": "K", "default": None, "kind": "optional"},
        {"name": "{ deep }", "type": None, "default": "{ deep: false }", "kind": "optional"},
    ]
    ctor = json.loads(value(analysis, "UserService.constructor", "hasParameters")[0])
    assert [(p["name"], p["kind"], p["default"]) for p in ctor] == [
        ("store", "required", None),
        ("name", "optional", '"users"'),
        ("rest", "rest", None),
    ]
    js = analyze(TS, "a.js", "function f(a, b = 1, ...c) {}\nfunction g(this: X) {}\nconst h = x => x;")
    assert json.loads(value(js, "f", "hasParameters")[0]) == [
        {"name": "a", "type": None, "default": None, "kind": "required"},
        {"name": "b", "type": None, "default": "1", "kind": "optional"},
        {"name": "c", "type": None, "default": None, "kind": "rest"},
    ]
    assert json.loads(value(js, "h", "hasParameters")[0]) == [
        {"name": "x", "type": None, "default": None, "kind": "required"}
    ]
    this = analyze(TS, "a.ts", "function g(this: Window, n?: number) {}")
    assert [p["kind"] for p in json.loads(value(this, "g", "hasParameters")[0])] == ["this", "optional"]


def test_jsdoc_is_a_docstring_node_and_the_owners_docstring() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    doc = entity(analysis, "UserService/doc")
    assert doc.types == (UKO_CODE + "Docstring",) and doc.parent == "UserService"
    assert doc.span is not None and (doc.span.start_line, doc.span.end_line) == (9, 12)
    assert value(analysis, "UserService", "docstring") == ["Stores users.\n@see Repo"]
    # Above a decorated method: the comment sits before the decorator.
    assert value(analysis, "UserService.find", "docstring") == ["Finds one user."]
    plain = analyze(
        TS, "a.ts", "/* not doc */\nfunction f() {}\n/** far */\n\nfunction g() {}\n/** near */ const h = 1;"
    )
    assert "f/doc" not in keys(plain) and "g/doc" not in keys(plain)
    assert value(plain, "h", "docstring") == ["near"]
    header = analyze(TS, "a.js", "'use strict';\n/** @file Helpers for a. */\nconst x = 1;\n")
    assert value(header, "", "docstring") == ["@file Helpers for a."] and entity(header, "/doc").parent == ""


# ── imports, hierarchy, calls ─────────────────────────────────────


def test_imports_become_nodes_and_dependencies() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    expected = {
        "import/./base": (("src.services.base", 0.9),),
        "import/../util/format": (("src.util.format", 0.9),),
        "import/./types": (("src.services.types", 0.9),),
        "import/fs": (("fs", 0.9),),
        "import/lodash/fp": (("lodash.fp", 0.9), ("lodash", 0.9)),
        "import/./extra": (("src.services.extra", 0.9),),
    }
    for key, wanted in expected.items():
        node = entity(analysis, key)
        assert node.types == (UKO_CODE + "Import",) and node.parent == ""
        assert node.values[UKO_CODE + "importedName"] == [key.removeprefix("import/")]
        assert wanted in targets(analysis, "", DEPENDS)
    assert targets(analysis, "import/./base", IMPORTS) == {(("src.services.base", 0.9),)}
    # `export ... from` re-exports: the same module imported and re-exported is one node with both edges.
    assert targets(analysis, "import/./base", UKO_TS + "reExports") == {(("src.services.base", 0.9),)}
    assert targets(analysis, "import/./extra", UKO_TS + "reExports") == {(("src.services.extra", 0.9),)}
    assert len([k for k in keys(analysis) if k.startswith("import/")]) == 6
    assert all(r.namespace == "js" for r in analysis.references)


def test_commonjs_and_dynamic_imports() -> None:
    source = """\
const path = require("path");
const { join, resolve: res } = require("./util");
const helpers = require("./helpers/index.js");
async function load() { const mod = await import("./lazy"); mod.run(); import(name); }
exports.build = function build(a) { return res(join(a)); };
module.exports.clean = (x) => helpers.trim(x);
"""
    analysis = analyze(TS, "lib/tasks.cjs", source)
    assert {k for k in keys(analysis) if k.startswith("import/")} == {
        "import/path",
        "import/./util",
        "import/./helpers/index.js",
        "import/./lazy",
    }
    assert (("lib.helpers", 0.9),) in targets(analysis, "", DEPENDS)
    assert (("lib.lazy", 0.9),) in targets(analysis, "", DEPENDS)
    assert targets(analysis, "build") == {(("lib.util.resolve", 0.9),), (("lib.util.join", 0.9),)}
    assert targets(analysis, "clean") == {(("lib.helpers.trim", 0.9),)}
    assert targets(analysis, "load") == {(("lib.lazy.run", 0.9),)}
    assert value(analysis, "build", "modifiers") == ["export"] and value(analysis, "clean", "modifiers") == ["export"]
    assert "path" not in keys(analysis)  # a require binding is an import, not a variable


def test_supertypes_resolve_through_imports_and_the_module() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    assert refs(analysis, "UserService", INHERITS)[0].targets == (("src.services.base.default", 0.9),)
    assert targets(analysis, "UserService", IMPLEMENTS) == {
        (("src.services.user.Repo", 0.9),),
        (("src.util.format.Printable", 0.9),),
    }
    # An interface extends interfaces; an unknown one falls back to its bare name.
    (readable, closeable) = refs(analysis, "Repo", INHERITS)
    assert (readable.targets, readable.simple_name) == ((), "Readable")
    assert closeable.targets == (("src.util.format.Closeable", 0.9),)
    js = analyze(TS, "a.js", "class A extends mixin(B) {}\nclass C extends A {}\nclass E extends Error {}")
    assert refs(js, "A", INHERITS) == [] and refs(js, "E", INHERITS) == []  # no bare name for globals
    assert refs(js, "C", INHERITS)[0].targets == (("a.A", 0.9),)
    # A package's default import is the package; React.Component hangs under it.
    react = analyze(TS, "src/a.tsx", "import React from 'react';\nclass View extends React.Component {}")
    assert refs(react, "View", INHERITS)[0].targets == (("react.Component", 0.9),)


def test_calls_resolve_by_scope_imports_this_and_base() -> None:
    analysis = analyze(TS, "src/services/user.ts", SERVICE)
    assert targets(analysis, "UserService.find") == {
        (("src.services.user.UserService.validate", 0.8),),  # this.m(): own member
        (("src.services.user.UserService.persist", 0.8),),
        (("src.services.base.helper", 0.9),),  # imported under an alias
        (("src.util.format.pad", 0.9),),  # namespace import
        (("lodash.fp.map", 0.9),),
        (("src.services.user.local", 0.9),),  # same module
        (("src.services.user.Registry", 0.9),),  # new X()
        (("src.services.base.default.find", 0.7),),  # super.m(): the base class's member
    }
    assert targets(analysis, "UserService.onClick") == {(("src.services.user.UserService.validate", 0.8),)}
    assert targets(analysis, "Legacy.Inner.old") == {(("src.services.user.local", 0.9),)}
    assert targets(analysis, "UserService.constructor") == set()  # super(...) is the base constructor


def test_bare_names_only_for_distinctive_unknown_functions() -> None:
    source = """\
class Base { inherited() {} }
class Child extends Base {
  run(callback: () => void) {
    this.inherited();
    this.missing();
    callback();
    computeChecksum();
    setTimeout(() => 1);
    push();
    fn();
    items.push(1);
    unknownReceiver.process();
    Child.make();
    [1].map((each) => each());
  }
  static make() {}
}
"""
    analysis = analyze(TS, "a.ts", source)
    assert targets(analysis, "Child.run") == {
        (("a.Base.inherited", 0.7),),  # inherited through the resolved base class
        (("a.Base.missing", 0.7),),
        (("a.Child.make", 0.9),),
        (),
    }
    # Only the distinctive global gets a bare-name fallback; parameters, common names and
    # methods of unknown receivers get nothing.
    assert simple_names(analysis, "Child.run") == {"computeChecksum"}


def test_jsx_elements_render_components() -> None:
    source = """\
import { Button } from "./Button";
import * as UI from "@acme/ui";
/** The toolbar. */
export function Toolbar({ items }: { items: string[] }) {
  return (
    <div className="bar">
      <Button label="ok" />
      <UI.Icon name="x"></UI.Icon>
      {items.map((i) => <Row key={i} />)}
    </div>
  );
}
const Row = ({ key }: { key: string }) => <span>{key}</span>;
export default Toolbar;
"""
    analysis = analyze(TS, "src/Toolbar.tsx", source)
    assert entity(analysis, "Toolbar").types == (UKO_TS + "Function",)
    assert value(analysis, "Toolbar", "modifiers") == ["export", "default"]
    assert value(analysis, "Toolbar", "isDefaultExport", UKO_TS) == [True]
    assert targets(analysis, "Toolbar") == {
        (("src.Button.Button", 0.9),),
        (("@acme/ui.Icon", 0.9),),
        (("src.Toolbar.Row", 0.9),),
    }
    assert analysis.problems == []
    js = analyze(TS, "src/App.jsx", "import Toolbar from './Toolbar';\nexport const App = () => <Toolbar/>;\n")
    assert targets(js, "App") == {(("src.Toolbar.default", 0.9),)}
    assert js.problems == []


def test_javascript_classes_and_private_members() -> None:
    source = """\
class Store extends EventEmitter {
  #items = [];
  static instances = 0;
  get size() { return this.#items.length; }
  #check() {}
  add(item) { this.#check(); this.emit("add", item); }
}
"""
    analysis = analyze(TS, "lib/store.js", source)
    assert value(analysis, "Store.#items", "visibility") == ["#private"]
    assert value(analysis, "Store.instances", "modifiers") == ["static"]
    assert targets(analysis, "Store.add") == {(("lib.store.Store.#check", 0.8),)}
    assert refs(analysis, "Store", INHERITS)[0].simple_name == "EventEmitter"


def test_declaration_files_are_ambient() -> None:
    source = """\
export declare function create(options?: Options): Client;
export interface Options { timeout: number }
declare const VERSION: string;
declare module "express" {
  interface Request { user?: User }
}
declare global {
  interface Window { client: Client }
}
export default create;
"""
    analysis = analyze(TS, "types/index.d.ts", source)
    for key in ("create", "Options", "VERSION", "express", "express.Request", "Window"):
        assert "declare" in value(analysis, key, "modifiers"), key
    assert entity(analysis, "create").types == (UKO_TS + "Function", UKO_TS + "AmbientDeclaration")
    assert entity(analysis, "express").types == (UKO_TS + "Namespace", UKO_TS + "AmbientDeclaration")
    assert value(analysis, "create", "isDefaultExport", UKO_TS) == [True]
    assert entity(analysis, "").symbols == (("js", "types"),)
    # Outside a .d.ts only `declare` makes a declaration ambient.
    plain = analyze(TS, "src/a.ts", "declare function f(): void;\nfunction g(): void {}\n")
    assert "declare" in value(plain, "f", "modifiers") and value(plain, "g", "modifiers") == []


# ── tests ─────────────────────────────────────────────────────────

SPEC = """\
import { render } from "@testing-library/react";
import { Button, formatLabel } from "../src/Button";
import * as utils from "../src/utils";

function setup() { return render(<Button label="x" />); }

describe("Button", () => {
  beforeEach(() => setup());
  it("renders the label", () => {
    expect(formatLabel("a")).toBe("A");
    utils.trimAll([]);
  });
  describe.each([1, 2])("with %i items", (n) => {
    test.only(`counts ${n}`, async () => { await formatLabel("b"); });
  });
});
it("works alone", () => { setup(); });
"""


def test_describe_and_it_blocks_are_test_cases() -> None:
    analysis = analyze(TS, "test/Button.test.tsx", SPEC)
    tests = [e for e in analysis.entities if e.types == (UKO_CODE + "TestCase",)]
    assert [(t.key, t.parent) for t in tests] == [
        ("test/Button", ""),
        ("test/Button > renders the label", "test/Button"),
        ("test/Button > with %i items", "test/Button"),
        ("test/Button > with %i items > counts ${n}", "test/Button > with %i items"),
        ("test/works alone", ""),
    ]
    assert [t.name for t in tests][1] == "renders the label"
    assert value(analysis, "test/Button", "modifiers") == ["describe"]
    assert value(analysis, "test/works alone", "modifiers") == ["test"]
    assert targets(analysis, "test/Button > renders the label", TESTS) == {
        (("src.Button.formatLabel", 0.7),),
        (("src.utils.trimAll", 0.7),),
    }
    assert targets(analysis, "test/Button > with %i items > counts ${n}", TESTS) == {(("src.Button.formatLabel", 0.7),)}
    # A same-file helper is called, not tested.
    assert targets(analysis, "test/works alone") == {(("test.Button.test.setup", 0.9),)}
    assert targets(analysis, "test/works alone", TESTS) == set()
    assert targets(analysis, "setup", TESTS) == set()
    for path in ("src/__tests__/button.tsx", "src/button.spec.js"):
        assert "test/Button" in keys(analyze(TS, path, SPEC)), path
    assert not any(k.startswith("test/") for k in keys(analyze(TS, "src/Button.tsx", SPEC)))


# ── bad input ─────────────────────────────────────────────────────


def test_parse_errors_are_problems_naming_hidden_definitions() -> None:
    source = "function a() {\n  const x = ;\n}\n%%% function hidden(n: number) { return n; } interface Kept {}\n"
    analysis = analyze(TS, "src/a.ts", source)
    (problem,) = analysis.problems
    assert problem.message == "syntax error" and problem.span is not None and problem.span.start_line == 1
    assert {"function a", "function hidden"} <= set(problem.hidden)
    assert keys(analysis) == ["", "Kept"]
    store = graph(TS, "src/a.ts", source)
    rows = select(store, "SELECT ?n WHERE { ?f uko:hasParseErrors true ; ca:hiddenByParseError ?n }")
    assert {"function a", "function hidden"} <= {r["n"] for r in rows}
    missing = analyze(TS, "b.ts", "class A { m() { return 1 +; } }")
    assert [p.message for p in missing.problems] == ["missing identifier"] and "A.m" in keys(missing)
    assert analyze(TS, "c.tsx", "const a = <div>{x ? <b/> : null}</div>;").problems == []


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff\xfe\x00garbage\x80",
        b'function m() { const s = "\xc3\x28"; }\n/** caf\xe9 */ function n() {}',
        b"const x = " + b"[" * 3000 + b"]" * 3000 + b";",
        b"function f() { " + b"if (a) { " * 1500 + b"}" * 1500 + b" }",
        b"class A { m() { " * 200 + b"}}" * 200,
        b"const f = " + b"() => " * 1000 + b"1;",
    ],
    ids=["empty", "binary", "broken-utf8", "deep-expression", "deep-blocks", "deep-classes", "deep-arrows"],
)
def test_bad_input_never_raises_and_renders(data: bytes) -> None:
    for path in ("a.ts", "a.js"):
        analysis = analyze(TS, path, data)
        assert analysis.entities[0].key == ""
        assert not any(p.message.startswith("analyzer error") for p in analysis.problems)
        graph(TS, path, data)  # every literal must survive N-Triples
        for node in analysis.entities[:3]:
            for level in ("MEMBER_LISTING", "SIGNATURES", "STRUCTURAL_OUTLINE", "KEY_LOGIC", "NEAR_COMPLETE"):
                request = RenderRequest(node.key, node.types, path, data, node.span, level, 5)
                assert isinstance(TS.render(request), str)


def test_broken_utf8_keeps_names_and_spans_in_bytes() -> None:
    data = b'function m() { const s = "\xc3\x28"; }\n/** caf\xe9 */\nfunction n() { return "\xe9"; }'
    analysis = analyze(TS, "a.ts", data)
    n = entity(analysis, "n")
    assert value(analysis, "n", "docstring") == ["caf\ufffd"]
    assert n.span is not None and data[n.span.start_byte : n.span.end_byte] == b'function n() { return "\xe9"; }'
    assert render("a.ts", data, "n", "FULL_SOURCE") == 'function n() { return "\ufffd"; }'


SINGLE_VALUED = ("hasParameters", "hasReturnType", "qualifiedName", "signature", "docstring", "visibility", "language")


@pytest.mark.parametrize("path", ["src/services/user.ts", "types/user.d.ts", "src/user.js"])
def test_single_valued_properties_and_distinct_modifiers(path: str) -> None:
    """What shapes/uko.ttl allows once is given at most once, and no modifier twice."""
    for node in analyze(TS, path, SERVICE).entities:
        for local in SINGLE_VALUED:
            assert len(node.values.get(UKO_CODE + local, [])) <= 1, (node.key, local)
        modifiers = node.values.get(UKO_CODE + "modifiers", [])
        assert len(modifiers) == len(set(modifiers)), node.key


def test_triples_load_and_answer_queries() -> None:
    store = graph(TS, "src/services/user.ts", SERVICE)
    rows = select(
        store,
        "SELECT ?m WHERE { ?c uko-oo:hasMethod ?m . ?m a uko-oo:Constructor . ?c uko:name 'UserService' }",
    )
    assert [r["m"] for r in rows] == [iri("src/services/user.ts", "UserService.constructor")]
    rows = select(store, "SELECT ?q WHERE { ?e a uko-ts:Enum ; uko-code:qualifiedName ?q }")
    assert [r["q"] for r in rows] == ["src.services.user.Color"]


# ── rendering ─────────────────────────────────────────────────────

RENDERED = """\
import { log } from "./log";

/** Counts things.
 * More detail. */
export class Counter extends Base implements Tick {
  private count = 0;

  /** Adds some.
   * @param by how much */
  public add(by: number): number {
    // a comment
    console.log("adding");
    if (by < 0) {
      throw new Error("negative");
    } else if (by === 0) {
      return this.count;
    }
    for (let i = 0; i < by; i++) {
      this.count += 1;
    }
    try {
      assert(this.count > 0);
    } catch (e) {
      log(e);
    }
    switch (by) {
      case 1:
        return 1;
      default:
        break;
    }
    items.forEach((item) => {
      while (item.next) { item = item.next; }
    });
    return this.count;
  }

  protected abstract tick(): void;
}

export interface Tick {
  /** Ticks once. */
  tick(): void;
}

export const double = (n: number): number => n * 2;
"""


def test_every_level_of_a_method() -> None:
    levels = levels_of("src/counter.ts", RENDERED, "Counter.add")
    assert levels["MODULE_LISTING"] == "add"
    assert levels["MODULE_GRAPH"] == "add\n  calls console.log, Error, assert, log, items.forEach"
    assert levels["MEMBER_LISTING"] == "method add"
    assert levels["MEMBER_SUMMARY"] == "method add  // Adds some."
    assert levels["SIGNATURES"] == "add(by: number): number { … }"
    assert levels["SIGNATURES_WITH_DOCS"] == "/** Adds some.\n * @param by how much */\nadd(by: number): number { … }"
    assert levels["VISIBILITY_ANNOTATED"] == (
        "/** Adds some.\n * @param by how much */\npublic add(by: number): number { … }"
    )
    assert levels["STRUCTURAL_OUTLINE"] == "\n".join(
        [
            "/** Adds some.",
            " * @param by how much */",
            "public add(by: number): number {",
            "  if (…) {",
            "    throw …",
            "  } else if (…) {",
            "    return …",
            "  }",
            "  for (…) {",
            "    …",
            "  }",
            "  try {",
            "    …",
            "  } catch (e) {",
            "    …",
            "  }",
            "  switch (…) {",
            "    case …:",
            "      return …",
            "    default:",
            "      break;",
            "  }",
            "  items.forEach(… => {",
            "    while (…) {",
            "      …",
            "    }",
            "  })",
            "  return …",
            "}",
        ]
    )
    key_logic = levels["KEY_LOGIC"].splitlines()
    for line in (
        "  if (by < 0) {",
        '    throw new Error("negative");',
        "  for (let i = 0; i < by; i++) {",
        "    this.count += 1;",
        "    assert(this.count > 0);",
        "    case 1:",
        "      item = item.next;",
        "  return this.count;",
    ):
        assert line in key_logic, line
    assert not any("console.log" in line or "log(e)" in line for line in key_logic)
    near = levels["NEAR_COMPLETE"]
    assert "// a comment" not in near and "console.log" not in near and "/**" not in near
    assert near.startswith("public add(by: number): number {\n    if (by < 0) {")
    assert "      assert(this.count > 0);" in near.splitlines() and "log(e)" not in near
    start = RENDERED.index("public add")
    assert levels["FULL_SOURCE"] == RENDERED[start : RENDERED.index("\n\n  protected abstract")]


def test_every_level_of_a_class_and_an_interface() -> None:
    cls = levels_of("src/counter.ts", RENDERED, "Counter")
    assert cls["MODULE_LISTING"] == "Counter"
    assert cls["MODULE_GRAPH"].startswith("Counter\n  extends Base implements Tick\n  calls console.log")
    assert cls["MEMBER_LISTING"] == "class Counter\n  property count\n  method add\n  method tick"
    assert cls["CLASS_HIERARCHY"].startswith("class Counter extends Base implements Tick\n")
    assert cls["MEMBER_SUMMARY"].splitlines()[:3] == [
        "class Counter extends Base implements Tick  // Counts things.",
        "  property count",
        "  method add  // Adds some.",
    ]
    assert cls["SIGNATURES"] == "\n".join(
        [
            "export class Counter extends Base implements Tick {",
            "  count = …",
            "  add(by: number): number { … }",
            "  tick(): void",
            "}",
        ]
    )
    assert cls["SIGNATURES_WITH_DOCS"].startswith("/** Counts things.\n * More detail. */\nexport class Counter")
    assert "  /** Adds some.\n   * @param by how much */\n  add(" in cls["SIGNATURES_WITH_DOCS"]
    visibility = cls["VISIBILITY_ANNOTATED"].splitlines()
    assert "  private count = …" in visibility and "  protected abstract tick(): void" in visibility
    assert "  public add(by: number): number { … }" in visibility
    assert "    if (…) {" in cls["STRUCTURAL_OUTLINE"].splitlines()
    assert "  private count = 0" in cls["KEY_LOGIC"].splitlines()
    assert cls["FULL_SOURCE"] == RENDERED[RENDERED.index("export class") : RENDERED.index("\n\nexport interface")]
    # From MEMBER_LISTING on, each level shows something the one before did not.
    ordered = list(cls.values())[list(cls).index("MEMBER_LISTING") :]
    assert all(a != b for a, b in itertools.pairwise(ordered))
    interface = levels_of("src/counter.ts", RENDERED, "Tick")
    assert interface["MEMBER_LISTING"] == "interface Tick\n  method tick"
    assert interface["MEMBER_SUMMARY"] == "interface Tick\n  method tick  // Ticks once."
    assert interface["SIGNATURES"] == "export interface Tick {\n  tick(): void\n}"
    assert interface["SIGNATURES_WITH_DOCS"] == "export interface Tick {\n  /** Ticks once. */\n  tick(): void\n}"


def test_every_level_of_the_module_and_a_function() -> None:
    module = levels_of("src/counter.ts", RENDERED, "")
    assert module["MODULE_LISTING"] == "src.counter"
    assert module["MODULE_GRAPH"] == "src.counter\n  imports ./log"
    assert (
        module["MEMBER_LISTING"] == "src.counter\n  imports ./log\n  class Counter\n  interface Tick\n  function double"
    )
    assert "  class Counter extends Base implements Tick  // Counts things." in module["MEMBER_SUMMARY"]
    signatures = module["SIGNATURES"]
    assert "export const double = (n: number): number => …" in signatures.splitlines()
    assert "if (" not in signatures and "{ … }" in signatures and "/**" not in signatures
    assert "/** Counts things." in module["SIGNATURES_WITH_DOCS"]
    assert "export const double = (n: number): number => n * 2" in module["KEY_LOGIC"].splitlines()
    assert "import" not in module["NEAR_COMPLETE"] and "console" not in module["NEAR_COMPLETE"]
    assert module["NEAR_COMPLETE"].startswith("export class Counter")
    assert module["FULL_SOURCE"] == RENDERED
    ordered = list(module.values())
    assert all(a != b for a, b in itertools.pairwise(ordered))
    function = levels_of("src/counter.ts", RENDERED, "double")
    assert function["MODULE_LISTING"] == "double"
    assert function["SIGNATURES"] == "export const double = (n: number): number => …"
    assert function["KEY_LOGIC"] == "export const double = (n: number): number => n * 2"
    assert function["FULL_SOURCE"] == "export const double = (n: number): number => n * 2;"


def test_rendering_other_nodes() -> None:
    assert render("src/services/user.ts", SERVICE, "import/./base", "MODULE_LISTING") == "./base"
    assert render("src/services/user.ts", SERVICE, "import/./base", "NEAR_COMPLETE") == (
        'import Base, { helper as h, Shape } from "./base";'
    )
    assert render("src/services/user.ts", SERVICE, "UserService/doc", "MODULE_LISTING") == "Stores users."
    assert render("src/services/user.ts", SERVICE, "Color.Green", "MODULE_LISTING") == "Green"
    assert render("src/services/user.ts", SERVICE, "Color.Green", "FULL_SOURCE") == 'Green = "g"'
    decorated = render("src/services/user.ts", SERVICE, "UserService.find", "SIGNATURES")
    assert decorated.startswith("@Memo()\nasync find<K extends keyof T>(")
    assert render("src/services/user.ts", SERVICE, "Legacy.Inner", "SIGNATURES") == (
        "namespace Legacy.Inner {\n  export function old(): void { … }\n}"
    )
    spec = render("test/Button.test.tsx", SPEC, "test/Button", "STRUCTURAL_OUTLINE").splitlines()
    assert spec[0] == "describe(… => {" and "  it(… => {" in spec
    assert render("test/Button.test.tsx", SPEC, "test/Button", "MODULE_LISTING") == "Button"
    # Stale content (the file shrank): whatever the span now covers, never an exception.
    node = entity(analyze(TS, "src/services/user.ts", SERVICE), "Registry")
    for level in ("MEMBER_LISTING", "SIGNATURES", "KEY_LOGIC", "NEAR_COMPLETE", "FULL_SOURCE"):
        request = RenderRequest("Registry", node.types, "src/services/user.ts", b"class X {}", node.span, level, 5)
        assert isinstance(TS.render(request), str)
    js = "exports.build = function build(a) {\n  if (a) { return 1; }\n};\n"
    assert render("lib/t.js", js, "build", "STRUCTURAL_OUTLINE") == (
        "exports.build = function build(a) {\n  if (…) {\n    return …\n  }\n}"
    )


# ── real code: the pinned npm corpora ─────────────────────────────

NPM_CORPORA = ("rxjs-7.8.1", "react-query-5.62.0", "axios-1.7.9", "express-4.21.2")

# An independent count of what the analyzer calls classes and functions: declarations anywhere,
# and function or class values bound at declaration level (outside any function body).
ORACLE = """
[(class_declaration) (abstract_class_declaration)] @class
(export_statement value: (class)) @class
(variable_declarator name: (identifier) value: (class)) @bound_class
[(function_declaration) (generator_function_declaration) (function_signature)] @function
(export_statement value: [(arrow_function) (function_expression) (generator_function)]) @function
(variable_declarator name: (identifier) value: [(arrow_function) (function_expression) (generator_function)])
  @bound_function
(assignment_expression
  left: (member_expression object: [(identifier) (member_expression)] @target)
  right: [(arrow_function) (function_expression)]) @bound_function
"""
FUNCTION_NODES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "arrow_function",
        "generator_function",
        "method_definition",
    }
)


@functools.cache
def _oracle_query(grammar: str) -> tuple[ts.Parser, ts.Query]:
    factory = {
        "tsx": tree_sitter_typescript.language_tsx,
        "ts": tree_sitter_typescript.language_typescript,
        "js": tree_sitter_javascript.language,
    }[grammar]
    language = ts.Language(factory())
    pattern = ORACLE
    if grammar == "js":
        pattern = pattern.replace("(abstract_class_declaration)", "").replace("(function_signature)", "")
    return ts.Parser(language), ts.Query(language, pattern)


def _outside_functions(node: ts.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in FUNCTION_NODES:
            return False
        parent = parent.parent
    return True


def oracle(path: str, data: bytes) -> tuple[int, int]:
    grammar = "tsx" if path.endswith(".tsx") else "ts" if path.endswith((".ts", ".mts", ".cts")) else "js"
    parser, query = _oracle_query(grammar)
    classes = functions = 0
    for _, captures in ts.QueryCursor(query).matches(parser.parse(data).root_node):
        if "target" in captures and captures["target"][0].text not in (b"exports", b"module.exports"):
            continue
        name = next(k for k in captures if k != "target")
        node = captures[name][0]
        if name == "class":
            classes += 1
        elif name == "function":
            functions += 1
        elif name == "bound_class":
            classes += _outside_functions(node)
        else:
            functions += _outside_functions(node)
    return classes, functions


def _npm_sources() -> list[tuple[str, Path]]:
    """(path within its package, file) of every JS/TS file of the npm corpora; skips when they cannot be had."""
    try:
        from corpora.fetch import CorpusError, corpus_dir
    except ImportError as error:  # corpora/fetch.py not in this checkout
        pytest.skip(f"corpora.fetch unavailable: {error}")
    found: list[tuple[str, Path]] = []
    for name in NPM_CORPORA:
        try:
            root = corpus_dir(name)
        except CorpusError as error:  # offline and not cached: nothing to analyze
            pytest.skip(f"npm corpus {name} unavailable: {error}")
        files = sorted(p for p in root.rglob("*") if p.is_file() and TS.handles(p.as_posix()))
        found += [(p.relative_to(root).as_posix(), p) for p in files]
    return found


def test_npm_corpora() -> None:
    """Every JS/TS file of the pinned npm packages: no error, and the classes and functions a
    tree-sitter query with an ancestor check finds; reports the speed."""
    sources = _npm_sources()
    assert len(sources) > 1500
    elapsed, size, classes, functions, failures = 0.0, 0, 0, 0, []
    for relative, path in sources:
        data = path.read_bytes()
        size += len(data)
        started = time.process_time()
        analysis = analyze(TS, relative, data)
        elapsed += time.process_time() - started
        assert not any(p.message.startswith("analyzer error") for p in analysis.problems), relative
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), relative
        found = (
            sum(UKO_TS + "Class" in e.types for e in analysis.entities),
            sum(UKO_TS + "Function" in e.types for e in analysis.entities),
        )
        expected = oracle(relative, data)
        if found != expected:
            failures.append((relative, found, expected))
        classes, functions = classes + found[0], functions + found[1]
    assert failures == []
    assert classes > 100 and functions > 1000
    rate = len(sources) / elapsed
    print(
        f"\nnpm corpora: {len(sources)} files, {size / 1e6:.2f} MB, {classes} classes, {functions} functions "
        f"in {elapsed:.2f} s CPU ({rate:.0f} files/s)"
    )
    assert rate > 100


def test_references_point_a_language_server_at_the_name() -> None:
    """Each reference carries the position of the name a language server resolves."""
    text = (
        "import { Base } from './base'\n"
        "class Child extends ns.Base<T> implements Shape {\n"
        "  helper() {}\n"
        "  run() { this.helper(); other.util.go(); make() }\n"
        "}\n"
    )
    analysis = analyze(TS, "child.ts", text)
    lines = text.split("\n")
    named = {
        (r.predicate.rsplit("#", 1)[1], lines[r.position[0]][r.position[1] :][:6])
        for r in analysis.references
        if r.position
    }
    assert ("imports", "./base") in named
    assert ("inheritsFrom", "Base<T") in named
    assert ("implements", "Shape ") in named
    assert ("calls", "helper") in named
    assert ("calls", "make()") in named
