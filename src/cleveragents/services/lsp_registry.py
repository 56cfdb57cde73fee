"""The LSP Registry as graph data: user entries are ``ca:LspServer`` nodes written through
normal commits (removal closes their intervals, history keeps them); built-in entries
(lsp/builtins.py) come from code. A user entry with a built-in's name overrides it.

Without a store (before ``agents init``) the registry holds the built-ins only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph as ox

from cleveragents.errors import ConflictError, NotFoundError, ValidationError
from cleveragents.graph.commit import CommitRequest, CommitResult
from cleveragents.graph.store import GraphStore
from cleveragents.graph.workspace import Workspace
from cleveragents.lsp import builtins
from cleveragents.lsp.builtins import InstallResult
from cleveragents.lsp.registry import BUILTIN_NAMESPACE, LSPServerEntry
from cleveragents.services import entities
from cleveragents.terms import CA
from cleveragents.vocabulary import ca

CLASS = "LspServer"
LSP_SERVER = ox.NamedNode(CA + CLASS)
DESCRIPTION = ox.NamedNode(ca.description)
COMMAND = ox.NamedNode(ca.command)
ARGS = ox.NamedNode(ca.commandArgs)
TRANSPORT = ox.NamedNode(ca.transport)
HOST = ox.NamedNode(ca.host)
PORT = ox.NamedNode(ca.port)
LANGUAGE = ox.NamedNode(ca.language)
CAPABILITY = ox.NamedNode(ca.capability)
INITIALIZATION = ox.NamedNode(ca.initializationOptions)
WORKSPACE_SETTINGS = ox.NamedNode(ca.workspaceSettings)
FILE_EXTENSION = ox.NamedNode(ca.fileExtension)


def add(
    ws: Workspace, entry_or_yaml_path: LSPServerEntry | Path, *, agent: str = "cleveragents"
) -> tuple[LSPServerEntry, CommitResult]:
    """Register a user entry (given, or read from an LSP configuration file)."""
    if isinstance(entry_or_yaml_path, LSPServerEntry):
        entry = LSPServerEntry.from_config(
            entry_or_yaml_path.config(), origin=f"LSP server '{entry_or_yaml_path.name}'"
        )
    else:
        entry = LSPServerEntry.from_yaml(entry_or_yaml_path)
    namespace = entry.name.partition("/")[0]
    if namespace == BUILTIN_NAMESPACE and builtins.find_builtin(entry.name) is None:
        raise ValidationError(
            f"invalid LSP server name '{entry.name}': namespace '{BUILTIN_NAMESPACE}/' holds the built-in servers; "
            "use local/NAME, or a built-in's exact name to override it",
            suggestions=["agents lsp list"],
        )
    node, ulid = entities.new_iri("lsp-server")
    with ws.writer() as session:
        if entities.name_taken(session.store, CLASS, entry.name):
            raise ConflictError(
                f"an LSP server named '{entry.name}' is registered already",
                suggestions=[f"agents lsp remove {entry.name}"],
            )
        triples = [
            (node, entities.TYPE, LSP_SERVER),
            (node, entities.NAME, ox.Literal(entry.name)),
            (node, ox.NamedNode(ca.ulid), ox.Literal(ulid)),
            (node, entities.CREATED, entities.now_literal()),
            *_entry_triples(node, entry),
        ]
        result = session.commit(
            CommitRequest(add=triples, message=f"lsp add {entry.name}", cause="lsp-add", agent=agent)
        )
        return describe(session.store, node), result


def list_entries(ws: Workspace) -> list[LSPServerEntry]:
    """Built-ins and user entries by name; a user entry hides the built-in it overrides."""
    users = _user_entries(ws)
    taken = {entry.name for entry in users}
    merged = users + [entry for entry in builtins.BUILTINS if entry.name not in taken]
    return sorted(merged, key=lambda entry: entry.name)


def all(ws: Workspace) -> list[LSPServerEntry]:  # shadows the builtin here: the spec names it all()
    """Every entry (the spec's ``lsp_registry.all()``)."""
    return list_entries(ws)


def get(ws: Workspace, name: str) -> LSPServerEntry:
    """The entry named ``name``: a user entry by name (a bare name means ``local/name``),
    ULID or IRI, else a built-in by its name or the part after ``cleveragents/``."""
    if not ws.exists():
        return _builtin_or_not_found(name)
    with ws.reader() as store:
        try:
            return describe(store, entities.find(store, CLASS, name, kind="LSP server"))
        except NotFoundError:
            pass
        builtin = builtins.find_builtin(name)
        if builtin is not None:
            try:  # overridden under its full name?
                return describe(store, entities.find(store, CLASS, builtin.name, kind="LSP server"))
            except NotFoundError:
                return builtin
    return _builtin_or_not_found(name)


def remove(ws: Workspace, name: str, *, agent: str = "cleveragents") -> tuple[LSPServerEntry, CommitResult]:
    """Retract a user entry (its history stays). Built-ins cannot be removed; removing a
    user entry that overrides one brings the built-in back."""
    with ws.writer() as session:
        builtin = builtins.find_builtin(name)
        try:
            node = entities.find(session.store, CLASS, name, kind="LSP server")
        except NotFoundError:
            if builtin is None:
                raise _not_found(name) from None
            try:
                node = entities.find(session.store, CLASS, builtin.name, kind="LSP server")
            except NotFoundError:
                raise ValidationError(
                    f"'{builtin.name}' is a built-in LSP server and cannot be removed",
                    suggestions=[f"agents lsp add --config FILE.yaml (with name: {builtin.name}) to override it"],
                ) from None
        entry = describe(session.store, node)
        result = session.commit(
            CommitRequest(retract_subjects=[node], message=f"lsp remove {entry.name}", cause="lsp-remove", agent=agent)
        )
        return entry, result


def for_language(ws: Workspace, language: str) -> list[LSPServerEntry]:
    """The entries that cover ``language`` (an LSP language id): user entries first, then
    built-ins, each by name."""
    return covering(list_entries(ws), language)


def covering(entries: Sequence[LSPServerEntry], language: str) -> list[LSPServerEntry]:
    """Of ``entries``, those that cover ``language``, in for_language's order."""
    wanted = language.strip().lower()
    matching = [entry for entry in entries if wanted in entry.languages]
    return sorted(matching, key=lambda entry: (entry.source != "user", entry.name))


def install(ws: Workspace, name: str) -> InstallResult:
    """Install a built-in server (``agents lsp install``); user entries install themselves."""
    builtin = builtins.find_builtin(name)
    if builtin is None:
        entry = get(ws, name)  # NotFoundError for unknown names
        raise ValidationError(
            f"'{entry.name}' is not a built-in LSP server: install its command ({entry.command}) yourself",
            suggestions=[f"agents lsp install {b.name}" for b in builtins.BUILTINS],
        )
    return builtins.install(builtin)


def describe(store: GraphStore, node: ox.NamedNode) -> LSPServerEntry:
    """A user entry from its current triples."""
    props = entities.properties(store, node)

    def values(predicate: ox.NamedNode) -> list[str]:
        return sorted(term.value for term in props.get(predicate.value, []))

    def one(predicate: ox.NamedNode) -> str | None:
        return entities.single(props, predicate.value)

    config: dict[str, object] = {
        "name": one(entities.NAME) or "",
        "description": one(DESCRIPTION) or "",
        "command": one(COMMAND),
        "args": json.loads(one(ARGS) or "[]"),
        "transport": one(TRANSPORT) or "stdio",
        "languages": values(LANGUAGE),
        "capabilities": values(CAPABILITY) or None,
        "initialization": json.loads(one(INITIALIZATION) or "{}"),
        "workspace_settings": json.loads(one(WORKSPACE_SETTINGS) or "{}"),
        "file_extensions": values(FILE_EXTENSION) or None,
    }
    if config["transport"] == "tcp":
        config["host"] = one(HOST) or "127.0.0.1"
        port = one(PORT)
        config["port"] = int(port) if port is not None else None
    return LSPServerEntry.model_validate({**config, "source": "user", "iri": node.value})


def _entry_triples(node: ox.NamedNode, entry: LSPServerEntry) -> list[tuple[ox.NamedNode, ox.NamedNode, ox.Literal]]:
    triples = [(node, TRANSPORT, ox.Literal(entry.transport))]
    triples += [(node, LANGUAGE, ox.Literal(language)) for language in entry.languages]
    triples += [(node, CAPABILITY, ox.Literal(capability)) for capability in entry.capabilities or ()]
    triples += [(node, FILE_EXTENSION, ox.Literal(extension)) for extension in entry.file_extensions or ()]
    if entry.description:
        triples.append((node, DESCRIPTION, ox.Literal(entry.description)))
    if entry.command is not None:
        triples.append((node, COMMAND, ox.Literal(entry.command)))
    if entry.args:
        triples.append((node, ARGS, ox.Literal(json.dumps(list(entry.args)))))
    if entry.transport == "tcp":
        triples.append((node, HOST, ox.Literal(entry.host)))
        if entry.port is not None:
            triples.append((node, PORT, ox.Literal(entry.port)))
    # JSON with sorted keys: the same settings are the same literal (re-adding changes nothing).
    if entry.initialization:
        triples.append((node, INITIALIZATION, ox.Literal(json.dumps(entry.initialization, sort_keys=True))))
    if entry.workspace_settings:
        triples.append((node, WORKSPACE_SETTINGS, ox.Literal(json.dumps(entry.workspace_settings, sort_keys=True))))
    return triples


def _user_entries(ws: Workspace) -> list[LSPServerEntry]:
    if not ws.exists():
        return []
    with ws.reader() as store:
        return [describe(store, node) for node in entities.named(store, CLASS)]


def _builtin_or_not_found(name: str) -> LSPServerEntry:
    builtin = builtins.find_builtin(name)
    if builtin is None:
        raise _not_found(name)
    return builtin


def _not_found(name: str) -> NotFoundError:
    return NotFoundError(f"LSP server '{name}' not found", suggestions=["agents lsp list"])
