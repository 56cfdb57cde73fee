"""Identifier-aware tokenization for BM25: code names are split into their words
(``snake_case``, ``camelCase``, ``HTTPAdapter``, ``utf8``), lowercased, and the whole
identifier is kept too, so both "cookie jar" and "cookiejar_from_dict" find it."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# Split points inside an identifier: underscores, lower->Upper, ACRONYMWord, letter<->digit.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "so",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "self",
        "cls",
        "def",
        "return",
        "none",
        "true",
        "false",
    ]
)


def _stem(word: str) -> str:
    """Plural folding only ("cookies" -> "cookie", "classes" -> "class"): cheap and safe on code."""
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def split_identifier(identifier: str) -> list[str]:
    """The lowercased words of one identifier: ``getHTTPResponse_v2`` -> get, http, response, v, 2."""
    return [part.lower() for part in _PARTS.findall(identifier)]


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[str, ...]:
    """Cached: a code base repeats the same identifiers over and over."""
    parts = split_identifier(word)
    tokens = []
    if len(parts) > 1:
        whole = word.strip("_").lower()
        if whole not in STOPWORDS:
            tokens.append(whole)
    tokens += [_stem(part) for part in parts if len(part) > 1 and part not in STOPWORDS]
    return tuple(tokens)


def tokenize(text: str) -> list[str]:
    """Tokens of a text: each identifier's words plus the whole identifier when it has several."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        tokens.extend(_word_tokens(word))
    return tokens
