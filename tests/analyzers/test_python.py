"""The Python analyzer on hand-written fixtures: entities, values, references, problems, rendering."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cleveragents.analyzers.python import (
    ANALYZERS,
    ATTRIBUTE,
    CALLS,
    CLASS,
    CONSTRUCTOR,
    DECORATOR,
    DEPENDS_ON,
    DOC,
    DOCSTRING,
    EXPORTS_NAME,
    FUNCTION,
    HAS_ATTRIBUTE,
    HAS_METHOD,
    IMPLEMENTS,
    IMPORT,
    IMPORTED_NAME,
    IMPORTS,
    INHERITS_FROM,
    LANGUAGE,
    LEVELS,
    METHOD,
    MODIFIERS,
    MODULE,
    PARAMETERS,
    PROTOCOL,
    QUALIFIED_NAME,
    RETURN_TYPE,
    SIGNATURE,
    STUB_MODULE,
    TEST_FUNCTION,
    TESTS_CALLABLE,
    VARIABLE,
    VISIBILITY,
    PythonAnalyzer,
    absolute_module,
    is_test_file,
    module_name,
)
from cleveragents.indexing.model import Analyzer, FileAnalysis, Reference, RenderRequest
from cleveragents.tbox.detail_levels import effective_levels
from cleveragents.tbox.lookup import expand_term, show_term
from cleveragents.vocabulary import uko_code
from tests.analyzers.support import analyze, entity, graph, iri, select

PY = PythonAnalyzer()


def run(text: str, path: str = "pkg/mod.py") -> FileAnalysis:
    return analyze(PY, path, textwrap.dedent(text))


def refs(analysis: FileAnalysis, predicate: str, source: str | None = None) -> list[Reference]:
    return [r for r in analysis.references if r.predicate == predicate and (source is None or r.source == source)]


def call_targets(analysis: FileAnalysis, source: str) -> list[tuple[tuple[tuple[str, float], ...], str | None]]:
    return [(r.targets, r.simple_name) for r in refs(analysis, CALLS, source)]


def params(analysis: FileAnalysis, key: str) -> list[dict[str, str | None]]:
    return json.loads(str(entity(analysis, key).values[PARAMETERS][0]))


# ── plugin surface ────────────────────────────────────────────────


def test_plugin_surface() -> None:
    assert isinstance(ANALYZERS[0], Analyzer) and ANALYZERS[0].name == "python"
    assert PY.handles("a/b.py") and PY.handles("a/b.pyi")
    assert not PY.handles("a/b.pyc") and not PY.handles("a/py") and not PY.handles("a/b.txt")
    assert PY.file_types("x.py") == (MODULE,) and PY.file_types("x.pyi") == (STUB_MODULE,)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/mod.py", "pkg.mod"),
        ("src/pkg/mod.py", "pkg.mod"),
        ("pkg/__init__.py", "pkg"),
        ("src/pkg/__init__.pyi", "pkg"),
        ("mod.pyi", "mod"),
        ("__init__.py", ""),
        ("lib/src/x.py", "lib.src.x"),
    ],
)
def test_module_name(path: str, expected: str) -> None:
    assert module_name(path) == expected


@pytest.mark.parametrize(
    ("module", "package", "level", "name", "expected"),
    [
        ("a.b.c", False, 1, "", "a.b"),
        ("a.b.c", False, 1, "d", "a.b.d"),
        ("a.b.c", False, 2, "d", "a.d"),
        ("a.b", True, 1, "d", "a.b.d"),  # a/b/__init__.py
        ("a.b", True, 2, "", "a"),
        ("a", False, 3, "x", "x"),  # beyond the top: what is left
    ],
)
def test_absolute_module(module: str, package: bool, level: int, name: str, expected: str) -> None:
    assert absolute_module(module, package, level, name) == expected


def test_test_files() -> None:
    assert is_test_file("tests/x.py") and is_test_file("pkg/test_x.py") and is_test_file("pkg/x_test.py")
    assert is_test_file("app/tests.py") and not is_test_file("pkg/testing.py") and not is_test_file("pkg/x.py")


# ── file node, definitions, values ────────────────────────────────

DEFINITIONS = '''
"""The module docstring."""
import abc

__all__ = ["Model", 'helper']
LIMIT = 10
ratio: float = 0.5


class Base:
    pass


class Model(Base, metaclass=abc.ABCMeta):
    """A model.

    Second paragraph."""

    table: str
    count = 0

    def __init__(self, name: str, /, size: int = 1, *parts: str, strict, flag: bool = False, **extra) -> None:
        self.name = name
        if size:
            self._size = size

    @property
    def size(self) -> int:
        # a comment before the docstring
        """The size."""
        return self._size

    @size.setter
    def size(self, value: int) -> None:
        self._size = value

    @staticmethod
    async def fetch(*, timeout: float = 1.0) -> bytes:
        return b""

    @classmethod
    @abc.abstractmethod
    def build(cls): ...

    def __private(self):
        self.late = 1

    def _protected(self):
        def helper():
            pass
        return helper


def helper(x, y=(1, 2)):
    f"""not a docstring {x}"""
    return x


helper = helper  # a reassignment is not a second definition
'''


def test_file_node() -> None:
    analysis = run(DEFINITIONS)
    node = analysis.entities[0]
    assert node.key == "" and node.name == "mod.py" and node.types == (MODULE,)
    assert node.values[LANGUAGE] == ["python"] and node.values[QUALIFIED_NAME] == ["pkg.mod"]
    assert node.symbols == (("py", "pkg.mod"),)
    assert node.values[DOC] == ["The module docstring."]
    assert node.values[EXPORTS_NAME] == ["Model", "helper"]
    assert entity(analysis, "/doc").types == (DOCSTRING,) and entity(analysis, "/doc").parent == ""
    assert analysis.problems == []
    stub = analyze(PY, "pkg/mod.pyi", "def f() -> int: ...\n")
    assert stub.entities[0].types == (STUB_MODULE,) and entity(stub, "f").values[SIGNATURE] == ["def f() -> int"]


def test_definitions_keys_types_and_symbols() -> None:
    analysis = run(DEFINITIONS)
    keys = [e.key for e in analysis.entities]
    assert len(keys) == len(set(keys))
    assert entity(analysis, "Model").types == (CLASS,)
    assert entity(analysis, "Model.__init__").types == (CONSTRUCTOR, METHOD)
    assert entity(analysis, "Model.fetch").types == (METHOD,)
    assert entity(analysis, "helper").types == (FUNCTION,)
    nested = entity(analysis, "Model._protected.helper")
    assert nested.types == (FUNCTION,) and nested.parent == "Model._protected"
    assert nested.values[QUALIFIED_NAME] == ["pkg.mod.Model._protected.helper"]
    assert entity(analysis, "Model.size").symbols == (("py", "pkg.mod.Model.size"),)
    setter = entity(analysis, "Model.size~2")  # the setter redefines the name: a suffix and no symbol
    assert setter.symbols == () and setter.values[QUALIFIED_NAME] == ["pkg.mod.Model.size"]
    assert entity(analysis, "Model.__init__").parent == "Model" and entity(analysis, "Model").parent == ""
    method = entity(analysis, "Model.size")
    assert method.span is not None and method.span.start_line == 27  # the decorator line: FULL_SOURCE includes it


def test_parameters_as_ast_sees_them() -> None:
    analysis = run(DEFINITIONS)
    init = params(analysis, "Model.__init__")
    assert [(p["name"], p["kind"]) for p in init] == [
        ("self", "positional_only"),
        ("name", "positional_only"),
        ("size", "positional"),
        ("parts", "var_positional"),
        ("strict", "keyword_only"),
        ("flag", "keyword_only"),
        ("extra", "var_keyword"),
    ]
    assert init[2] == {"name": "size", "type": "int", "default": "1", "kind": "positional"}
    assert init[3]["type"] == "str" and init[1]["default"] is None
    assert params(analysis, "Model.fetch") == [
        {"name": "timeout", "type": "float", "default": "1.0", "kind": "keyword_only"}
    ]
    assert params(analysis, "helper")[1]["default"] == "(1, 2)"
    sig = entity(analysis, "Model.__init__").values[SIGNATURE]
    assert sig == [
        "def __init__(self, name: str, /, size: int = 1, *parts: str, strict, flag: bool = False, **extra) -> None"
    ]
    assert entity(analysis, "Model.fetch").values[SIGNATURE] == ["async def fetch(*, timeout: float = 1.0) -> bytes"]
    assert entity(analysis, "Model.size").values[RETURN_TYPE] == ["int"]
    assert RETURN_TYPE not in entity(analysis, "helper").values


def test_decorators_modifiers_visibility() -> None:
    analysis = run(DEFINITIONS)
    assert entity(analysis, "Model.size").values[DECORATOR] == ["property"]
    assert entity(analysis, "Model.size").values[MODIFIERS] == ["property"]
    assert entity(analysis, "Model.size~2").values[DECORATOR] == ["size.setter"]
    assert entity(analysis, "Model.fetch").values[MODIFIERS] == ["async", "static"]
    build = entity(analysis, "Model.build")
    assert build.values[DECORATOR] == ["classmethod", "abc.abstractmethod"]
    assert set(build.values[MODIFIERS]) == {"classmethod", "abstract"}
    assert entity(analysis, "Model").values[MODIFIERS] == ["abstract"]  # metaclass=ABCMeta
    assert entity(analysis, "Model.__private").values[VISIBILITY] == ["private"]
    assert entity(analysis, "Model._protected").values[VISIBILITY] == ["protected"]
    assert entity(analysis, "Model.__init__").values[VISIBILITY] == ["public"]
    assert MODIFIERS not in entity(analysis, "helper").values


def test_docstrings() -> None:
    analysis = run(DEFINITIONS)
    assert entity(analysis, "Model").values[DOC] == ["A model.\n\nSecond paragraph."]
    assert entity(analysis, "Model.size").values[DOC] == ["The size."]  # after a comment
    doc = entity(analysis, "Model/doc")
    assert doc.types == (DOCSTRING,) and doc.parent == "Model" and doc.span is not None and doc.span.start_line == 15
    assert DOC not in entity(analysis, "helper").values  # an f-string is no docstring
    long = run(f'def f():\n    """{"x" * 900}"""\n')
    assert len(str(entity(long, "f").values[DOC][0])) == 500


def test_attributes_and_variables() -> None:
    analysis = run(DEFINITIONS)
    model = entity(analysis, "Model")
    attributes = [key for predicate, key in model.links if predicate == HAS_ATTRIBUTE]
    assert attributes == ["Model.table", "Model.count", "Model.name", "Model._size"]  # not `late`: only __init__
    assert entity(analysis, "Model.table").types == (ATTRIBUTE,)
    assert entity(analysis, "Model.table").values[SIGNATURE] == ["table: str"]
    assert entity(analysis, "Model._size").values[VISIBILITY] == ["protected"]
    assert entity(analysis, "Model._size").symbols == (("py", "pkg.mod.Model._size"),)
    methods = [key for predicate, key in model.links if predicate == HAS_METHOD]
    assert methods[:3] == ["Model.__init__", "Model.size", "Model.size~2"] and "Model._protected.helper" not in methods
    limit = entity(analysis, "LIMIT")
    assert limit.types == (VARIABLE,) and limit.values[MODIFIERS] == ["const"]
    assert entity(analysis, "ratio").values[SIGNATURE] == ["ratio: float"]
    assert [e.key for e in analysis.entities if e.key == "__all__" or e.key.startswith("helper~")] == []


def test_protocols_and_inheritance() -> None:
    analysis = run(
        """
        import typing
        from typing import Protocol, Generic, TypeVar
        from .base import Base as B
        from lib import *

        class Readable(Protocol):
            def read(self) -> bytes: ...

        class Pair(typing.Protocol[T]):
            pass

        class File(Readable, B, Generic[T], Exception, Unknown, object):
            pass

        class Local(File):
            pass
        """
    )
    assert entity(analysis, "Readable").types == (PROTOCOL,) and entity(analysis, "Pair").types == (PROTOCOL,)
    assert entity(analysis, "File").types == (CLASS,)
    found = [(r.predicate, r.targets, r.simple_name) for r in analysis.references if r.source == "File"]
    assert found == [
        (IMPLEMENTS, (("pkg.mod.Readable", 0.95),), "Readable"),
        (INHERITS_FROM, (("pkg.base.Base", 0.95),), "Base"),
        # From outside the package: the qualified name, else this file's external symbol.
        (INHERITS_FROM, (("typing.Generic", 0.95), ("~external:pkg/mod.py:typing.Generic", 0.95)), "Generic"),
        # A builtin the star import might shadow: lower confidence.
        (
            INHERITS_FROM,
            (("lib.Exception", 0.95), ("~external:pkg/mod.py:builtins.Exception", 0.7)),
            "Exception",
        ),
        (INHERITS_FROM, (("lib.Unknown", 0.95),), "Unknown"),  # through the star import
    ]
    external = entity(analysis, "~external/python/builtins.Exception")
    assert external.types == (uko_code.ExternalSymbol,) and external.values[QUALIFIED_NAME] == ["builtins.Exception"]
    assert [r.targets for r in refs(analysis, INHERITS_FROM, "Local")] == [(("pkg.mod.File", 0.95),)]


# ── imports ───────────────────────────────────────────────────────

IMPORTING = """
from __future__ import annotations
import os.path
import numpy as np, sys
from . import sibling, other as o
from .. import top
from .sub.leaf import thing as t
from django.db import (
    models,  # comment inside
    transaction,
)
from x import *
def f():
    import json
"""


def test_imports_in_a_module() -> None:
    analysis = run(IMPORTING, "pkg/sub/mod.py")
    imports = {e.key: e for e in analysis.entities if IMPORT in e.types}
    assert list(imports) == [
        "import/os.path",
        "import/numpy",
        "import/sys",
        "import/pkg.sub.sibling",
        "import/pkg.sub.other",
        "import/pkg.top",
        "import/pkg.sub.sub.leaf",
        "import/django.db",
        "import/x",
        "import/json",
    ]
    assert imports["import/pkg.sub.sub.leaf"].values[IMPORTED_NAME] == [".sub.leaf"]
    assert imports["import/pkg.top"].values[IMPORTED_NAME] == ["..top"]
    assert imports["import/numpy"].values[IMPORTED_NAME] == ["numpy"]
    depends = [r.targets for r in refs(analysis, DEPENDS_ON, "")]
    assert (("pkg.sub.sibling", 0.95), ("pkg.sub", 0.95)) in depends  # a submodule, else the package
    assert (("django.db", 0.95),) in depends and len(depends) == len(imports)
    assert [r.targets for r in refs(analysis, IMPORTS, "import/django.db")] == [(("django.db", 0.95),)]


def test_relative_imports_in_a_package_init() -> None:
    analysis = run("from . import a\nfrom .b import c\nfrom .. import d\n", "src/pkg/sub/__init__.py")
    keys = [e.key for e in analysis.entities if IMPORT in e.types]
    assert keys == ["import/pkg.sub.a", "import/pkg.sub.b", "import/pkg.d"]


# ── calls ─────────────────────────────────────────────────────────

CALLING = """
import numpy as np
import os.path
from .helpers import tool, Widget as W
from lib import *

def module_function():
    pass

class Base:
    def shared(self):
        pass

class Service(Base):
    field = W(size=3)

    def __init__(self):
        self.run_all()

    def run_all(self, callback=None):
        def local():
            pass
        local()
        local()
        module_function()
        tool()
        np.linalg.norm([])
        os.path.join("a", "b")
        self.shared()
        self.run_all()
        super().shared()
        Service()
        callback()
        len([])
        items.get("x")
        items.compute_checksum()
        mystery_function()
        make()().again()

module_function()
"""


def test_calls_resolve_through_scopes_imports_and_self() -> None:
    analysis = run(CALLING)
    found = call_targets(analysis, "Service.run_all")
    assert found == [
        ((("pkg.mod.Service.run_all.local", 0.95),), None),  # once: deduplicated
        ((("pkg.mod.module_function", 0.95),), None),
        ((("pkg.helpers.tool", 0.95),), "tool"),
        ((("numpy.linalg.norm", 0.95),), "norm"),
        ((("os.path.join", 0.95),), None),  # `join` is too common for a bare-name guess
        ((("pkg.mod.Service.shared", 0.95), ("pkg.mod.Base.shared", 0.95)), "shared"),
        ((("pkg.mod.Service.run_all", 0.95), ("pkg.mod.Base.run_all", 0.95)), "run_all"),
        ((("pkg.mod.Base.shared", 0.95),), None),  # super(): through the bases only
        ((("pkg.mod.Service", 0.95),), None),
        ((("pkg.mod.Service.__init__", 0.95),), None),
        ((), "compute_checksum"),  # unknown receiver, distinctive name
        ((("lib.mystery_function", 0.95),), "mystery_function"),  # star import, then the bare name
        ((("lib.make", 0.95),), "make"),
        ((), "again"),
    ]
    # callback() is a parameter, len() a builtin, items.get() too common: no edge at all.
    assert call_targets(analysis, "Service.__init__") == [
        ((("pkg.mod.Service.run_all", 0.95), ("pkg.mod.Base.run_all", 0.95)), "run_all")
    ]
    assert call_targets(analysis, "Service") == [((("pkg.helpers.Widget", 0.95),), "Widget")]  # class body
    assert call_targets(analysis, "") == [((("pkg.mod.module_function", 0.95),), None)]
    lines = {r.targets[0][0]: r.line for r in refs(analysis, CALLS, "Service.run_all") if r.targets}
    assert lines["pkg.mod.module_function"] == 25 and lines["pkg.mod.Service.run_all.local"] == 23


def test_tests_callable_by_naming() -> None:
    text = """
    from pkg.parser import parse_url, Parser
    from pkg import bar

    def test_parse_url_with_port():
        assert parse_url("x")

    def test_baz():
        bar.baz()

    def test_nothing_known():
        pass

    def helper():
        def test_nested():
            pass

    class TestParser:
        def test_feed(self):
            pass
    """
    analysis = run(text, "tests/test_bar.py")
    assert entity(analysis, "test_baz").types == (TEST_FUNCTION, FUNCTION)
    assert entity(analysis, "TestParser.test_feed").types == (TEST_FUNCTION, METHOD)
    assert entity(analysis, "helper.test_nested").types == (FUNCTION,)
    tested = {r.source: [name for name, _ in r.targets] for r in refs(analysis, TESTS_CALLABLE)}
    assert tested["test_parse_url_with_port"][0] == "pkg.parser.parse_url"
    assert tested["test_baz"] == ["pkg.bar.baz"]  # the module under test: test_bar.py -> bar
    assert tested["TestParser.test_feed"][0] == "pkg.parser.Parser.feed"
    assert all(c == 0.7 for r in refs(analysis, TESTS_CALLABLE) for _, c in r.targets)
    plain = run("def test_x():\n    pass\n", "pkg/x.py")
    assert entity(plain, "test_x").types == (FUNCTION,) and refs(plain, TESTS_CALLABLE) == []
    in_class = run("class TestThing:\n    def test_a(self):\n        pass\n", "pkg/x.py")
    assert entity(in_class, "TestThing.test_a").types == (TEST_FUNCTION, METHOD)


# ── bad input ─────────────────────────────────────────────────────


def test_parse_errors_keep_what_parses_and_name_what_is_hidden() -> None:
    analysis = run(
        """
        def ok():
            return 1

        class Broken(:
            def kept(self):
                pass

        def after():
            pass
        """
    )
    assert {"ok", "Broken", "Broken.kept", "after"} <= {e.key for e in analysis.entities}
    assert analysis.problems and analysis.problems[0].span is not None
    swallowed = run("def first(:\n    x = [1, 2\n    def inner(): pass\nclass C:\n    def m(self): return (\n")
    assert [h for p in swallowed.problems for h in p.hidden] == ["def first", "def inner", "class C", "def m"]
    assert [e.key for e in swallowed.entities] == [""]
    assert refs(swallowed, CALLS) == []  # `def m(self)` misread as a call inside the error: no edge


def test_broken_utf8_empty_and_whitespace_files() -> None:
    analysis = analyze(PY, "pkg/bad.py", b'def f\xff\xfe(a):\n    """d\xc3\x28"""\n    return "\x80"\nclass K: pass\n')
    assert {"f", "K"} <= {e.key for e in analysis.entities}
    assert "\ufffd" in str(entity(analysis, "f").values[DOC][0])
    for text in (b"", b"\n\n   \n", b"# only a comment\n"):
        empty = analyze(PY, "pkg/empty.py", text)
        assert [e.key for e in empty.entities] == [""] and empty.problems == [] and empty.references == []


def test_deep_nesting() -> None:
    depth = 150
    nested = "".join("    " * i + f"def f{i}():\n" for i in range(depth)) + "    " * depth + "return g()\n"
    analysis = analyze(PY, "pkg/deep.py", nested)
    deepest = ".".join(f"f{i}" for i in range(depth))
    assert entity(analysis, deepest).parent == deepest.rsplit(".", 1)[0]
    assert [r.simple_name for r in refs(analysis, CALLS, deepest)] == ["g"]
    expression = "x = " + "(" * 3000 + "1" + ")" * 3000 + "\ny = f(" * 1 + "[" * 2000 + "]" * 2000 + ")\n"
    analyze(PY, "pkg/expr.py", expression)  # must not raise
    for level in ("SIGNATURES", "STRUCTURAL_OUTLINE", "KEY_LOGIC", "NEAR_COMPLETE"):
        text = render(analysis, nested.encode(), deepest, level)
        assert text.strip()
        written = render(analysis, nested.encode(), "f0", level).count("def f")
        # SIGNATURES shows no bodies; outlines elide below 100 levels; NEAR_COMPLETE is source text
        assert written == {"SIGNATURES": 1, "NEAR_COMPLETE": depth}.get(level, 101)
    ifs = ("".join("    " * i + "if x:\n" for i in range(600)) + "    " * 600 + "def hidden(): pass\n").encode()
    deep_ifs = analyze(PY, "pkg/ifs.py", ifs)
    assert entity(deep_ifs, "hidden").parent == ""
    for level in LEVELS:
        assert render(deep_ifs, ifs, "", level, "pkg/ifs.py").strip()


PIECES = [
    "def ", "class ", "async ", "f", "x", "self", "(", ")", ":", "\n", "    ", ",", "=", "*", "**", "/", "@", "import ",
    "from ", ". ", "return ", "if ", "else", '"""', "'", "#", "[", "]", "\\", "lambda ", "\udcff", "é",
]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=60))
@example([":", "*", "async "])  # an annotated assignment without a target: no nameless entity
@example(
    ["class ", "f", ":", "\n", "    ", "def ", "f", "(", "self", ")", ":", "\n", "    ", "    ", "self", ". ", "=", "x"]
)
def test_arbitrary_input_never_raises(pieces: list[str]) -> None:
    data = "".join(pieces).encode("utf-8", errors="surrogateescape")
    analysis = analyze(PY, "pkg/any.py", data)
    keys = [e.key for e in analysis.entities]
    assert keys[0] == "" and len(keys) == len(set(keys))
    for node in analysis.entities[1:]:
        assert node.span is not None and 0 <= node.span.start_byte <= node.span.end_byte <= len(data)
        full = PY.render(RenderRequest(node.key, node.types, "pkg/any.py", data, node.span, "FULL_SOURCE", 13))
        assert full == data[node.span.start_byte : node.span.end_byte].decode("utf-8", errors="replace")
        PY.render(RenderRequest(node.key, node.types, "pkg/any.py", data, node.span, "KEY_LOGIC", 10))


def test_graph_triples() -> None:
    store = graph(PY, "pkg/mod.py", textwrap.dedent(DEFINITIONS))
    rows = select(store, "SELECT ?m WHERE { ?c uko:name 'Model' ; uko-oo:hasMethod ?m }")
    assert {r["m"] for r in rows} >= {iri("pkg/mod.py", "Model.__init__"), iri("pkg/mod.py", "Model.size~2")}
    rows = select(store, "SELECT ?d WHERE { ?c uko:contains ?d . ?d a uko-code:Docstring }")
    assert {r["d"] for r in rows} >= {iri("pkg/mod.py", "Model/doc"), iri("pkg/mod.py", "/doc")}
    rows = select(store, f"SELECT ?p WHERE {{ <{iri('pkg/mod.py', 'helper')}> uko-code:hasParameters ?p }}")
    assert json.loads(rows[0]["p"])[0]["name"] == "x"


# ── rendering ─────────────────────────────────────────────────────

RENDERED = '''\
"""Service module."""
import logging
from typing import Any

logger = logging.getLogger(__name__)


class Service:
    """Runs jobs."""

    retries: int = 3

    @staticmethod
    def _pick(jobs: list[Any], limit: int = 2) -> list[Any]:
        """Choose jobs.

        At most ``limit`` of them."""
        chosen = []  # the selection
        for job in jobs:
            if job.ready and len(chosen) < limit:
                chosen.append(job)
            elif job.failed:
                logger.warning("failed %s", job)
                continue
        try:
            total = sum(j.size for j in chosen)
        except TypeError as exc:
            raise ValueError("bad size") from exc
        finally:
            logger.debug("picked")
        while total > 10:
            total -= 1
        with open("f") as handle:
            handle.write(str(total))
        assert total >= 0
        return chosen
'''


def render(analysis: FileAnalysis, data: bytes, key: str, level: str, path: str = "pkg/svc.py") -> str:
    node = entity(analysis, key)
    return PY.render(RenderRequest(key, node.types, path, data, node.span, level, LEVELS.index(level)))


@pytest.fixture(scope="module")
def rendered() -> tuple[FileAnalysis, bytes]:
    data = RENDERED.encode()
    return analyze(PY, "pkg/svc.py", data), data


def test_render_signatures_show_no_bodies(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    text = render(analysis, data, "Service", "SIGNATURES")
    assert text == (
        "class Service:\n    retries: int = ...\n    def _pick(jobs: list[Any], limit: int = 2) -> list[Any]: ...\n"
    )
    assert render(analysis, data, "Service._pick", "SIGNATURES") == (
        "def _pick(jobs: list[Any], limit: int = 2) -> list[Any]: ...\n"
    )
    with_docs = render(analysis, data, "Service._pick", "SIGNATURES_WITH_DOCS")
    assert with_docs == (
        'def _pick(jobs: list[Any], limit: int = 2) -> list[Any]:\n    """Choose jobs.\n\n'
        '    At most ``limit`` of them."""\n    ...\n'
    )
    decorated = render(analysis, data, "Service._pick", "DECORATED_SIGNATURES")
    assert decorated.startswith("@staticmethod\ndef _pick(") and "for" not in decorated
    visible = render(analysis, data, "Service._pick", "VISIBILITY_ANNOTATED")
    assert visible.split("\n")[1].endswith("  # protected, static")


def test_render_structural_outline_has_control_flow_without_expressions(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    body = render(analysis, data, "Service._pick", "STRUCTURAL_OUTLINE").split('    At most ``limit`` of them."""\n')[1]
    assert textwrap.dedent(body) == textwrap.dedent(
        """\
            for ...:
                if ...:
                    ...
                elif ...:
                    continue
            try:
                ...
            except ...:
                raise
            finally:
                ...
            while ...:
                ...
            with ...:
                ...
            return
        """
    )
    key_logic = render(analysis, data, "Service._pick", "KEY_LOGIC")
    for line in ("chosen = []", "if job.ready and len(chosen) < limit:", 'raise ValueError("bad size") from exc'):
        assert (
            f"\n        {line}\n" in key_logic
            or f"\n    {line}\n" in key_logic
            or f"\n            {line}\n" in key_logic
        )
    assert "assert total >= 0" in key_logic and "return chosen" in key_logic and "total -= 1" in key_logic
    assert "logger.warning" not in key_logic and "# the selection" not in key_logic


def test_render_full_source_is_the_exact_slice(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    for key in ("Service", "Service._pick", "Service.retries", "import/typing", "Service/doc"):
        span = entity(analysis, key).span
        assert span is not None
        exact = data[span.start_byte : span.end_byte].decode()
        assert render(analysis, data, key, "FULL_SOURCE") == exact
        assert render(analysis, data, key, "WITH_TESTS") == exact
    assert render(analysis, data, "", "FULL_SOURCE") == RENDERED
    assert render(analysis, data, "Service._pick", "FULL_SOURCE").startswith("@staticmethod\n    def _pick(")


def test_render_near_complete_drops_comments_logging_and_imports(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    text = render(analysis, data, "", "NEAR_COMPLETE")
    assert "import" not in text and "# the selection" not in text and "logger.warning" not in text
    assert "logger.debug" not in text and "chosen = []\n" in text and '"""Runs jobs."""' in text
    method = render(analysis, data, "Service._pick", "NEAR_COMPLETE")
    assert method.startswith("@staticmethod\ndef _pick(") and "\n    for job in jobs:\n" in method  # dedented


def test_render_module_levels(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    assert render(analysis, data, "", "MODULE_LISTING") == "module pkg.svc\n"
    assert render(analysis, data, "", "MODULE_GRAPH") == "module pkg.svc\nimports: logging, typing\n"
    listing = render(analysis, data, "", "MEMBER_LISTING")
    assert listing.splitlines()[2:] == ["logger", "class Service"]
    assert render(analysis, data, "", "MEMBER_SUMMARY").splitlines()[-1] == "class Service  # Runs jobs."
    signatures = render(analysis, data, "", "SIGNATURES")
    assert "    def _pick(jobs: list[Any], limit: int = 2) -> list[Any]: ...\n" in signatures
    assert "from typing import Any" in render(analysis, data, "", "TYPE_STUBS")
    assert "from typing import Any" not in render(analysis, data, "", "KEY_LOGIC")


def test_render_class_listing_levels(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    assert render(analysis, data, "Service", "MODULE_LISTING") == "class Service\n"
    assert render(analysis, data, "Service", "MEMBER_LISTING") == "class Service\n    retries\n    def _pick\n"
    summary = render(analysis, data, "Service", "MEMBER_SUMMARY")
    assert summary == "class Service  # Runs jobs.\n    retries\n    def _pick  # Choose jobs.\n"


def test_every_level_renders_every_kind(rendered: tuple[FileAnalysis, bytes]) -> None:
    analysis, data = rendered
    for key in ("", "Service", "Service._pick", "Service.retries", "logger", "import/typing"):
        texts = [render(analysis, data, key, level) for level in LEVELS]
        assert all(t.strip() for t in texts), key
        if key in ("", "Service._pick"):
            # each named level adds something somewhere along the map for definitions and modules
            assert len(set(texts)) >= 10, key
    node = entity(analysis, "Service")
    unknown = PY.render(RenderRequest("Service", node.types, "pkg/svc.py", data, node.span, "NO_SUCH_LEVEL", 5))
    assert unknown == render(analysis, data, "Service", "SIGNATURES")  # depth 5 in the uko-py map


def test_render_handles_broken_files() -> None:
    data = b"class Broken(:\n    def kept(self):\n        if x:\n            return 1\n\xff\n"
    analysis = analyze(PY, "pkg/b.py", data)
    for level in LEVELS:
        assert isinstance(render(analysis, data, "Broken.kept", level, "pkg/b.py"), str)
        assert isinstance(render(analysis, data, "", level, "pkg/b.py"), str)


def test_vocabulary_and_levels_come_from_the_ontology() -> None:
    import cleveragents.analyzers.python as module

    used = [v for k, v in vars(module).items() if k.isupper() and isinstance(v, str) and v[-1] not in "#/"]
    used = [v for v in used if v.startswith("https://")]
    kinds = {show_term(term).kind for term in used}  # raises on a term the ontology does not declare
    assert kinds == {"class", "object property", "datatype property"} and len(used) >= 30
    for term in ("uko-py:Module", "uko-py:Class", "uko-py:Function", "uko-py:Method"):
        assert tuple(level.name for level in effective_levels(expand_term(term))) == LEVELS


NAME_MATCH_LIMITS = """\
import argparse
from pkg.base import Local


class Parser(argparse.ArgumentParser):
    def parse_args(self, args=None):
        return super().parse_args(args)

    def run(self):
        self.print_help()


class Child(Local):
    def run(self):
        self.helper()


class Store:
    def get(self, key):
        return self.data.get(key)


def walk(node):
    return walk(node.child)
"""


def test_name_matching_says_nothing_where_it_cannot_know() -> None:
    analysis = analyze(PY, "pkg/cli.py", NAME_MATCH_LIMITS)
    calls = {(r.source, r.targets, r.simple_name) for r in analysis.references if r.predicate == CALLS}
    # super() goes through the bases only: never a bare-name match to the class's own method.
    assert ("Parser.parse_args", (("argparse.ArgumentParser.parse_args", 0.95),), None) in calls
    # self.m() on a class with a base from outside the package: the class and its bases, no guess.
    assert (
        "Parser.run",
        (("pkg.cli.Parser.print_help", 0.95), ("argparse.ArgumentParser.print_help", 0.95)),
        None,
    ) in calls
    # ... with every base inside the package, a bare name may still find it up the chain.
    assert ("Child.run", (("pkg.cli.Child.helper", 0.95), ("pkg.base.Local.helper", 0.95)), "helper") in calls
    # x.get() inside def get delegates; a bare-name match would make it call itself.
    assert not [c for c in calls if c[0] == "Store.get"]
    # A bare self-reference that nothing shadows is recursion.
    assert ("walk", (("pkg.cli.walk", 0.95),), None) in calls
