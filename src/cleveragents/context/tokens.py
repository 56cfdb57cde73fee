"""Token counting for budgets: exact, offline and deterministic for a named encoding.

bpe-openai bundles OpenAI's encodings with tiktoken's token ids (tiktoken itself downloads
them at run time and fails offline). The budget is a hard ceiling under this count, so
every count goes through one counter per encoding, and truncation cuts on token
boundaries and re-counts."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from functools import cache
from types import ModuleType
from typing import Any, Final, Protocol, runtime_checkable

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


_NATIVE: Final = "bpe_openai._bindings"


@cache
def native_tokenizers() -> ModuleType | None:
    """bpe-openai's Rust extension, loaded without running its package's ``__init__``.

    That ``__init__`` decodes three vocabularies in Python to fill a model table (about 5 s
    of a one-shot command on a loaded 2-core machine, before any text is counted), while the
    extension builds the same tokenizer from its own data in about 0.5 s, with the same
    token ids. It is registered under its own name, so a later ``import bpe_openai`` shares
    it (a PyO3 module is initialized once per process). None if it cannot be found."""
    if _NATIVE in sys.modules:
        return sys.modules[_NATIVE]
    package = importlib.util.find_spec("bpe_openai")  # locates the package, does not import it
    folders = list(package.submodule_search_locations or []) if package else []
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = f"{folder}/_bindings{suffix}"
            spec = importlib.util.spec_from_file_location(_NATIVE, path)
            if spec is None or spec.loader is None or not os.path.exists(path):
                continue
            module = importlib.util.module_from_spec(spec)
            sys.modules[_NATIVE] = module
            spec.loader.exec_module(module)
            return module
    return None


def _tokenizer(encoding: str) -> Any:
    """The native tokenizer of an encoding it supports, else bpe-openai's Python wrapper."""
    native = native_tokenizers()
    if native is not None and encoding in native.supported_encodings():
        return _Native(native.tokenizer_for_encoding(encoding))
    import bpe_openai  # the slow import, only for encodings the extension lacks

    try:
        return bpe_openai.get_encoding(encoding)
    except Exception as exc:  # the library raises its own error types per failure
        names = ", ".join(bpe_openai.list_encoding_names())
        raise UsageError(f"unknown token encoding '{encoding}'; known: {names}") from exc


class _Native:
    """The extension's tokenizer behind the two calls the counter makes (special-token
    text is counted as text, as ``encode_ordinary`` does)."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode_ordinary(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text))

    def decode(self, tokens: list[int]) -> str:
        try:
            return str(self._tokenizer.decode(tokens))
        except Exception:  # a cut inside a multi-byte character
            return "\ufffd"


class BpeTokenCounter:
    """A byte-pair encoding from bpe-openai (``o200k_base``, ``cl100k_base``, ...)."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self._bpe = _tokenizer(encoding)
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
    """The shared counter of an encoding (loading one takes about 0.5 s)."""
    return BpeTokenCounter(encoding)


def encoding_for_model(model: str) -> str:
    """The encoding of an OpenAI model name (``gpt-4o`` -> ``o200k_base``); other
    providers' models are counted with the default encoding."""
    import bpe_openai  # its model table (slow to import; see native_tokenizers)

    try:
        return str(bpe_openai.encoding_name_for_model(model))
    except Exception:  # an unknown model: no error, the default is a close estimate
        return DEFAULT_ENCODING
