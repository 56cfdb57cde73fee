"""No secret at rest: file contents are masked as they are read, before anything sees them.

Every text file is scanned with detect-secrets (its plugins for keys, tokens, passwords,
private keys and high-entropy strings, with its false-positive filters) and each value
found is overwritten with ``*`` of the same byte length. Masking at read time means the
analyzers, the graph (default argument values included), the content store, renderings,
exports and assembled context all derive from the masked bytes, and line/column
positions stay those of the file on disk (language servers still line up). Only the
kind and the line of a finding are kept, never the value.

detect-secrets costs about half a millisecond a line, so only lines a cheap pattern
marks as possibly holding a secret (a secret-ish word, a known token prefix, or a long
quoted or assigned run of key characters) are handed to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# Words and prefixes that every detect-secrets plugin's own patterns contain, or a
# long run of base64/hex characters (what the entropy plugins look at).
_CANDIDATE = re.compile(
    rb"(?i)pass|pwd|secret|identified|token|key|auth|cred|private|bearer|api|sig|salt|session|cookie"
    rb"|AKIA|ASIA|gh[pousr]_|github_pat|xox|sk_|rk_|pk_|sk-|eyJ|-----BEGIN|AIza|SG\.|npm_|glpat"
    rb"|[A-Za-z0-9+/=_\-]{20,}"
)
# What a masked value is extended over: plugins sometimes report only a prefix of a token
# ("ghp" of "ghp_..."), so the mask covers the whole run of token characters around it.
_TOKEN_CHARS = re.compile(rb"[^\s'\"`,;=:(){}\[\]<>]*")
MASK_BYTE = b"*"


@dataclass(frozen=True)
class SecretFinding:
    """A secret found in a file: the detect-secrets kind and the 1-based line."""

    kind: str
    line: int


@cache
def _settings() -> None:
    """detect-secrets' global settings: every plugin it has, its default filters (once
    per process; what ``default_settings()`` sets, without restoring it afterwards)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import configure_settings_from_baseline

    plugins = [{"name": cls.__name__} for cls in get_mapping_from_secret_type_to_class().values()]
    configure_settings_from_baseline({"plugins_used": plugins})


# What detect-secrets' keyword plugin misses: a secret-named key assigned a quoted value
# past a type annotation (``KEY: &str = "..."``, ``apiKey: string = "..."``), SQL's
# ``IDENTIFIED BY '...'``, and unquoted values in configuration and prose.
_SECRET_NAME = (
    r"[\w.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential)[\w.-]*"
)
_QUOTED_ASSIGNMENT = re.compile(
    rf"(?i)(?:\b{_SECRET_NAME}['\"]?\s*(?::\s*[\w&'<>\[\] ]{{1,40}}?\s*)?(?:=|:=|:|=>)|\bIDENTIFIED\s+BY)\s*"
    r"[\"'`]([^\"'`\s]{6,})[\"'`]"
)
_BARE_ASSIGNMENT = re.compile(rf"(?i)\b{_SECRET_NAME}['\"]?\s*(?:=|:)\s*([^\s\"'`;,$<{{%][^\s\"'`;,]{{5,}})")
# Files whose values are data, not code: an unquoted value there is a value.
_CONFIG_SUFFIXES = (".env", ".ini", ".cfg", ".conf", ".properties", ".toml", ".yaml", ".yml", ".md", ".rst", ".txt")
_SECRET_BLOCK = re.compile(r"^(\s*)(?:data|stringData):\s*$")
_BLOCK_VALUE = re.compile(r"^\s+[\w.-]+:\s*['\"]?([^\s'\"]+)")


def mask_secrets(path: str, data: bytes) -> tuple[bytes, list[SecretFinding]]:
    """``data`` with every secret detect-secrets finds overwritten by ``*`` (same byte
    length), and the findings. Undecodable text is returned as it is."""
    if not _CANDIDATE.search(data):
        return data, []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, []
    lines = text.split("\n")
    candidates = [(i + 1, line) for i, line in enumerate(lines) if _CANDIDATE.search(line.encode())]
    if not candidates:
        return data, []
    from detect_secrets.core.scan import _process_line_based_plugins

    _settings()
    values: dict[int, set[str]] = {}
    findings: set[SecretFinding] = set()
    for secret in _process_line_based_plugins(candidates, filename=path):
        if secret.secret_value:
            values.setdefault(secret.line_number, set()).add(secret.secret_value)
            findings.add(SecretFinding(secret.type, secret.line_number))
    for number, value, kind in _assignments(path, lines, candidates):
        values.setdefault(number, set()).add(value)
        findings.add(SecretFinding(kind, number))
    if not values:
        return data, []
    encoded = [line.encode() for line in lines]
    for number, found in values.items():
        encoded[number - 1] = _mask_line(encoded[number - 1], found)
    return b"\n".join(encoded), sorted(findings, key=lambda f: (f.line, f.kind))


def _assignments(path: str, lines: list[str], candidates: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """(line, value, kind) of secrets written as assignments that detect-secrets misses,
    and every value of a Kubernetes Secret's data/stringData."""
    name = path.rsplit("/", 1)[-1].lower()
    config = name.startswith(".env") or name.endswith(_CONFIG_SUFFIXES)
    out: list[tuple[int, str, str]] = []
    for number, line in candidates:
        for match in _QUOTED_ASSIGNMENT.finditer(line):
            out.append((number, match.group(1), "Secret Assignment"))
        if config:
            for match in _BARE_ASSIGNMENT.finditer(line):
                if "*" * 4 not in match.group(1):
                    out.append((number, match.group(1), "Secret Assignment"))
    if re.search(r"(?m)^kind:\s*Secret\s*$", "\n".join(lines)):
        indent: int | None = None
        for number, line in enumerate(lines, 1):
            if block := _SECRET_BLOCK.match(line):
                indent = len(block.group(1))
            elif indent is not None and line.strip() and len(line) - len(line.lstrip()) <= indent:
                indent = None
            elif indent is not None and (value := _BLOCK_VALUE.match(line)):
                out.append((number, value.group(1), "Kubernetes Secret"))
    return out


def _mask_line(line: bytes, values: set[str]) -> bytes:
    out = bytearray(line)
    for value in sorted(values, key=len, reverse=True):
        needle = value.encode()
        start = line.find(needle)
        while start >= 0:
            lo, hi = start, start + len(needle)
            hi += _TOKEN_CHARS.match(line, hi).end() - hi  # type: ignore[union-attr]
            while lo > 0 and _TOKEN_CHARS.fullmatch(line[lo - 1 : lo]):
                lo -= 1
            out[lo:hi] = MASK_BYTE * (hi - lo)
            start = line.find(needle, start + len(needle))
    return bytes(out)
