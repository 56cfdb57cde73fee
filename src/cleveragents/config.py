"""Configuration: typed dotted keys resolved through the spec's chain.

    CLI flag > CLEVERAGENTS_* env var > project config > global config > built-in default

* Data dir: ``--data-dir`` > ``CLEVERAGENTS_DATA_DIR`` > ``~/.cleveragents``.
* Global config: ``<data_dir>/config.toml`` (``--config-path`` overrides the file).
* Project config: ``.cleveragents/config.toml`` in the current directory or the nearest
  ancestor that has one. The spec does not place it, so it mirrors the global layout.
  The global file (and ``~/.cleveragents/config.toml``, the default global file even when
  the data dir is elsewhere) is never taken for a project file.
* Dotted keys are nested TOML tables: ``query.timeout`` is ``[query] timeout = 30.0``.
  The env var for a key is ``CLEVERAGENTS_`` + upper-cased key with ``.``/``-`` -> ``_``.
* Writes are atomic (temp file + rename) and keep other keys, including unknown ones;
  TOML comments are not preserved.
* Relative ``path`` values resolve against the project root (project file), the global
  file's directory (global file) or the current directory (flag, env var).
"""

from __future__ import annotations

import difflib
import getpass
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, Literal

import tomli_w

from cleveragents.errors import ConfigurationError, UsageError, ValidationError
from cleveragents.output.formats import AUTO, BUILTIN_FORMATS

ENV_PREFIX: Final = "CLEVERAGENTS_"
# Seconds a writer waits for another to finish before STORE_LOCKED (store.writer_wait).
WRITER_WAIT_DEFAULT: Final = 300.0
DATA_DIR_ENV: Final = "CLEVERAGENTS_DATA_DIR"
CONFIG_FILE: Final = "config.toml"
PROJECT_DIR: Final = ".cleveragents"

ValueType = Literal["str", "int", "float", "bool", "path", "list"]
Scope = Literal["global", "project"]


class Source(StrEnum):
    FLAG = "flag"
    ENV = "env"
    PROJECT = "project"
    GLOBAL = "global"
    DEFAULT = "default"


def _default_user(_: Path) -> str:
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (OSError, KeyError):  # no passwd entry, e.g. in some containers
        return "unknown"


@dataclass(frozen=True)
class KeySpec:
    name: str
    type: ValueType
    # A value, or a function of the data dir for defaults that live inside it.
    default: Any | Callable[[Path], Any]
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None

    @property
    def env_var(self) -> str:
        return env_var_name(self.name)

    def default_for(self, data_dir: Path) -> Any:
        return self.default(data_dir) if callable(self.default) else self.default


# Tables whose keys are read by the component that owns them, not listed in KEYS:
# [context.pipeline], [context.strategies], [context.fusion] (context), [provider.*] (API keys).
OPEN_TABLES: Final = ("context.pipeline.", "context.strategies.", "context.fusion.", "provider.")

# The one table of known keys. Add a row here to make a key settable.
KEYS: Final[dict[str, KeySpec]] = {
    spec.name: spec
    for spec in (
        KeySpec(
            "format",
            "str",
            AUTO,
            "Output format; 'auto' = rich on a terminal, plain when piped.",
            choices=(AUTO, *BUILTIN_FORMATS),
        ),
        KeySpec("query.timeout", "float", 30.0, "SPARQL query timeout in seconds.", minimum=0.001),
        KeySpec(
            "query.service_allowlist",
            "list",
            (),
            "SPARQL SERVICE endpoints queries may call (exact IRIs; comma-separated on the command line). "
            "Empty: SERVICE is refused, so no query reaches the network.",
        ),
        KeySpec(
            "query.default_limit",
            "int",
            1000,
            "Row limit applied to SELECT results that set no LIMIT (0 = none).",
            minimum=0,
        ),
        KeySpec(
            "store.path",
            "path",
            lambda data_dir: data_dir / "store",
            "Directory of the Oxigraph store.",
        ),
        KeySpec(
            "store.validate_on_commit",
            "bool",
            True,
            "Validate every commit against the SHACL shapes before writing it.",
        ),
        KeySpec(
            "store.writer_wait",
            "float",
            WRITER_WAIT_DEFAULT,
            "Seconds a writer waits its turn while another holds the store, before STORE_LOCKED (agents --wait).",
            minimum=0,
        ),
        KeySpec("user.name", "str", _default_user, "Agent recorded on commits (default: $USER)."),
        KeySpec(
            "automation-level",
            "str",
            "manual",
            "Automation level of new plans (plan use --automation-level overrides it).",
            choices=("manual", "review", "auto"),
        ),
        KeySpec(
            "index.max_file_bytes",
            "int",
            1_000_000,
            "Files larger than this get a file-level node only, without analysis.",
            minimum=1,
        ),
        KeySpec(
            "index.file_time_limit",
            "float",
            120.0,
            "Seconds one file's analysis may take; past it the file keeps its file node and the reason (0: no limit).",
            minimum=0,
        ),
        KeySpec(
            "index.file_memory_limit",
            "int",
            2048,
            "MB one file's analysis may allocate in a worker; past it the file keeps its file node and the reason "
            "(0: no limit).",
            minimum=0,
        ),
        KeySpec(
            "index.commit_batch_files",
            "int",
            200,
            "A first index (or the rest of one that was killed) commits this many files at a time "
            "(bounded memory; a killed run resumes from them).",
            minimum=1,
        ),
        KeySpec(
            "analyzers.path",
            "str",
            "",
            "Directories of your own analyzer plugins (os.pathsep-separated); they take precedence over built-ins.",
        ),
        KeySpec(
            "lsp.enrich",
            "bool",
            False,
            "Index with the registered language servers by default (agents index --lsp / --no-lsp).",
        ),
        KeySpec(
            "lsp.request_timeout",
            "float",
            10.0,
            "Seconds a language server may take to answer one request before it counts as hung.",
            minimum=0.01,
        ),
        KeySpec(
            "context.encoding",
            "str",
            "o200k_base",
            "Token encoding that context budgets are counted in (o200k_base, cl100k_base, ...).",
        ),
        KeySpec(
            "context.default_budget",
            "int",
            8000,
            "Token budget of a context assembly that names none (agents context assemble --budget).",
            minimum=1,
        ),
        KeySpec(
            "context.strategy_timeout",
            "float",
            30.0,
            "Seconds one context strategy may run before the assembly goes on without it "
            "(a [context.pipeline.strategy-executor] timeout-seconds setting wins).",
            minimum=0.01,
        ),
        KeySpec(
            "context.vector_inline_limit",
            "int",
            256,
            "Documents an assembly may embed before it answers (new or changed since the vector index "
            "was built); with more, semantic strategies are skipped until `agents context index` runs.",
            minimum=0,
        ),
        # --- servers (agents mcp serve, agents serve) ------------------------------------
        KeySpec("server.host", "str", "127.0.0.1", "Address the HTTP servers bind (agents serve, mcp serve)."),
        KeySpec("server.port", "int", 8765, "Port of the HTTP servers.", minimum=0),
        KeySpec(
            "server.token",
            "str",
            "",
            "Bearer token the HTTP servers require (also $CLEVERAGENTS_SERVER_TOKEN); required "
            "when bound to a non-loopback address, optional on 127.0.0.1.",
        ),
        KeySpec(
            "server.max_request_bytes",
            "int",
            1_000_000,
            "Largest request body (HTTP) or message (stdio) a server accepts.",
            minimum=1024,
        ),
        KeySpec(
            "server.request_timeout",
            "float",
            60.0,
            "Seconds one server request (tool call, task step) may take before it fails.",
            minimum=0.01,
        ),
        # Model providers (actors/providers.py). Keys come from each provider's environment
        # variable, never from this file.
        KeySpec(
            "providers.timeout",
            "float",
            120.0,
            "Seconds one model call may take before it fails (then it is retried).",
            minimum=0.01,
        ),
        KeySpec(
            "providers.max_retries",
            "int",
            3,
            "Retries of a model call that timed out or got HTTP 429/5xx, with exponential backoff.",
            minimum=0,
        ),
        KeySpec(
            "providers.prices_file",
            "path",
            lambda data_dir: data_dir / "prices.toml",
            "Price table (USD per million tokens per provider/model) that costs are computed from.",
        ),
        KeySpec("providers.openai.base_url", "str", "", "OpenAI endpoint (default: $OPENAI_BASE_URL)."),
        KeySpec("providers.anthropic.base_url", "str", "", "Anthropic endpoint (default: $ANTHROPIC_BASE_URL)."),
        KeySpec(
            "providers.openrouter.base_url", "str", "", "OpenRouter endpoint (default: https://openrouter.ai/api/v1)."
        ),
        KeySpec(
            "providers.openai-compatible.base_url",
            "str",
            "",
            "Base URL of an OpenAI-compatible server: Ollama, vLLM, llama.cpp (default: $OPENAI_BASE_URL).",
        ),
        KeySpec(
            "providers.openai-compatible.api_key_env",
            "str",
            "OPENAI_API_KEY",
            "Environment variable holding the OpenAI-compatible server's key.",
        ),
    )
}


@dataclass(frozen=True)
class ConfigValue:
    key: str
    value: Any
    source: Source
    origin: str | None  # the flag, env var or file the value came from

    def to_dict(self) -> dict[str, Any]:
        spec = KEYS[self.key]
        return {
            "key": self.key,
            "value": _plain(self.value),
            "source": self.source.value,
            "origin": self.origin,
            "type": spec.type,
            "env_var": spec.env_var,
            "description": spec.description,
        }


def _plain(value: Any) -> Any:
    """A value as JSON/TOML writes it: paths as text, lists as lists."""
    if isinstance(value, Path):
        return str(value)
    return list(value) if isinstance(value, tuple) else value


def env_var_name(key: str) -> str:
    return ENV_PREFIX + re.sub(r"[.\-]", "_", key).upper()


def resolve_data_dir(flag: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = flag if flag not in (None, "") else env.get(DATA_DIR_ENV) or "~/.cleveragents"
    return Path(raw).expanduser().absolute()


def _default_global_path() -> Path:
    return Path("~/.cleveragents").expanduser().absolute() / CONFIG_FILE


def unknown_key(key: str) -> ValidationError:
    matches = difflib.get_close_matches(key, list(KEYS), n=3, cutoff=0.6)
    hint = f" (did you mean: {', '.join(matches)}?)" if matches else ""
    return ValidationError(
        f"Unknown configuration key '{key}'{hint}",
        detail="Known keys: " + ", ".join(sorted(KEYS)),
        suggestions=[f"agents config get {m}" for m in matches] or ["agents config list"],
    )


def spec_for(key: str) -> KeySpec:
    try:
        return KEYS[key]
    except KeyError:
        raise unknown_key(key) from None


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def coerce(spec: KeySpec, raw: Any) -> Any:
    """The typed value of ``raw`` (text from a flag/env/CLI, or a TOML/Python value).

    Raises ValueError with a message naming what was expected.
    """
    text = raw.strip() if isinstance(raw, str) else None
    value: Any
    if spec.type == "list":
        if isinstance(raw, str):
            value = tuple(part for part in re.split(r"[,\s]+", raw) if part)
        elif isinstance(raw, list | tuple) and all(isinstance(v, str) for v in raw):
            value = tuple(raw)
        else:
            raise ValueError(f"expected a list of strings, got {raw!r}")
    elif spec.type in ("str", "path"):
        if not isinstance(raw, str):
            raise ValueError(f"expected a string, got {raw!r}")
        value = raw
    elif spec.type == "bool":
        if isinstance(raw, bool):
            value = raw
        elif text is not None and text.lower() in _TRUE | _FALSE:
            value = text.lower() in _TRUE
        else:
            raise ValueError(f"expected true or false, got {raw!r}")
    elif spec.type == "int":
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif text is not None and re.fullmatch(r"[+-]?\d+", text):
            value = int(text)
        else:
            raise ValueError(f"expected an integer, got {raw!r}")
    else:  # float
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = float(raw)
        else:
            try:
                value = float(text) if text else math.nan
            except ValueError:
                value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"expected a number, got {raw!r}")
    if spec.choices and value not in spec.choices:
        raise ValueError(f"expected one of {', '.join(spec.choices)}, got {raw!r}")
    if spec.minimum is not None and value < spec.minimum:
        raise ValueError(f"must be at least {spec.minimum:g}, got {raw!r}")
    return value


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed file, or {} if it does not exist. Bad TOML names file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"Cannot read config file {path}: {exc}",
            suggestions=[f"Check the permissions and encoding of {path}"],
            data={"file": str(path)},
        ) from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", reason)
        line, column = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        reason = reason[: m.start()].strip() if m else reason
        where = f" at line {line}, column {column}" if m else ""
        raise ConfigurationError(
            f"Invalid TOML in config file {path}{where}: {reason}",
            suggestions=[f"Fix or remove {path}"],
            data={"file": str(path), "line": line, "column": column},
        ) from exc


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in table.items():
        key = f"{prefix}{name}"
        # A nested table is a key prefix unless the key itself is known (e.g. a dict value).
        if isinstance(value, Mapping) and key not in KEYS:
            out.update(flatten(value, key + "."))
        else:
            out[key] = value
    return out


def find_project_config(start: Path, *, skip: set[Path]) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_DIR / CONFIG_FILE
        if candidate.is_file() and candidate.absolute() not in skip:
            return candidate.absolute()
    return None


@dataclass
class _Layer:
    source: Source
    path: Path
    values: dict[str, Any]

    @property
    def base_dir(self) -> Path:
        # The project root for .cleveragents/config.toml; the file's directory otherwise.
        parent = self.path.parent
        return parent.parent if self.source is Source.PROJECT else parent


class Config:
    """Resolved configuration for one invocation. Files are read once, at construction."""

    def __init__(
        self,
        data_dir: Path | None = None,
        *,
        config_path: Path | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        flags: Mapping[str, Any] | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.data_dir = data_dir if data_dir is not None else resolve_data_dir(None, self.env)
        self.cwd = (cwd or Path.cwd()).absolute()
        self.global_path = (config_path or self.data_dir / CONFIG_FILE).expanduser().absolute()
        skip = {self.global_path, _default_global_path()}
        self.project_path = find_project_config(self.cwd, skip=skip)
        self.flags = {k: v for k, v in (flags or {}).items() if v is not None}
        for key in self.flags:
            spec_for(key)
        project = self._load(Source.PROJECT, self.project_path) if self.project_path else None
        # Highest precedence first: project, then global.
        self._layers: list[_Layer | None] = [project, self._load(Source.GLOBAL, self.global_path)]

    def _load(self, source: Source, path: Path) -> _Layer:
        values = flatten(read_toml(path))
        for key in values:
            if key not in KEYS and not key.startswith(OPEN_TABLES):
                matches = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
                hint = f" (did you mean '{matches[0]}'?)" if matches else ""
                raise ConfigurationError(
                    f"Unknown configuration key '{key}' in config file {path}{hint}",
                    detail="Known keys: " + ", ".join(sorted(KEYS)),
                    suggestions=[f"rename it to {matches[0]} in {path}" if matches else f"remove it from {path}"],
                    data={"file": str(path), "key": key},
                )
        for key, raw in values.items():
            if key in KEYS:
                try:
                    values[key] = coerce(KEYS[key], raw)
                except ValueError as exc:
                    raise ConfigurationError(
                        f"Invalid value for '{key}' in config file {path}: {exc}",
                        suggestions=[
                            f"agents config set {key} <value>" + (" --project" if source is Source.PROJECT else "")
                        ],
                        data={"file": str(path), "key": key},
                    ) from None
        return _Layer(source, path, values)

    # --- reading ----------------------------------------------------------------------

    def get(self, key: str) -> ConfigValue:
        """The effective value of ``key`` and where it came from."""
        spec = spec_for(key)
        if key in self.flags:
            try:
                value = coerce(spec, self.flags[key])
            except ValueError as exc:
                raise UsageError(f"Invalid value for '{key}': {exc}") from None
            return ConfigValue(key, self._path(spec, value, self.cwd), Source.FLAG, f"--{key}")
        env_name = spec.env_var
        if self.env.get(env_name, "") != "":
            try:
                value = coerce(spec, self.env[env_name])
            except ValueError as exc:
                raise ConfigurationError(
                    f"Invalid value for '{key}' in environment variable {env_name}: {exc}",
                    suggestions=[f"unset {env_name}"],
                ) from None
            return ConfigValue(key, self._path(spec, value, self.cwd), Source.ENV, env_name)
        for layer in self._layers:
            if layer is not None and key in layer.values:
                value = self._path(spec, layer.values[key], layer.base_dir)
                return ConfigValue(key, value, layer.source, str(layer.path))
        value = spec.default_for(self.data_dir)
        return ConfigValue(key, self._path(spec, value, self.data_dir), Source.DEFAULT, None)

    def value(self, key: str) -> Any:
        return self.get(key).value

    def list(self) -> list[ConfigValue]:
        return [self.get(key) for key in sorted(KEYS)]

    @staticmethod
    def _path(spec: KeySpec, value: Any, base: Path) -> Any:
        if spec.type != "path":
            return value
        path = Path(value).expanduser()
        return path if path.is_absolute() else (base / path).absolute()

    # --- writing ----------------------------------------------------------------------

    def target(self, scope: Scope) -> Path:
        """The file a ``set`` in ``scope`` writes: the nearest project config, else a new
        ``.cleveragents/config.toml`` in the current directory."""
        if scope == "global":
            return self.global_path
        path = self.project_path or self.cwd / PROJECT_DIR / CONFIG_FILE
        if path in (self.global_path, _default_global_path()):
            raise ValidationError(
                f"The project config would be the global config file {path}",
                suggestions=["Run the command from inside a project directory"],
            )
        return path

    def set(self, key: str, value: Any, scope: Scope = "global") -> ConfigValue:
        """Validate ``value`` (text is parsed by the key's type) and write it to the
        ``scope`` file atomically. Returns the value as stored, with that file as origin
        (``get`` may still answer from a flag or env var that outranks the file)."""
        spec = spec_for(key)
        try:
            typed = coerce(spec, value)
        except ValueError as exc:
            raise ValidationError(f"Invalid value for '{key}' ({spec.type}): {exc}") from None
        path = self.target(scope)
        document = read_toml(path)  # re-read: keep what others wrote since we loaded
        table = document
        *parents, leaf = key.split(".")
        for part in parents:
            child = table.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigurationError(
                    f"Cannot set '{key}' in {path}: '{part}' is not a table there",
                    data={"file": str(path), "key": key},
                )
            table = child
        table[leaf] = list(typed) if isinstance(typed, tuple) else typed
        _atomic_write(path, tomli_w.dumps(document), private=scope == "global")
        source = Source.PROJECT if scope == "project" else Source.GLOBAL
        layer = self._load(source, path)
        if scope == "project":
            self.project_path = path
            self._layers[0] = layer
        else:
            self._layers[1] = layer
        return ConfigValue(key, self._path(spec, typed, layer.base_dir), source, str(path))


def _atomic_write(path: Path, text: str, *, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        # The global file may later hold provider keys; project files are shared.
        mode = 0o600 if private else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
