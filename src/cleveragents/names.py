"""Namespaced names (``<namespace>/<name>``): a bare name is ``local/<name>``; a namespace is
1-39 lowercase letters, digits or hyphens; provider namespaces hold built-in actors only, and
this local store takes only ``local/``."""

from __future__ import annotations

import re

from cleveragents.errors import ValidationError

LOCAL = "local"
# Built-in provider namespaces hold LLM actors only.
PROVIDER_NAMESPACES = frozenset({"openai", "anthropic", "google", "mistral", "ollama", "azure", "bedrock"})
_NAMESPACE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,37}[a-z0-9])?")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")


def parse_name(text: str, *, kind: str = "name") -> str:
    """Validate and normalise a name; a bare name gets the ``local/`` namespace."""
    raw = text.strip()
    namespace, sep, name = raw.partition("/")
    if not sep:
        namespace, name = LOCAL, raw
    problem = None
    if not _NAMESPACE.fullmatch(namespace):
        problem = f"namespace '{namespace}' must be 1-39 lowercase letters, digits or hyphens"
    elif not _NAME.fullmatch(name):
        problem = (
            f"name '{name}' must start with a lowercase letter or digit and use only "
            "lowercase letters, digits, '.', '_' or '-' (at most 100 characters)"
        )
    elif namespace in PROVIDER_NAMESPACES:
        problem = f"namespace '{namespace}/' is reserved for built-in provider actors"
    elif namespace != LOCAL:
        problem = f"namespace '{namespace}/' lives on a server; this store is local and takes only 'local/'"
    if problem:
        raise ValidationError(f"invalid {kind} '{text}': {problem}")
    return f"{namespace}/{name}"


def default_name(hint: str) -> str:
    """A valid local name derived from a directory name or similar."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", hint.lower()).strip("-._") or "unnamed"
    return f"{LOCAL}/{slug[:100]}"
