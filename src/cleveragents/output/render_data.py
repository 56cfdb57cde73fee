"""The ``json`` and ``yaml`` envelope: one document per command, written at session end.

Shape (key order is fixed; ``error``, ``timing`` and ``metadata`` appear only when set)::

    {"command": "config list", "status": "ok" | "error" | "cancelled", "exit_code": 0,
     "data": {...}, "messages": [{"level": "ok", "text": "..."}],
     "error": {"code": "NOT_FOUND", "status": 404, "message": "...", "detail": "...",
               "suggestions": [...]},
     "timing": {"duration_ms": 3}, "metadata": {...}}

``data`` holds the elements in declaration order: a table becomes a list of row objects
keyed by column name (an empty table is ``[]``), a panel an object, a tree a nested
``{"label", "children"}`` object, text and code a string, ``data(key, value)`` its value.
Keys come from the element's ``key`` or else its title in snake_case ("Linked Resources
(2)" -> "linked_resources"); a repeated key gets a ``_2``, ``_3`` suffix. Status messages
go to ``messages``; progress is omitted. Timing noise lives only under ``timing``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any, TextIO

import yaml

from cleveragents.output.elements import (
    Code,
    Data,
    Element,
    Panel,
    Progress,
    Status,
    StructuredOutput,
    Table,
    Text,
    Tree,
)


def slug(title: str | None, fallback: str) -> str:
    if not title:
        return fallback
    title = re.sub(r"\s*\([^)]*\)\s*$", "", title)  # "Validations (3)" -> "Validations"
    key = re.sub(r"[^0-9a-zA-Z]+", "_", title).strip("_").lower()
    return key or fallback


def _entry(element: Element) -> tuple[str, Any]:
    match element:
        case Table():
            return element.key or slug(element.title, "table"), [
                {c.name: row.get(c.name) for c in element.columns} for row in element.rows
            ]
        case Panel():
            return element.key or slug(element.title, "panel"), dict(element.entries)
        case Tree():
            return element.key or slug(element.root.label, "tree"), element.root.to_dict()
        case Data():
            return element.key or "data", element.value
        case Text() | Code():
            return element.key or element.kind, element.content
    return element.key or element.kind, None


def jsonable(value: Any) -> Any:
    """Plain JSON types only, so that json and yaml print the same document."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return value.as_posix()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return str(value)


def envelope(output: StructuredOutput) -> dict[str, Any]:
    data: dict[str, Any] = {}
    messages: list[dict[str, Any]] = []
    for element in output.elements:
        if isinstance(element, Status):
            message = {"level": element.level, "text": element.message}
            if element.detail:
                message["detail"] = element.detail
            messages.append(message)
            continue
        if isinstance(element, Progress):
            continue
        key, value = _entry(element)
        unique, n = key, 2
        while unique in data:
            unique, n = f"{key}_{n}", n + 1
        data[unique] = value
    doc: dict[str, Any] = {
        "command": output.command,
        "status": output.status,
        "exit_code": output.exit_code,
        "data": data,
        "messages": messages,
    }
    if output.error is not None:
        doc["error"] = output.error
    if output.timing is not None:
        doc["timing"] = output.timing
    if output.metadata:
        doc["metadata"] = output.metadata
    return jsonable(doc)


class _YamlDumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key, as the spec's YAML examples do.
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_YamlDumper.add_representer(str, _represent_str)


def dump_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def dump_yaml(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


class DocumentWriter:
    """Serializes the whole envelope once, at session end (the accumulate strategy)."""

    def __init__(self, out: TextIO, fmt: str) -> None:
        self.out = out
        self.dump = dump_yaml if fmt == "yaml" else dump_json

    def write(self, output: StructuredOutput) -> None:
        self.out.write(self.dump(envelope(output)))
        self.out.flush()
