"""Token counts are exact for the named encoding, offline, and truncation never overshoots."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleveragents.context.tokens import counter_for, encoding_for_model
from cleveragents.errors import UsageError


def test_counts_match_the_encodings_token_ids() -> None:
    # Known tiktoken ids: "hello world" is two tokens in both encodings, ids differ.
    o200k, cl100k = counter_for("o200k_base"), counter_for("cl100k_base")
    assert o200k.count("hello world") == cl100k.count("hello world") == 2
    assert o200k.count("") == 0
    source = "def resolve_redirects(self, resp, req, stream=False):\n    return None\n"
    assert 10 < o200k.count(source) < 40
    assert o200k.encoding == "o200k_base"


def test_models_pick_their_encoding() -> None:
    assert encoding_for_model("gpt-4o") == "o200k_base"
    assert encoding_for_model("gpt-4") == "cl100k_base"
    assert encoding_for_model("claude-sonnet") == "o200k_base"  # unknown: the default


def test_an_unknown_encoding_names_the_known_ones() -> None:
    with pytest.raises(UsageError, match="unknown token encoding 'nope'; known: cl100k_base"):
        counter_for("nope")


@given(st.text(max_size=400), st.integers(min_value=0, max_value=60))
def test_truncation_is_a_prefix_within_the_limit(text: str, limit: int) -> None:
    counter = counter_for()
    cut = counter.truncate(text, limit)
    assert text.startswith(cut)
    assert counter.count(cut) <= limit
    if counter.count(text) <= limit:
        assert cut == text


@settings(deadline=None)  # the first example loads two vocabularies
@given(st.text(max_size=400))
def test_the_native_tokenizer_counts_as_bpe_openais_encoder(text: str) -> None:
    """The counter uses bpe-openai's extension directly (its package import is slow); the ids
    are the library's own encoder's, special-token text counted as text."""
    import bpe_openai

    for name in ("o200k_base", "cl100k_base"):
        expected = bpe_openai.get_encoding(name).encode_ordinary(text + " <|endoftext|>")
        assert counter_for(name).count(text + " <|endoftext|>") == len(expected)


def test_counting_needs_no_import_of_the_bpe_openai_package() -> None:
    import subprocess
    import sys

    code = "import sys; from cleveragents.context.tokens import counter_for; counter_for().count('x'); "
    code += "print('bpe_openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
