"""Configuration: the resolution chain with real files, typed writes, bad files, and the
``agents config`` commands."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import pytest

from cleveragents.cli.main import run
from cleveragents.config import (
    KEYS,
    Config,
    Source,
    env_var_name,
    resolve_data_dir,
)
from cleveragents.errors import ConfigurationError, UsageError, ValidationError


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean environment: no CLEVERAGENTS_* variables, HOME and cwd inside tmp_path."""
    for name in list(os.environ):
        if name.startswith("CLEVERAGENTS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    project = tmp_path / "work" / "proj"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make(home: Path, **kwargs) -> Config:
    kwargs.setdefault("env", {})
    kwargs.setdefault("cwd", home / "work" / "proj")
    return Config(home / "data", **kwargs)


# --- keys and names --------------------------------------------------------------------


def test_key_table_declares_the_required_keys():
    assert KEYS["format"].type == "str" and KEYS["format"].default == "auto"
    assert KEYS["query.timeout"].type == "float" and KEYS["query.timeout"].default == 30.0
    assert KEYS["query.default_limit"].type == "int"
    assert KEYS["store.validate_on_commit"].default is True
    assert KEYS["store.path"].type == "path"
    assert all(spec.description for spec in KEYS.values())
    assert env_var_name("query.timeout") == "CLEVERAGENTS_QUERY_TIMEOUT"
    assert KEYS["store.validate_on_commit"].env_var == "CLEVERAGENTS_STORE_VALIDATE_ON_COMMIT"


def test_data_dir_resolution(home: Path):
    assert resolve_data_dir(None, {}) == home / "home" / ".cleveragents"
    assert resolve_data_dir(None, {"CLEVERAGENTS_DATA_DIR": "/srv/ca"}) == Path("/srv/ca")
    assert resolve_data_dir("/flag", {"CLEVERAGENTS_DATA_DIR": "/srv/ca"}) == Path("/flag")


def test_defaults(home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("USER", "ada")
    config = make(home)
    item = config.get("query.timeout")
    assert (item.value, item.source, item.origin) == (30.0, Source.DEFAULT, None)
    assert config.value("store.path") == home / "data" / "store"
    assert config.value("user.name") == "ada"
    assert [v.key for v in config.list()] == sorted(KEYS)


# --- the resolution chain --------------------------------------------------------------


def test_chain_flag_env_project_global_default(home: Path):
    global_file = write(home / "data" / "config.toml", "[query]\ntimeout = 5.0\ndefault_limit = 7\n")
    project_file = write(home / "work" / ".cleveragents" / "config.toml", "[query]\ntimeout = 6\n")
    env = {"CLEVERAGENTS_QUERY_TIMEOUT": "7.5"}

    def source(**kw):
        item = make(home, **kw).get("query.timeout")
        return item.value, item.source, item.origin

    assert source(env=env, flags={"query.timeout": "8"}) == (8.0, Source.FLAG, "--query.timeout")
    assert source(env=env) == (7.5, Source.ENV, "CLEVERAGENTS_QUERY_TIMEOUT")
    # the project file is found from a subdirectory of the project
    assert source() == (6.0, Source.PROJECT, str(project_file))
    project_file.unlink()
    assert source() == (5.0, Source.GLOBAL, str(global_file))
    global_file.unlink()
    assert source() == (30.0, Source.DEFAULT, None)


def test_keys_resolve_independently(home: Path):
    write(home / "data" / "config.toml", "[query]\ndefault_limit = 7\n")
    write(home / "work" / "proj" / ".cleveragents" / "config.toml", "[query]\ntimeout = 6.0\n")
    config = make(home)
    assert config.get("query.default_limit").source is Source.GLOBAL
    assert config.get("query.timeout").source is Source.PROJECT
    assert config.get("format").source is Source.DEFAULT


def test_empty_env_var_is_ignored(home: Path):
    config = make(home, env={"CLEVERAGENTS_FORMAT": ""})
    assert config.get("format").source is Source.DEFAULT


def test_env_values_are_parsed_by_type(home: Path):
    env = {"CLEVERAGENTS_STORE_VALIDATE_ON_COMMIT": "off", "CLEVERAGENTS_QUERY_DEFAULT_LIMIT": "5"}
    config = make(home, env=env)
    assert config.value("store.validate_on_commit") is False
    assert config.value("query.default_limit") == 5
    with pytest.raises(ConfigurationError, match="CLEVERAGENTS_QUERY_TIMEOUT"):
        make(home, env={"CLEVERAGENTS_QUERY_TIMEOUT": "soon"}).get("query.timeout")


def test_bad_flag_value_is_a_usage_error(home: Path):
    with pytest.raises(UsageError, match="format"):
        make(home, flags={"format": "xml"}).get("format")


def test_global_file_is_never_taken_for_a_project_file(home: Path, monkeypatch):
    # Data dir ~/.cleveragents and cwd = ~: ~/.cleveragents/config.toml is the global file.
    data = home / "home" / ".cleveragents"
    write(data / "config.toml", 'format = "json"\n')
    config = Config(data, cwd=home / "home", env={})
    assert config.project_path is None
    assert config.get("format").source is Source.GLOBAL
    # ...even when the data dir is elsewhere
    config = Config(home / "data", cwd=home / "home", env={})
    assert config.project_path is None
    assert config.get("format").source is Source.DEFAULT
    with pytest.raises(ValidationError, match="global config"):
        config.set("format", "json", scope="project")


def test_relative_paths_resolve_against_their_file(home: Path):
    write(home / "data" / "config.toml", '[store]\npath = "graph"\n')
    assert make(home).value("store.path") == home / "data" / "graph"
    write(home / "work" / ".cleveragents" / "config.toml", '[store]\npath = "kg"\n')
    assert make(home).value("store.path") == home / "work" / "kg"
    config = make(home, env={"CLEVERAGENTS_STORE_PATH": "rel"})
    assert config.value("store.path") == home / "work" / "proj" / "rel"


# --- writing ---------------------------------------------------------------------------


def test_set_validates_and_writes_atomically_preserving_other_keys(home: Path):
    path = write(
        home / "data" / "config.toml",
        'format = "plain"\n\n[query]\ndefault_limit = 9\n\n'
        '[context.pipeline]\nstrategy-selector = "builtin:X"\n\n[provider.example]\nsetting = "keep me"\n',
    )
    config = make(home)
    stored = config.set("query.timeout", "12.5")
    assert (stored.value, stored.source, stored.origin) == (12.5, Source.GLOBAL, str(path))
    assert config.get("query.timeout").value == 12.5  # visible at once
    doc = tomllib.loads(path.read_text())
    assert doc == {
        "format": "plain",
        "query": {"default_limit": 9, "timeout": 12.5},
        "context": {"pipeline": {"strategy-selector": "builtin:X"}},
        "provider": {"example": {"setting": "keep me"}},
    }


def test_unknown_key_in_a_file_is_an_error_suggesting_the_closest(home: Path):
    path = write(home / "data" / "config.toml", "[query]\ntimeot = 5\n")
    with pytest.raises(
        ConfigurationError, match=r"Unknown configuration key 'query.timeot'.*did you mean 'query.timeout'"
    ):
        make(home)
    write(path, "[nonsense]\nzzz = 1\n")
    with pytest.raises(ConfigurationError, match=str(path)):
        make(home)
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]  # no temp left


def test_new_global_file_is_private(home: Path):
    make(home).set("user.name", "ada")
    path = home / "data" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {"user": {"name": "ada"}}


def test_set_project_creates_the_project_file_in_cwd(home: Path):
    config = make(home)
    stored = config.set("store.validate_on_commit", "false", scope="project")
    path = home / "work" / "proj" / ".cleveragents" / "config.toml"
    assert stored.origin == str(path)
    assert tomllib.loads(path.read_text()) == {"store": {"validate_on_commit": False}}
    assert make(home).get("store.validate_on_commit").source is Source.PROJECT


def test_set_project_uses_the_nearest_existing_project_file(home: Path):
    path = write(home / "work" / ".cleveragents" / "config.toml", "")
    assert make(home).set("format", "json", scope="project").origin == str(path)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("query.timeout", "soon", "expected a number"),
        ("query.timeout", "-1", "at least"),
        ("query.default_limit", "2.5", "expected an integer"),
        ("store.validate_on_commit", "maybe", "expected true or false"),
        ("format", "xml", "expected one of auto, rich"),
    ],
)
def test_set_rejects_wrong_types(home: Path, key: str, value: str, message: str):
    with pytest.raises(ValidationError, match=message):
        make(home).set(key, value)
    assert not (home / "data" / "config.toml").exists()


def test_set_accepts_typed_python_values(home: Path):
    config = make(home)
    config.set("query.default_limit", 50)
    config.set("store.validate_on_commit", True)
    with pytest.raises(ValidationError):
        config.set("query.default_limit", True)  # a bool is not an int here


def test_unknown_key_lists_close_matches(home: Path):
    with pytest.raises(ValidationError) as info:
        make(home).set("query.timout", "3")
    assert "query.timeout" in info.value.message
    assert info.value.suggestions[0] == "agents config get query.timeout"
    with pytest.raises(ValidationError, match=r"Unknown configuration key 'nothing\.like\.it'"):
        make(home).get("nothing.like.it")


# --- bad files -------------------------------------------------------------------------


def test_corrupt_toml_names_file_line_and_column(home: Path):
    path = write(home / "data" / "config.toml", 'format = "plain"\n[query\ntimeout = 3\n')
    with pytest.raises(ConfigurationError) as info:
        make(home)
    error = info.value
    assert str(path) in error.message
    assert "line 2, column" in error.message
    assert error.data["file"] == str(path) and error.data["line"] == 2
    assert error.headline().startswith("Error [525] CONFIGURATION_ERROR: Invalid TOML")


def test_corrupt_file_is_not_overwritten(home: Path):
    path = write(home / "work" / "proj" / ".cleveragents" / "config.toml", "x = = 1\n")
    with pytest.raises(ConfigurationError):
        Config(home / "data", cwd=home / "work" / "proj", env={}).set("format", "json", "project")
    assert path.read_text() == "x = = 1\n"


def test_wrong_type_in_a_file_names_file_and_key(home: Path):
    path = write(home / "data" / "config.toml", '[query]\ntimeout = "slow"\n')
    with pytest.raises(ConfigurationError, match=r"query\.timeout") as info:
        make(home)
    assert str(path) in info.value.message


# --- the commands ----------------------------------------------------------------------


@pytest.fixture
def cli_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLEVERAGENTS_DATA_DIR", str(home / "data"))
    return home


def test_config_set_get_list_commands(cli_home: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["config", "set", "query.timeout", "12"]) == 0
    path = cli_home / "data" / "config.toml"
    assert capsys.readouterr().out == f"[OK] query.timeout set to 12.0 in global config {path}\n"

    assert run(["config", "get", "query.timeout"]) == 0
    assert capsys.readouterr().out == f"query.timeout 12.0 (source: global {path})\n"

    assert run(["config", "set", "--project", "query.timeout", "3"]) == 0
    capsys.readouterr()
    assert run(["--format", "json", "config", "list"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)["data"]["config"]}
    assert rows["query.timeout"]["value"] == 3.0
    assert rows["query.timeout"]["source"] == "project"
    assert rows["query.timeout"]["env_var"] == "CLEVERAGENTS_QUERY_TIMEOUT"
    assert (rows["format"]["value"], rows["format"]["source"]) == ("json", "flag")
    assert rows["format"]["origin"] == "--format"
    assert rows["user.name"]["source"] == "default"

    assert run(["config", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Config"
    assert lines[1].split() == ["Key", "Value", "Source"]
    assert any(line.split() == ["query.timeout", "3.0", "project"] for line in lines)


def test_config_set_warns_when_a_higher_source_wins(
    cli_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CLEVERAGENTS_QUERY_TIMEOUT", "4")
    assert run(["config", "set", "query.timeout", "12"]) == 0
    out = capsys.readouterr().out
    assert "[WARN] query.timeout is currently overridden by env CLEVERAGENTS_QUERY_TIMEOUT" in out


def test_config_set_json_output(cli_home: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["-f", "json", "config", "set", "store.validate_on_commit", "no"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["data"]["config"] == {
        "key": "store.validate_on_commit",
        "value": False,
        "scope": "global",
        "file": str(cli_home / "data" / "config.toml"),
    }
    assert doc["messages"][0]["level"] == "ok"


def test_config_command_errors(cli_home: Path, capsys: pytest.CaptureFixture[str]):
    assert run(["config", "set", "query.timeout", "soon"]) == 1
    assert capsys.readouterr().err.startswith(
        "Error [422] VALIDATION_FAILED: Invalid value for 'query.timeout' (float)"
    )
    path = write(cli_home / "data" / "config.toml", "[query\n")
    assert run(["config", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"Error [525] CONFIGURATION_ERROR: Invalid TOML in config file {path}")
    assert "at line 1, column" in err
    assert f"  - Fix or remove {path}" in err


def test_data_dir_flag_beats_env(cli_home: Path, capsys: pytest.CaptureFixture[str]):
    other = cli_home / "other"
    assert run(["--data-dir", str(other), "config", "set", "format", "yaml"]) == 0
    assert (other / "config.toml").is_file()
    assert not (cli_home / "data" / "config.toml").exists()


def test_config_path_flag(cli_home: Path, capsys: pytest.CaptureFixture[str]):
    custom = cli_home / "custom.toml"
    assert run(["--config-path", str(custom), "config", "set", "format", "yaml"]) == 0
    assert tomllib.loads(custom.read_text()) == {"format": "yaml"}
