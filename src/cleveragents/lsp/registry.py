"""LSP Registry entries: their fields, their validation, ``${ENV_VAR}`` interpolation and
where a server's executable is found.

Storage in the graph and the built-in/user merge are in ``services/lsp_registry.py``;
the built-in entries are in ``lsp/builtins.py``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from cleveragents.errors import ConfigurationError, LSPUnavailable, NotFoundError, ValidationError
from cleveragents.lsp.languages import language_of
from cleveragents.names import parse_name

__all__ = [
    "BUILTIN_NAMESPACE",
    "CAPABILITIES",
    "CONFIG_FIELDS",
    "LSPServerEntry",
    "LSPUnavailable",
    "capabilities_from_initialize",
    "interpolate",
]

Transport = Literal["stdio", "tcp"]
Source = Literal["builtin", "user"]

# Built-in entries live in this namespace; a user entry may take one of their exact names
# to override it (the service checks that the name is a built-in's).
BUILTIN_NAMESPACE = "cleveragents"

# The spec's capability names and the LSP method behind each ("LSP Capability Exposure").
CAPABILITIES: dict[str, str] = {
    "diagnostics": "textDocument/publishDiagnostics",
    "hover": "textDocument/hover",
    "completions": "textDocument/completion",
    "definitions": "textDocument/definition",
    "references": "textDocument/references",
    "rename": "textDocument/rename",
    "code_actions": "textDocument/codeAction",
    "formatting": "textDocument/formatting",
    "signature_help": "textDocument/signatureHelp",
    "document_symbols": "textDocument/documentSymbol",
    "workspace_symbols": "workspace/symbol",
}

# The ServerCapabilities key (LSP JSON spelling) that advertises each capability.
# Diagnostics are absent: servers push textDocument/publishDiagnostics without advertising it.
_PROVIDERS: dict[str, str] = {
    "hover": "hoverProvider",
    "completions": "completionProvider",
    "definitions": "definitionProvider",
    "references": "referencesProvider",
    "rename": "renameProvider",
    "code_actions": "codeActionProvider",
    "formatting": "documentFormattingProvider",
    "signature_help": "signatureHelpProvider",
    "document_symbols": "documentSymbolProvider",
    "workspace_symbols": "workspaceSymbolProvider",
}

# The keys an LSP configuration file may have: the spec's fields, plus host and port for
# the tcp transport and file_extensions to override which files the server gets.
CONFIG_FIELDS = (
    "name",
    "description",
    "command",
    "args",
    "transport",
    "host",
    "port",
    "languages",
    "capabilities",
    "initialization",
    "workspace_settings",
    "file_extensions",
)

# ${NAME}, ${NAME:default} (the spec's form) and ${NAME:-default} (the shell's).
_EXTENSION = re.compile(r"\.[^./\s]+")
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-?([^}]*))?\}")


class LSPServerEntry(BaseModel):
    """One language server of the registry. Lists are tuples and sets of values
    (languages, capabilities, extensions) are kept sorted, so equal entries compare equal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    command: str | None = None
    args: tuple[str, ...] = ()
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int | None = Field(default=None, ge=1, le=65535)
    languages: tuple[str, ...]
    # None: discovered from the server's ``initialize`` reply (see effective_capabilities).
    capabilities: tuple[str, ...] | None = None
    initialization: dict[str, Any] = Field(default_factory=dict)
    workspace_settings: dict[str, Any] = Field(default_factory=dict)
    # None: the files whose language (languages.language_of) is one of ``languages``.
    file_extensions: tuple[str, ...] | None = None
    source: Source = "user"
    # The entry's node in the graph (user entries only).
    iri: str | None = None

    # --- validation -----------------------------------------------------------------------

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        namespace, sep, rest = value.strip().partition("/")
        try:
            if sep and namespace == BUILTIN_NAMESPACE:
                parse_name(rest, kind="LSP server name")  # the name part, by the usual rules
                return f"{namespace}/{rest}"
            return parse_name(value, kind="LSP server name")
        except ValidationError as exc:
            raise ValueError(exc.message) from None

    @field_validator("command")
    @classmethod
    def _non_empty_command(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty (omit it for a tcp server that is already running)")
        return value.strip() if value is not None else None

    @field_validator("languages", "capabilities", "file_extensions", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("languages")
    @classmethod
    def _valid_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        languages = sorted({item.strip().lower() for item in value} - {""})
        if not languages:
            raise ValueError("must list at least one language (LSP language ids such as 'python', 'rust')")
        return tuple(languages)

    @field_validator("capabilities")
    @classmethod
    def _valid_capabilities(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        unknown = sorted(set(value) - CAPABILITIES.keys())
        if unknown:
            raise ValueError(f"unknown capabilities {', '.join(unknown)}; known: {', '.join(CAPABILITIES)}")
        if not value:
            raise ValueError("must not be empty; omit it to discover the capabilities from the server")
        return tuple(sorted(set(value)))

    @field_validator("file_extensions")
    @classmethod
    def _valid_extensions(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        extensions = {"." + item.strip().lower().lstrip(".") for item in value}
        bad = sorted(repr(e) for e in extensions if not _EXTENSION.fullmatch(e))
        if bad:
            raise ValueError(
                f"{', '.join(bad)}: not {'a file extension' if len(bad) == 1 else 'file extensions'} like '.rs'"
            )
        if not extensions:
            raise ValueError("must list at least one extension such as '.rs' (or be omitted)")
        return tuple(sorted(extensions))

    @field_validator("initialization", "workspace_settings")
    @classmethod
    def _json_data(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise ValueError("must be JSON data (mappings, lists, strings, numbers, booleans, null)") from None
        return value

    @model_validator(mode="after")
    def _transport_fields(self) -> LSPServerEntry:
        # Named like field errors: these are about one field each.
        if self.transport == "tcp":
            if self.port is None:
                raise ValueError("field 'port': is required for transport 'tcp'")
        else:
            if self.command is None:
                raise ValueError("field 'command': is required (the executable that starts the server)")
            for name in ("host", "port"):
                if name in self.model_fields_set:
                    raise ValueError(f"field '{name}': applies only to transport 'tcp'")
        return self

    # --- loading --------------------------------------------------------------------------

    @classmethod
    def from_config(cls, data: Any, *, origin: str) -> LSPServerEntry:
        """A user entry from a parsed configuration; errors name ``origin`` and the field."""
        if not isinstance(data, Mapping):
            raise ValidationError(f"{origin}: an LSP configuration is a mapping of fields, not {_kind(data)}")
        unknown = sorted(str(key) for key in data if key not in CONFIG_FIELDS)
        if unknown:
            raise ValidationError(
                f"{origin}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}; "
                f"the fields are: {', '.join(CONFIG_FIELDS)}"
            )
        try:
            return cls.model_validate({**data, "source": "user"})
        except PydanticValidationError as exc:
            raise ValidationError(f"{origin}: {_describe_errors(exc)}") from None

    @classmethod
    def from_yaml(cls, path: Path) -> LSPServerEntry:
        """A user entry from an LSP configuration file (``agents lsp add --config FILE``)."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(f"LSP configuration file {path} not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(f"cannot read LSP configuration file {path}: {exc}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            raise ValidationError(f"{path}: not valid YAML{where}: {exc.problem}") from None
        except yaml.YAMLError as exc:
            raise ValidationError(f"{path}: not valid YAML: {exc}") from None
        return cls.from_config(data, origin=str(path))

    def config(self) -> dict[str, Any]:
        """The entry as configuration fields (what ``from_config`` reads), in spec order;
        host and port only for the tcp transport."""
        skip = () if self.transport == "tcp" else ("host", "port")
        return {name: getattr(self, name) for name in CONFIG_FIELDS if name not in skip}

    def as_dict(self) -> dict[str, Any]:
        """Every configuration field (host and port None unless tcp), then where the entry
        comes from: the fixed shape of the json output."""
        out: dict[str, Any] = {}
        for name in CONFIG_FIELDS:
            value = getattr(self, name)
            if name in ("host", "port") and self.transport != "tcp":
                value = None
            out[name] = list(value) if isinstance(value, tuple) else value
        return {**out, "source": self.source, "iri": self.iri}

    # --- use ------------------------------------------------------------------------------

    def resolve_command(self) -> list[str]:
        """The argv that starts the server: the executable's path, then ``args``. Empty for a
        tcp server without a command (one already running at host:port). Raises
        LSPUnavailable with the reason when it cannot run here."""
        if self.command is None:
            return []
        for program in self.prerequisites():
            if shutil.which(program) is None:
                raise LSPUnavailable(self.name, f"{_runtime_name(program)} is required but '{program}' is not on PATH")
        return [self._locate(self.command), *self.args]

    def availability(self) -> str | None:
        """None when the server can be started here, else why not."""
        try:
            self.resolve_command()
        except LSPUnavailable as exc:
            return exc.reason
        return None

    def interpolated_initialization(self, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``initialization`` with ``${ENV_VAR}`` / ``${ENV_VAR:default}`` replaced from the
        environment now (stored entries keep the references)."""
        return interpolate(self.initialization, env, where=f"initialization of LSP server '{self.name}'")

    def effective_capabilities(self, server_capabilities: Any) -> tuple[str, ...]:
        """The declared capabilities, or when none are declared those the server's
        ``initialize`` reply advertises."""
        if self.capabilities is not None:
            return self.capabilities
        return capabilities_from_initialize(server_capabilities)

    def covers(self, path: str | PurePath, head: bytes | None = None) -> bool:
        """Whether this server is meant for the file: by ``file_extensions`` when given, else
        by the file's language."""
        if self.file_extensions is not None:
            return PurePath(path).suffix.lower() in self.file_extensions
        return language_of(path, head) in self.languages

    # Hooks for built-in entries (lsp/builtins.py), which know more about where they live.

    def search_path(self) -> list[Path]:
        """Directories searched for the command before PATH."""
        return []

    def prerequisites(self) -> tuple[str, ...]:
        """Executables that must be on PATH for the server to run (e.g. ``node``)."""
        return ()

    def install_hint(self) -> str:
        """What to do when the command is not found."""
        return f"install {self.command} or give its full path as the command"

    def _locate(self, command: str) -> str:
        if os.sep in command or (os.altsep and os.altsep in command):
            path = Path(command).expanduser()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
            raise LSPUnavailable(self.name, f"'{path}' does not exist or is not executable")
        dirs = [d for d in self.search_path() if d.is_dir()]
        found = (shutil.which(command, path=os.pathsep.join(map(str, dirs))) if dirs else None) or shutil.which(command)
        if found is None:
            where = " or ".join([*(str(d) for d in self.search_path()), "PATH"])
            raise LSPUnavailable(self.name, f"'{command}' is not in {where}; {self.install_hint()}")
        return found


def capabilities_from_initialize(server_capabilities: Any) -> tuple[str, ...]:
    """The spec's capability names a server advertises in its ``initialize`` reply, given as
    the JSON ``capabilities`` object or as an lsprotocol ``ServerCapabilities``."""
    found = ["diagnostics"]  # every server may push diagnostics
    for capability, key in _PROVIDERS.items():
        if isinstance(server_capabilities, Mapping):
            value = server_capabilities.get(key)
        else:
            value = getattr(server_capabilities, _snake(key), None)
        if value is not None and value is not False:
            found.append(capability)
    return tuple(sorted(found))


def interpolate(value: Any, env: Mapping[str, str] | None = None, *, where: str = "value") -> Any:
    """``value`` with every ``${NAME}``, ``${NAME:default}`` or ``${NAME:-default}`` in its
    strings (at any depth) replaced from ``env`` (default: the process environment)."""
    environment = os.environ if env is None else env
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environment:
                return environment[name]
            if default is None:
                raise ConfigurationError(f"{where} uses ${{{name}}}, which is not set and has no default")
            return default

        return _ENV_REFERENCE.sub(replace, value)
    if isinstance(value, Mapping):
        return {key: interpolate(item, environment, where=where) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [interpolate(item, environment, where=where) for item in value]
    return value


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def _runtime_name(program: str) -> str:
    return {"node": "Node.js", "java": "Java", "dotnet": ".NET"}.get(program, f"'{program}'")


def _kind(data: Any) -> str:
    if data is None:
        return "an empty document"
    return {list: "a list", str: "a string"}.get(type(data), f"a {type(data).__name__}")


def _describe_errors(exc: PydanticValidationError) -> str:
    """pydantic's errors as ``field 'x': problem`` phrases."""
    parts = []
    for error in exc.errors(include_url=False):
        location = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
        if error["type"] == "missing":
            problem = "is required"
        elif error["type"] == "value_error":
            problem = str(error.get("ctx", {}).get("error", error["msg"]))
        else:
            # YAML has lists, not tuples.
            problem = (error["msg"][:1].lower() + error["msg"][1:]).replace("valid tuple", "list")
            if "input" in error and not isinstance(error["input"], dict | list):
                problem += f" (got {error['input']!r})"
        parts.append(f"field '{location}': {problem}" if location else problem)
    return "; ".join(parts)
