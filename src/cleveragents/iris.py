"""The IRIs the product mints for its own instances, and how to read them back.

Every instance lives under ``terms.ID`` (``https://cleveragents.ai/id/``): indexed files and
entities under ``src/<resource ulid>/<path>#<key>``, edge reifiers under ``edge/``,
resources under ``resource/``, commits under ``commit/``, agents under ``agent/``. The
store, the indexer, the context backends and the strategies all build and parse these
shapes, so they are spelled here once (bottom layer: imports only ``terms`` and ``errors``).
"""

from __future__ import annotations

import hashlib
import re
from typing import Final
from urllib.parse import quote, unquote

import pyoxigraph as ox

from cleveragents.errors import ValidationError
from cleveragents.terms import ID, PREFIXES

SOURCE_BASE: Final = ID + "src/"
EDGE_BASE: Final = ID + "edge/"
RESOURCE_BASE: Final = ID + "resource/"
COMMIT_BASE: Final = ID + "commit/"
AGENT_BASE: Final = ID + "agent/"

# Characters left unquoted in paths and keys (RFC 3987 sub-delims, ':' and '@').
IRI_SAFE: Final = "/._-~:()*,!$&'+;=@"
# Text made only of characters ``quote`` leaves alone: most names and paths, passed through
# without urllib's per-character work (an incremental run builds IRIs for every symbol).
_NOTHING_TO_QUOTE = re.compile(r"[A-Za-z0-9/._\-~:()*,!$&'+;=@]*").fullmatch
# A resource ULID (Crockford base32) after the source or resource base.
_RESOURCE_ULID = re.compile(r"^" + re.escape(ID) + r"(?:src|resource)/([0-9A-HJKMNP-TV-Z]{26})")


def resource_base(resource_ulid: str) -> str:
    """The prefix of every file and entity IRI of one resource."""
    return f"{SOURCE_BASE}{resource_ulid}/"


def resource_iri(resource_ulid: str) -> str:
    """The IRI of a resource's own node."""
    return f"{RESOURCE_BASE}{resource_ulid}"


def file_iri(resource_ulid: str, path: str, key: str = "") -> str:
    """IRI of a file's node (``key == ""``) or of an entity in it."""
    return entity_iri(resource_base(resource_ulid) + _quote(path), key)


def entity_iri(file_node: str, key: str) -> str:
    """IRI of the entity ``key`` of the file whose node is ``file_node`` (one quoting of the path per file)."""
    return f"{file_node}#{_quote(key)}" if key else file_node


def directory_iri(resource_ulid: str, path: str) -> str:
    """IRI of a directory (package) node; ``""`` is the resource root."""
    return resource_base(resource_ulid) + (_quote(path) + "/" if path else "")


def _quote(text: str) -> str:
    return text if _NOTHING_TO_QUOTE(text) else quote(text, safe=IRI_SAFE)


def split_iri(iri: str) -> tuple[str, str, str] | None:
    """``(resource_ulid, path, key)`` of a source IRI, or None for other IRIs."""
    if not iri.startswith(SOURCE_BASE):
        return None
    ulid, _, rest = iri[len(SOURCE_BASE) :].partition("/")
    path, _, key = rest.partition("#")
    return ulid, unquote(path).rstrip("/"), unquote(key)


def resource_ulid_of(iri: str) -> str | None:
    """The resource ULID an entity IRI (or a resource IRI) belongs to, or None."""
    match = _RESOURCE_ULID.match(iri)
    return match.group(1) if match else None


def edge_iri(subject: str, predicate: str, obj: str) -> str:
    """The reifier of one edge: stable, so re-indexing the same edge writes nothing."""
    digest = hashlib.sha1(f"{subject} {predicate} {obj}".encode(), usedforsecurity=False).hexdigest()
    return f"{EDGE_BASE}{digest[:24]}"


def commit_iri(revision: int) -> str:
    """The IRI of the commit (PROV-O activity) that made ``revision``."""
    return f"{COMMIT_BASE}{revision}"


def agent_iri(name: str) -> str:
    """The agent's IRI; names such as 'Ada <ada@example.org>' (git authors) are percent-encoded."""
    return f"{AGENT_BASE}{quote(name, safe='@._-~')}"


def parse_iri(text: str) -> ox.NamedNode:
    """An IRI from '<...>', a full IRI or a prefixed name with a known prefix."""
    value = text.strip().removeprefix("<").removesuffix(">")
    prefix, sep, local = value.partition(":")
    if sep and prefix in PREFIXES and not local.startswith("//"):
        value = PREFIXES[prefix] + local
    try:
        return ox.NamedNode(value)
    except ValueError as exc:
        raise ValidationError(f"not an IRI: '{text}' ({exc})") from None


def term_text(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.DefaultGraph | ox.Triple) -> str:
    """The text of an RDF term: an IRI, a blank node's id, a literal's lexical form; the
    N-Triples form of an RDF 1.2 triple term (the one kind of term without a ``value``)."""
    if isinstance(term, ox.Triple | ox.DefaultGraph):
        return str(term)
    return term.value
