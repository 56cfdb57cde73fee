"""The configuration analyzer: TOML, .env and INI files; secrets; bad input; renderings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cleveragents.analyzers.configuration import ANALYZERS
from cleveragents.indexing.model import FileAnalysis
from cleveragents.terms import UKO_INFRA
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select
from tests.analyzers.test_infrastructure import everything_shown, level_names, render

CONFIG = ANALYZERS[0]

CONFIG_FILE, CONFIG_BLOCK, CONFIG_KEY = UKO_INFRA + "ConfigFile", UKO_INFRA + "ConfigBlock", UKO_INFRA + "ConfigKey"
ENV_VAR = UKO_INFRA + "EnvironmentVariable"


def value(analysis: FileAnalysis, key: str, local: str) -> list[object]:
    return entity(analysis, key).values.get(UKO_INFRA + local, [])


def written(text: str, analysis: FileAnalysis, key: str) -> str:
    span = entity(analysis, key).span
    return text.encode()[span.start_byte : span.end_byte].decode()


# ── TOML ───────────────────────────────────────────────────────────

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "demo"
version = "0.1.0"
authors = [{name = "Ada", email = "ada@example.com"}]
dependencies = [
  # a comment with ] and = inside
  "pyyaml>=6.0",
  "rdflib>=7.1,<8",
]

[project.optional-dependencies]
dev = ["pytest>=8"]

[tool.ruff]
line-length = 120
lint.select = ["E", "F"]

[tool.ruff.lint.per-file-ignores]
"tests/**" = ["ANN"]

[[tool.mypy.overrides]]
module = "yaml.*"
ignore_missing_imports = true

[[tool.mypy.overrides]]
module = "rdflib.*"

[tool.deploy]
api_token = "swordfish-token"  # where it goes
database = {host = "db", password = "swordfish-inline"}
notes = '''
multi "line" ]
'''
started = 1979-05-27T07:32:00Z
"""


@pytest.fixture(scope="module")
def pyproject() -> FileAnalysis:
    return analyze(CONFIG, "pyproject.toml", PYPROJECT)


def test_toml_tables_and_keys(pyproject: FileAnalysis) -> None:
    assert not pyproject.problems
    assert pyproject.entities[0].types == (CONFIG_FILE,)
    assert ("config", "pyproject.toml") in pyproject.entities[0].symbols
    project = entity(pyproject, "project")
    assert project.types == (CONFIG_BLOCK,) and project.parent == ""
    assert value(pyproject, "project.name", "configValue") == ["demo"]
    assert entity(pyproject, "project.name").parent == "project"
    assert value(pyproject, "tool.ruff.line-length", "keyPath") == ["tool.ruff.line-length"]
    # Dotted keys make implicit tables; quoted keys keep their dots inside one segment.
    assert entity(pyproject, "tool.ruff.lint").parent == "tool.ruff"
    assert value(pyproject, "tool.ruff.lint.select", "configValue") == ["[E, F]"]
    assert value(pyproject, "tool.ruff.lint.per-file-ignores.tests/**", "configValue") == ["[ANN]"]
    assert value(analyze(CONFIG, "q.toml", '"a.b" = 1'), '"a.b"', "keyPath") == ['"a.b"']
    assert value(pyproject, "tool.deploy.started", "configValue") == ["1979-05-27T07:32:00+00:00"]
    assert value(pyproject, "tool.deploy.notes", "configValue") == ['multi "line" ]\n']


def test_toml_lists_of_values_stay_one_key(pyproject: FileAnalysis) -> None:
    dependencies = entity(pyproject, "project.dependencies")
    assert dependencies.types == (CONFIG_KEY,)
    assert value(pyproject, dependencies.key, "configValue") == ['[pyyaml>=6.0, "rdflib>=7.1,<8"]']
    assert written(PYPROJECT, pyproject, dependencies.key).endswith('"rdflib>=7.1,<8",\n]')
    assert not [e for e in pyproject.entities if e.key.startswith("project.dependencies[")]


def test_toml_arrays_of_tables_and_inline_tables(pyproject: FileAnalysis) -> None:
    overrides = entity(pyproject, "tool.mypy.overrides")
    assert overrides.types == (CONFIG_BLOCK,)
    first, second = entity(pyproject, "tool.mypy.overrides[0]"), entity(pyproject, "tool.mypy.overrides[1]")
    assert first.parent == second.parent == overrides.key
    assert value(pyproject, "tool.mypy.overrides[1].module", "configValue") == ["rdflib.*"]
    assert written(PYPROJECT, pyproject, first.key) == (
        '[[tool.mypy.overrides]]\nmodule = "yaml.*"\nignore_missing_imports = true'
    )
    assert written(PYPROJECT, pyproject, "tool.mypy.overrides[1].module") == 'module = "rdflib.*"'
    assert value(pyproject, "project.authors[0].email", "configValue") == ["ada@example.com"]
    assert entity(pyproject, "tool.deploy.database").types == (CONFIG_BLOCK,)


def test_toml_spans_point_at_what_is_written(pyproject: FileAnalysis) -> None:
    assert written(PYPROJECT, pyproject, "tool.ruff.line-length") == "line-length = 120"
    assert entity(pyproject, "tool.ruff.line-length").span.start_line == 19
    assert written(PYPROJECT, pyproject, "build-system").startswith("[build-system]\nrequires")
    assert written(PYPROJECT, pyproject, "build-system").endswith('build-backend = "hatchling.build"')
    store = graph(CONFIG, "pyproject.toml", PYPROJECT)
    rows = select(store, f"SELECT ?r WHERE {{ <{iri('pyproject.toml', 'project.version')}> uko:sourceRange ?r }}")
    assert rows == [{"r": "7:0-7:17"}]


def test_toml_secrets_are_masked_everywhere(pyproject: FileAnalysis) -> None:
    assert value(pyproject, "tool.deploy.api_token", "isSecret") == [True]
    assert value(pyproject, "tool.deploy.api_token", "configValue") == ["****"]
    assert value(pyproject, "tool.deploy.database.password", "configValue") == ["****"]
    assert value(pyproject, "tool.deploy.database.host", "configValue") == ["db"]
    shown = everything_shown(CONFIG, "pyproject.toml", PYPROJECT)
    assert "swordfish-token" not in shown and "swordfish-inline" not in shown
    full = render(CONFIG, "pyproject.toml", PYPROJECT, "tool.deploy", "FULL_CONFIG")
    assert full.startswith('[tool.deploy]\napi_token = "****"  # where it goes\ndatabase = ****\n')


def test_toml_renderings(pyproject: FileAnalysis) -> None:
    shown = {level: render(CONFIG, "pyproject.toml", PYPROJECT, "", level) for level in level_names((CONFIG_FILE,))}
    assert shown["SERVICE_LISTING"].splitlines() == ["pyproject.toml", "  build-system", "  project", "  tool"]
    assert "    line-length" in shown["CONFIG_KEYS"] and "120" not in shown["CONFIG_KEYS"]
    assert "      line-length = 120" in shown["CONFIG_VALUES"]
    assert '    notes = "multi \\"line\\" ]\\n"' in shown["CONFIG_VALUES"]
    assert shown["FULL_CONFIG"] == PYPROJECT.replace("swordfish-token", "****").replace(
        '{host = "db", password = "swordfish-inline"}', "****"
    )
    table = render(CONFIG, "pyproject.toml", PYPROJECT, "tool.ruff", "FULL_CONFIG")
    assert table == PYPROJECT[PYPROJECT.index("[tool.ruff]") : PYPROJECT.index('["ANN"]') + 7]


def test_toml_stays_lean() -> None:
    deep = "[a.b.c.d.e]\nf = {g = {h = 1}}\nlong = [" + ", ".join(str(i) for i in range(80)) + "]\n"
    deep += "tables = [" + ", ".join(f"{{n = {i}}}" for i in range(51)) + "]\n"
    analysis = analyze(CONFIG, "deep.toml", deep)
    assert value(analysis, "a.b.c.d.e.f", "configValue") == ["{g: {h: 1}}"]
    assert not [e for e in analysis.entities if e.key.startswith("a.b.c.d.e.f.")]
    assert entity(analysis, "a.b.c.d.e.tables").types == (CONFIG_KEY,)
    assert len(analysis.entities) == 9
    own = Path(__file__).resolve().parents[2] / "pyproject.toml"
    analysis = analyze(CONFIG, "pyproject.toml", own.read_bytes())
    assert not analysis.problems and len(analysis.entities) < 300
    top = tomllib.loads(own.read_text())
    assert {e.key for e in analysis.entities if e.parent == ""} == set(top)


def test_toml_syntax_error_and_bad_bytes() -> None:
    analysis = analyze(CONFIG, "broken.toml", 'name = "ok"\n[table\nkey = 1\n')
    assert [e.key for e in analysis.entities] == [""]
    (problem,) = analysis.problems
    assert problem.message.startswith("TOML syntax error") and problem.span.start_line == 2
    duplicate = analyze(CONFIG, "dup.toml", "a = 1\na = 2\n")
    assert duplicate.problems and duplicate.problems[0].span.start_line == 2
    broken = analyze(CONFIG, "bytes.toml", b'name = "caf\xe9"\nport = 80\n')
    assert any("invalid UTF-8" in p.message for p in broken.problems)
    assert value(broken, "port", "configValue") == ["80"]
    empty = analyze(CONFIG, "empty.toml", b"")
    assert [e.key for e in empty.entities] == [""] and not empty.problems
    for level in level_names((CONFIG_FILE,)):
        assert render(CONFIG, "broken.toml", 'name = "ok"\n[table\n', "", level) is not None


def test_any_prefix_of_a_file_is_analyzed() -> None:
    for path, text in (("pyproject.toml", PYPROJECT), (".env", DOTENV), ("setup.cfg", SETUP_CFG)):
        data = text.encode()
        for cut in range(0, len(data), 7):
            analysis = analyze(CONFIG, path, data[:cut])
            assert analysis.entities[0].key == ""
            assert not [p for p in analysis.problems if "analyzer error" in p.message], (path, cut)


# ── .env ───────────────────────────────────────────────────────────

DOTENV = """\
# database settings
export DB_HOST=localhost
DB_PASSWORD="swordfish # not a comment"
API_KEY='swordfish-single'
GREETING="hello\\nworld"
PLAIN=value # a comment
EMPTY=
MULTILINE="first
second"
NO_VALUE
DATABASE_URL=postgres://app:swordfish-url@db/app
 INDENTED = spaced
"""


def test_env_variables() -> None:
    analysis = analyze(CONFIG, ".env", DOTENV)
    assert not analysis.problems
    names = [e.key for e in analysis.entities[1:]]
    assert names == [
        "DB_HOST",
        "DB_PASSWORD",
        "API_KEY",
        "GREETING",
        "PLAIN",
        "EMPTY",
        "MULTILINE",
        "NO_VALUE",
        "DATABASE_URL",
        "INDENTED",
    ]
    assert all(e.types == (ENV_VAR,) and e.parent == "" for e in analysis.entities[1:])
    assert value(analysis, "DB_HOST", "configValue") == ["localhost"]
    assert written(DOTENV, analysis, "DB_HOST") == "export DB_HOST=localhost"
    assert value(analysis, "GREETING", "configValue") == ["hello\nworld"]
    assert value(analysis, "PLAIN", "configValue") == ["value"]
    assert value(analysis, "EMPTY", "configValue") == [""]
    assert value(analysis, "MULTILINE", "configValue") == ["first\nsecond"]
    assert entity(analysis, "MULTILINE").span.end_line == 9
    assert value(analysis, "NO_VALUE", "configValue") == []
    assert value(analysis, "INDENTED", "configValue") == ["spaced"]
    assert value(analysis, "DATABASE_URL", "configValue") == ["postgres://app:****@db/app"]
    for key in ("DB_PASSWORD", "API_KEY"):
        assert value(analysis, key, "isSecret") == [True] and value(analysis, key, "configValue") == ["****"]


def test_env_secrets_are_masked_everywhere() -> None:
    shown = everything_shown(CONFIG, "deploy/.env", DOTENV)
    for secret in ("swordfish # not", "swordfish-single", "swordfish-url"):
        assert secret not in shown
    full = render(CONFIG, "deploy/.env", DOTENV, "", "FULL_CONFIG")
    assert "DB_PASSWORD=\"****\"\nAPI_KEY='****'\n" in full and "PLAIN=value # a comment" in full
    assert render(CONFIG, "deploy/.env", DOTENV, "", "CONFIG_VALUES").splitlines()[1:3] == [
        "  env DB_HOST = localhost",
        "  env DB_PASSWORD = ****",
    ]


def test_env_bad_lines_and_names() -> None:
    analysis = analyze(CONFIG, "prod.env", 'GOOD=1\nthis is not an assignment\nOPEN="never closed\n')
    assert [e.key for e in analysis.entities] == ["", "GOOD", "OPEN"]
    assert [p.span.start_line for p in analysis.problems] == [2, 3]
    for path in (".env", ".env.local", "config/prod.env", "deploy/.env.example"):
        assert CONFIG.handles(path)
    for path in (".envrc", "environment.py", "env.yaml"):
        assert not CONFIG.handles(path)


# ── INI ────────────────────────────────────────────────────────────

SETUP_CFG = """\
[metadata]
name = demo
description = first line
  second line

[options]
install_requires =
    requests
    pyyaml
; a comment
[mypy-yaml.*]
ignore_missing_imports = True
password: swordfish-ini
"""


def test_ini_sections_keys_and_continuations() -> None:
    analysis = analyze(CONFIG, "setup.cfg", SETUP_CFG)
    assert not analysis.problems
    assert [e.key for e in analysis.entities if e.parent == ""] == ["metadata", "options", '"mypy-yaml.*"']
    assert value(analysis, "metadata.description", "configValue") == ["first line\nsecond line"]
    assert value(analysis, "options.install_requires", "configValue") == ["requests\npyyaml"]
    assert written(SETUP_CFG, analysis, "options") == "[options]\ninstall_requires =\n    requests\n    pyyaml"
    assert value(analysis, '"mypy-yaml.*".password', "configValue") == ["****"]
    assert "swordfish-ini" not in everything_shown(CONFIG, "setup.cfg", SETUP_CFG)
    assert CONFIG.handles("tox.ini") and CONFIG.handles(".editorconfig")


# ── Real files ─────────────────────────────────────────────────────


def test_real_configuration_files() -> None:
    seen = 0
    for name in ("requests-2.31.0", "advanced-alchemy-0.10.0", "aiosql-13.0", "kopf-1.37.4"):
        root = corpus_dir(name)
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root).as_posix()
            if not path.is_file() or not CONFIG.handles(relative):
                continue
            seen += 1
            data = path.read_bytes()
            analysis = analyze(CONFIG, relative, data)
            assert not analysis.problems, (relative, analysis.problems)
            if path.suffix == ".toml":
                top = tomllib.loads(data.decode())
                assert {e.name for e in analysis.entities if e.parent == ""} == set(top), relative
            for node in analysis.entities:
                if node.span is not None:
                    assert node.span.end_byte <= len(data)
            assert render(CONFIG, relative, data, "", "FULL_CONFIG") == data.decode() or "****" in render(
                CONFIG, relative, data, "", "FULL_CONFIG"
            )
    assert seen >= 10
