"""How lsp/enrich.py names a definition outside the resource (an external symbol), and
reads the signatures in hovers."""

from __future__ import annotations

from pathlib import Path

import basedpyright
import pytest

from cleveragents.lsp.enrich import _enclosing_classes, _module_name, _parameter_types, _signature

TYPESHED = Path(basedpyright.__file__).parent / "dist" / "typeshed-fallback"


def test_stubs_bundled_in_site_packages_are_named_by_their_module() -> None:
    # basedpyright's stubs live in site-packages/basedpyright/dist/typeshed-fallback.
    assert _module_name(TYPESHED / "stdlib" / "http" / "cookiejar.pyi", "python") == "http.cookiejar"
    assert _module_name(TYPESHED / "stdlib" / "builtins.pyi", "python") == "builtins"
    stub = next((TYPESHED / "stubs").glob("*/*/__init__.pyi"))
    assert _module_name(stub, "python") == stub.parent.name


def test_packages_are_named_below_site_packages() -> None:
    installed = Path("/venv/lib/python3.11/site-packages/urllib3/contrib/socks.py")
    assert _module_name(installed, "python") == "urllib3.contrib.socks"


def test_a_method_is_named_by_its_classes() -> None:
    lines = (TYPESHED / "stdlib" / "http" / "cookiejar.pyi").read_text().split("\n")
    row = next(i for i, line in enumerate(lines) if "def set_cookie(" in line)
    assert _enclosing_classes(lines, row) == ["CookieJar"]
    source = [
        "class Outer:",
        "    if True:",
        "        class Inner:",
        "",
        "            # a comment",
        "            def run(self):",
        "                pass",
        "def top():",
        "    pass",
    ]
    assert _enclosing_classes(source, 5) == ["Outer", "Inner"]
    assert _enclosing_classes(source, 7) == []
    assert _enclosing_classes(source, 0) == []


@pytest.mark.parametrize(
    ("hover", "name", "parameters", "returned"),
    [
        (
            "```python\n(function) def scaled(\n    value,\n    factor: float = 2.5,\n    *,\n"
            '    label: str = "x,y"\n) -> str\n```',
            "scaled",
            {"factor": "float", "label": "str"},
            "str",
        ),
        (
            "(method) def run(self: Self@C, *args: int, **kw: dict[str, int]) -> None",
            "run",
            {"self": "Self@C", "args": "int", "kw": "dict[str, int]"},
            "None",
        ),
        (
            "function pick<T>(items: Map<string, T>, key?: string, f: (a: T) => T): T | undefined",
            "pick",
            {"items": "Map<string, T>", "key": "string", "f": "(a: T) => T"},
            "T | undefined",
        ),
        ("(variable) pick: int", "pick", None, None),
    ],
)
def test_signatures_in_hovers(hover: str, name: str, parameters: dict[str, str] | None, returned: str | None) -> None:
    found = _signature(hover, name)
    if parameters is None:
        assert found is None
        return
    assert found is not None
    assert _parameter_types(found[0]) == parameters
    assert found[1] == returned
