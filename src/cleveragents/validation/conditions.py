"""Value-node tests of SHACL Core as SPARQL expressions.

Each function returns an expression, over the value variable ``v``, that is true exactly
when the value node violates the constraint. The expressions never raise a SPARQL error
(errors are folded with COALESCE), so they can be OR-ed together and evaluated on an
unbound variable without surprises.
"""

from __future__ import annotations

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from cleveragents.terms import SH, XSD
from cleveragents.validation.rdfterms import sparql
from cleveragents.validation.shapes import Constraint

RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

# Lexical-space checks Oxigraph can do with a cast (the cast fails on ill-formed input).
_CASTABLE = {
    XSD + name
    for name in [
        "integer",
        "decimal",
        "float",
        "double",
        "boolean",
        "dateTime",
        "date",
        "time",
        "duration",
        "dayTimeDuration",
        "yearMonthDuration",
        "gYear",
        "gYearMonth",
        "gMonth",
        "gDay",
        "gMonthDay",
    ]
}
_INTEGER_RANGES: dict[str, tuple[int | None, int | None]] = {
    XSD + "long": (-(2**63), 2**63 - 1),
    XSD + "int": (-(2**31), 2**31 - 1),
    XSD + "short": (-(2**15), 2**15 - 1),
    XSD + "byte": (-128, 127),
    XSD + "nonNegativeInteger": (0, None),
    XSD + "positiveInteger": (1, None),
    XSD + "nonPositiveInteger": (None, 0),
    XSD + "negativeInteger": (None, -1),
    XSD + "unsignedLong": (0, 2**64 - 1),
    XSD + "unsignedInt": (0, 2**32 - 1),
    XSD + "unsignedShort": (0, 2**16 - 1),
    XSD + "unsignedByte": (0, 255),
}
# Datatypes whose values Oxigraph rewrites on write (to xsd:integer); a shape asking for
# them rejects every stored value, so the compiler warns about them.
CANONICALISED_DATATYPES = frozenset(_INTEGER_RANGES)

_NODE_KINDS = {
    SH + "IRI": "isIRI({v})",
    SH + "BlankNode": "isBlank({v})",
    SH + "Literal": "isLiteral({v})",
    SH + "BlankNodeOrIRI": "(isIRI({v}) || isBlank({v}))",
    SH + "BlankNodeOrLiteral": "(isBlank({v}) || isLiteral({v}))",
    SH + "IRIOrLiteral": "(isIRI({v}) || isLiteral({v}))",
}
_COMPARISONS = {"MinExclusive": ">", "MinInclusive": ">=", "MaxExclusive": "<", "MaxInclusive": "<="}
VALUE_TESTS = frozenset(
    ["Datatype", "NodeKind", "MinLength", "MaxLength", "Pattern", "LanguageIn", "In", *_COMPARISONS]
)


class ConditionError(ValueError):
    """A constraint parameter cannot be turned into a test."""


def value_test(c: Constraint, v: str) -> str:
    """The violation test of a value-level constraint (``c.kind`` in VALUE_TESTS)."""
    if c.kind == "Datatype":
        return _datatype(str(c.arg), v)
    if c.kind == "NodeKind":
        test = _NODE_KINDS.get(str(c.arg))
        if test is None:
            raise ConditionError(f"unknown sh:nodeKind {c.arg}")
        return "!" + test.replace("{v}", v)
    if c.kind in _COMPARISONS:
        return f"!COALESCE({v} {_COMPARISONS[c.kind]} {_constant(c.arg)}, false)"
    if c.kind == "MinLength":
        return f"(isBlank({v}) || !COALESCE(STRLEN(STR({v})) >= {c.arg}, false))"
    if c.kind == "MaxLength":
        return f"(isBlank({v}) || !COALESCE(STRLEN(STR({v})) <= {c.arg}, false))"
    if c.kind == "Pattern":
        regex = f"REGEX(STR({v}), {string(c.arg)}, {string(c.extra or '')})"
        return f"(isBlank({v}) || !COALESCE({regex}, false))"
    if c.kind == "LanguageIn":
        tests = " || ".join(f"langMatches(lang({v}), {string(tag)})" for tag in c.arg) or "false"
        return f"!COALESCE(isLiteral({v}) && ({tests}), false)"
    if c.kind == "In":
        members = [m for m in c.arg if not isinstance(m, BNode)]
        tests = " || ".join(f"sameTerm({v}, {sparql(m)})" for m in members) or "false"
        return f"!({tests})"
    raise ConditionError(f"{c.kind} is not a value-level constraint")


def _datatype(dt: str, v: str) -> str:
    check = f"isLiteral({v}) && sameTerm(datatype({v}), <{dt}>)"
    if dt == RDF_LANGSTRING:
        check += f' && lang({v}) != ""'
    elif dt in _CASTABLE:
        # Well-formed: the cast of the value to its own datatype succeeds. Oxigraph keeps an
        # ill-formed literal apart from the parsed values, and casting it fails. (A cast of
        # STR(v) gives the same verdict at twice the cost.)
        check += f" && isLiteral(<{dt}>({v}))"
    elif dt in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[dt]
        cast = f"<{XSD}integer>(STR({v}))"
        check += f" && isLiteral({cast})"
        check += f" && {cast} >= {low}" if low is not None else ""
        check += f" && {cast} <= {high}" if high is not None else ""
    return f"!COALESCE({check}, false)"


def _constant(value: Node) -> str:
    if not isinstance(value, Literal | URIRef):
        raise ConditionError("a comparison bound must be a literal or IRI")
    return sparql(value)


def string(text: str) -> str:
    """A SPARQL string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'
