"""Named SPARQL queries: the ``queries/*.rq`` files with their headers.

A header is a block of comment lines at the top of the file:

    # name: blame
    # description: For each current triple of a node, the commit that asserted it.
    # param: node iri The node to blame
    # param: include string=definitions Kinds to list (a default makes the parameter optional)

Parameters are bound with SPARQL substitution (SEP-0007), never pasted into text.
A SELECT must project its parameters: Oxigraph's substitution keeps them bound in the
results and refuses a variable that is not in the projection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from cleveragents.errors import NotFoundError, ValidationError
from cleveragents.iris import parse_iri
from cleveragents.resources import data_path
from cleveragents.terms import XSD

PARAM_TYPES = ("iri", "string", "integer", "decimal", "boolean", "datetime")


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    description: str
    default: str | None = None  # given: the parameter may be left out


@dataclass(frozen=True)
class NamedQuery:
    name: str
    description: str
    params: tuple[Param, ...]
    text: str
    path: Path
    extra: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "params": [p.__dict__ for p in self.params],
            "file": self.path.name,
        }


def parse(path: Path) -> NamedQuery:
    text = path.read_text(encoding="utf-8")
    header: dict[str, str] = {}
    params: list[Param] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line.lstrip("# ").partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "param":
            pname, ptype, *desc = value.split(maxsplit=2)
            ptype, has_default, default = ptype.partition("=")
            if ptype not in PARAM_TYPES:
                raise ValidationError(f"{path.name}: parameter '{pname}' has unknown type '{ptype}'")
            params.append(Param(pname, ptype, desc[0] if desc else "", default if has_default else None))
        else:
            header[key] = value
    if "name" not in header:
        raise ValidationError(f"{path}: missing '# name:' header line")
    return NamedQuery(header.pop("name"), header.pop("description", ""), tuple(params), text, path, header)


def catalog(extra_dirs: list[Path] | None = None) -> dict[str, NamedQuery]:
    """Built-in queries, then user folders (a user query may shadow a built-in)."""
    out: dict[str, NamedQuery] = {}
    for folder in [data_path("queries"), *(extra_dirs or [])]:
        for path in sorted(folder.glob("*.rq")):
            query = parse(path)
            out[query.name] = query
    return out


def get(name: str, extra_dirs: list[Path] | None = None) -> NamedQuery:
    queries = catalog(extra_dirs)
    if name not in queries:
        raise NotFoundError(f"no named query '{name}'", suggestions=["agents query list"])
    return queries[name]


def bind(query: NamedQuery, raw: dict[str, str]) -> dict[str, Any]:
    """Typed terms for the ``--param k=v`` values; a parameter without a default is required."""
    declared = {p.name: p for p in query.params}
    unknown = sorted(set(raw) - set(declared))
    if unknown:
        raise ValidationError(
            f"query '{query.name}' has no parameter {', '.join(unknown)}; it takes: {', '.join(declared) or 'none'}"
        )
    raw = {**{n: p.default for n, p in declared.items() if p.default is not None and n not in raw}, **raw}
    missing = [n for n in declared if n not in raw]
    if missing:
        raise ValidationError(
            f"query '{query.name}' needs --param {missing[0]}=VALUE ({declared[missing[0]].description})"
        )
    return {name: _term(declared[name], value) for name, value in raw.items()}


def _term(param: Param, value: str) -> Any:
    if param.type == "iri":
        return parse_iri(value)
    if param.type == "string":
        return ox.Literal(value)
    kinds = {
        "integer": "integer",
        "decimal": "decimal",
        "boolean": "boolean",
        "datetime": "dateTime",
    }
    checks = {
        "integer": int,
        "decimal": float,
        "boolean": lambda v: {"true": 1, "false": 0}[v.lower()],
    }
    try:
        if param.type in checks:
            checks[param.type](value)
    except (ValueError, KeyError):
        raise ValidationError(f"parameter '{param.name}' must be {param.type}, got '{value}'") from None
    return ox.Literal(
        value.lower() if param.type == "boolean" else value,
        datatype=ox.NamedNode(XSD + kinds[param.type]),
    )
