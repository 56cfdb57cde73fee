"""Keeping SPARQL off the network: ``SERVICE`` calls are refused unless allow-listed.

Oxigraph evaluates ``SERVICE <endpoint> { ... }`` (``SERVICE SILENT`` too, and inside an
update's WHERE) by sending an HTTP request to the endpoint, and pyoxigraph offers no
switch to turn that off. On a server that is server-side request forgery, so every
query and update text is scanned here before Oxigraph sees it.

The scan is a SPARQL lexer, not a parser: strings, IRIs, comments, variables, numbers and
prefixed names are consumed whole (so ``ex:myService``, ``?service``, ``"SERVICE"`` and
``<http://x/SERVICE>`` are not the keyword), and every remaining ``SERVICE`` word is a
call. Where the lexer and Oxigraph could disagree it errs on the side of seeing a
``SERVICE`` (a refusal), never of missing one. It runs in linear time, so it is safe to
run in the main process before any query starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

from cleveragents.errors import ForbiddenError

# Characters of names (PN_CHARS of the SPARQL grammar, approximated from above: every
# non-ASCII character counts, which can only make a name longer, never hide a keyword).
_NAME_CHAR = r"A-Za-z0-9_\-\u00B7\u00C0-\U000EFFFF"
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<string>\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
      | '''(?:[^'\\]|\\.|'(?!''))*'''
      | "(?:[^"\\\n\r]|\\.)*"
      | '(?:[^'\\\n\r]|\\.)*')
  | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
  | (?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\U000EFFFF]*)
  | (?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
  | (?P<pname>(?:[A-Za-z\u00C0-\U000EFFFF_][NAME.]*)?:(?:[NAME:%]|\\.|\.(?=[NAME:%\\]))*)
  | (?P<word>[A-Za-z_][NAME]*)
  | (?P<other>.)
    """.replace("NAME", _NAME_CHAR),
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class ServiceCall:
    """One ``SERVICE`` in a query: its endpoint IRI (None when it is a variable or
    cannot be read) and the text as written."""

    endpoint: str | None
    written: str
    silent: bool


def service_calls(text: str, prefixes: Mapping[str, str] | None = None) -> list[ServiceCall]:
    """Every ``SERVICE`` of a query or update, with its endpoint resolved against the
    text's own ``PREFIX``/``BASE`` declarations and ``prefixes``."""
    tokens = [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(text)]
    tokens = [t for t in tokens if t[0] not in ("space", "comment")]
    declared = dict(prefixes or {})
    base: str | None = None
    calls: list[ServiceCall] = []
    for i, (kind, value) in enumerate(tokens):
        word = value.upper() if kind == "word" else ""
        if word == "PREFIX" and i + 2 < len(tokens) and tokens[i + 2][0] == "iri":
            declared[tokens[i + 1][1].rstrip(":")] = _resolve(tokens[i + 2][1][1:-1], base)
        elif word == "BASE" and i + 1 < len(tokens) and tokens[i + 1][0] == "iri":
            base = _resolve(tokens[i + 1][1][1:-1], base)
        elif word == "SERVICE":
            j = i + 1
            silent = j < len(tokens) and tokens[j][0] == "word" and tokens[j][1].upper() == "SILENT"
            j += silent
            target_kind, target = tokens[j] if j < len(tokens) else ("other", "")
            endpoint: str | None = None
            if target_kind == "iri":
                endpoint = _resolve(target[1:-1], base)
            elif target_kind == "pname":
                prefix, _, local = target.partition(":")
                if prefix in declared:
                    endpoint = declared[prefix] + re.sub(r"\\(.)", r"\1", local)
            calls.append(ServiceCall(endpoint, target or "(nothing)", bool(silent)))
    return calls


def refuse_services(text: str, allowed: Iterable[str] = (), prefixes: Mapping[str, str] | None = None) -> None:
    """Raise ForbiddenError for the first ``SERVICE`` whose endpoint is not in
    ``allowed`` (exact IRIs; a variable endpoint is never allowed)."""
    allow = frozenset(allowed)
    for call in service_calls(text, prefixes):
        if call.endpoint is not None and call.endpoint in allow:
            continue
        what = f"endpoint {call.endpoint}" if call.endpoint else f"endpoint {call.written} (not a fixed IRI)"
        raise ForbiddenError(
            f"SPARQL SERVICE is refused: the query would send a request to {what}",
            detail="Federated queries reach the network; only endpoints on the allow-list may be called.",
            suggestions=[
                "remove the SERVICE block",
                "allow the endpoint: agents config set query.service_allowlist 'https://...'",
            ],
            data={"endpoint": call.endpoint, "written": call.written},
        )


def _resolve(iri: str, base: str | None) -> str:
    iri = re.sub(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})", lambda m: chr(int(m.group(1) or m.group(2), 16)), iri)
    return urljoin(base, iri) if base else iri
