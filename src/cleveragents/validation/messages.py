"""Result messages: sh:message with its placeholders, or a readable default per component."""

from __future__ import annotations

import re
from typing import Any

from rdflib import URIRef
from rdflib.term import Node

from cleveragents.terms import compact
from cleveragents.validation.paths import to_sparql
from cleveragents.validation.rdfterms import nt, to_rdflib
from cleveragents.validation.shapes import Constraint, Shape


def compact_path(path: str) -> str:
    """Shorten the IRIs inside a SPARQL path for display."""

    def short(m: re.Match[str]) -> str:
        c = compact(m.group(1))
        return c if c != m.group(1) else m.group(0)

    return re.sub(r"<([^<>\s]*)>", short, path)


def default_message(shape: Shape, c: Constraint) -> str:
    """A readable message for results of shapes without sh:message."""
    arg = c.arg
    show = compact(str(arg)) if isinstance(arg, URIRef) else (nt(arg) if isinstance(arg, Node) else str(arg))
    on = f" on {compact_path(to_sparql(shape.path))}" if shape.path is not None else ""
    count = c.extra[0] if isinstance(c.extra, tuple) else "?"
    texts = {
        "Class": f"Value is not an instance of {show}",
        "Datatype": f"Value is not a well-formed literal of datatype {show}",
        "NodeKind": f"Value is not of node kind {show}",
        "MinCount": f"Fewer than {arg} values{on}",
        "MaxCount": f"More than {arg} values{on}",
        "MinExclusive": f"Value is not > {show}",
        "MinInclusive": f"Value is not >= {show}",
        "MaxExclusive": f"Value is not < {show}",
        "MaxInclusive": f"Value is not <= {show}",
        "MinLength": f"Value is shorter than {arg} characters",
        "MaxLength": f"Value is longer than {arg} characters",
        "Pattern": f"Value does not match pattern {arg!r}",
        "LanguageIn": f"Language tag not in {arg}",
        "UniqueLang": f"More than one value{on} shares a language tag",
        "Equals": f"Values{on} differ from the values of {show}",
        "Disjoint": f"Value{on} is also a value of {show}",
        "LessThan": f"Value{on} is not < the values of {show}",
        "LessThanOrEquals": f"Value{on} is not <= the values of {show}",
        "HasValue": f"Missing required value {show}{on}",
        "In": "Value is not in the allowed list",
        "Closed": "Predicate is not allowed by the closed shape",
        "Not": f"Value conforms to shape {show}, which it must not",
        "And": "Value does not conform to every shape of sh:and",
        "Or": "Value conforms to none of the shapes of sh:or",
        "Xone": "Value does not conform to exactly one shape of sh:xone",
        "Node": f"Value does not conform to shape {show}",
        "QualifiedMinCount": f"Fewer than {count} values{on} conform to {show}",
        "QualifiedMaxCount": f"More than {count} values{on} conform to {show}",
    }
    return texts.get(c.kind, f"{c.kind} constraint violated")


def fill(template: str, focus: Any, value: Any, path: str | None) -> str:
    """Substitute {$this} / {?this}, {$value} / {?value} and {$path} / {?path}."""
    if "{" not in template:
        return template
    names = {"this": focus, "value": value, "path": path}

    def sub(m: re.Match[str]) -> str:
        term = names.get(m.group(1))
        if term is None:
            return m.group(0)
        return term if isinstance(term, str) else str(to_rdflib(term))

    return re.sub(r"\{[?$](this|value|path)\}", sub, template)
