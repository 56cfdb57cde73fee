"""Entity emission details that every analyzer relies on."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from cleveragents import iris
from cleveragents.indexing import emit
from cleveragents.indexing.model import Entity, FileAnalysis, SourceFile, Span
from cleveragents.terms import UKO_INFRA

DATA = b"password: hunter2\nuser: ada\n"


def test_secret_entities_get_no_content_hash():
    source = SourceFile("app.yaml", DATA, emit.content_hash(DATA))
    secret = Entity("password", (UKO_INFRA + "ConfigKey",), "password", parent="", span=Span(1, 0, 1, 17, 0, 17))
    secret.add(UKO_INFRA + "isSecret", True)
    plain = Entity("user", (UKO_INFRA + "ConfigKey",), "user", parent="", span=Span(2, 0, 2, 9, 18, 27))
    analysis = FileAnalysis([Entity("", (UKO_INFRA + "ConfigFile",), "app.yaml"), secret, plain])
    text = "\n".join(emit.entity_lines(analysis, source, "R", "https://example.org/r"))
    assert emit.content_hash(b"password: hunter2") not in text
    assert emit.content_hash(b"user: ada") in text


def test_iris_round_trip_through_split():
    iri = iris.file_iri("01ABC", "src/a b/mod.py", "Klass.method~2")
    assert " " not in iri
    assert iris.split_iri(iri) == ("01ABC", "src/a b/mod.py", "Klass.method~2")
    assert iris.split_iri(iris.directory_iri("01ABC", "src")) == ("01ABC", "src", "")
    assert iris.split_iri("https://example.org/x") is None


@given(st.text())
def test_iris_quote_exactly_as_urllib_does(text):
    """The pass-through for names with nothing to quote changes no IRI."""
    assert iris.entity_iri("https://example.org/f", text) == (
        f"https://example.org/f#{quote(text, safe=iris.IRI_SAFE)}" if text else "https://example.org/f"
    )
    assert iris.split_iri(iris.file_iri("01ABC", text or "x", text)) == ("01ABC", (text or "x").rstrip("/"), text)


def test_literals_escape_what_n_triples_needs():
    assert emit.literal('a "quoted"\nline\\') == '"a \\"quoted\\"\\nline\\\\"'
    assert emit.literal(True).startswith('"true"^^')
    assert emit.literal(3) == '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
