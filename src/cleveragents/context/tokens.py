"""Token counting for budgets: exact, offline and deterministic for a named encoding.

bpe-openai bundles OpenAI's encodings with tiktoken's token ids (tiktoken itself downloads
them at run time and fails offline). The budget is a hard ceiling under this count, so
every count goes through one counter per encoding, and truncation cuts on token
boundaries and re-counts."""

from __future__ import annotations

from functools import cache
from typing import Final, Protocol, runtime_checkable

import bpe_openai

from cleveragents.errors import UsageError

DEFAULT_ENCODING: Final = "o200k_base"


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens as one model family sees them; pluggable per model."""

    @property
    def encoding(self) -> str: ...

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` (cut on a token boundary) of at most
        ``max_tokens`` tokens."""
        ...


class BpeTokenCounter:
    """A byte-pair encoding from bpe-openai (``o200k_base``, ``cl100k_base``, ...)."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        try:
            self._bpe = bpe_openai.get_encoding(encoding)
        except Exception as exc:  # the library raises its own error types per failure
            names = ", ".join(bpe_openai.list_encoding_names())
            raise UsageError(f"unknown token encoding '{encoding}'; known: {names}") from exc
        self._name = encoding

    @property
    def encoding(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._bpe.encode_ordinary(text)) if text else 0

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        tokens = self._bpe.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return text
        # A cut inside a multi-byte character decodes to U+FFFD; drop tokens until the
        # prefix decodes cleanly and still counts within the limit.
        for end in range(max_tokens, 0, -1):
            prefix = self._bpe.decode(tokens[:end])
            if "\ufffd" not in prefix[-1:] and self.count(prefix) <= max_tokens:
                return prefix
        return ""


@cache
def counter_for(encoding: str = DEFAULT_ENCODING) -> BpeTokenCounter:
    """The shared counter of an encoding (loading one takes ~0.1 s)."""
    return BpeTokenCounter(encoding)


def encoding_for_model(model: str) -> str:
    """The encoding of an OpenAI model name (``gpt-4o`` -> ``o200k_base``); other
    providers' models are counted with the default encoding."""
    try:
        return str(bpe_openai.encoding_name_for_model(model))
    except Exception:  # an unknown model: no error, the default is a close estimate
        return DEFAULT_ENCODING
