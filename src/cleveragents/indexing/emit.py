"""Entities to N-Triples text: IRIs, provenance on every node, literals.

Text is produced directly (not through pyoxigraph objects) because a full index emits
hundreds of thousands of triples and the commit engine bulk-loads N-Triples anyway.
"""

from __future__ import annotations

import hashlib

from cleveragents.iris import edge_iri, file_iri
from cleveragents.terms import CA, RDF_REIFIES, RDF_TYPE, UKO, XSD
from cleveragents.vocabulary import uko, uko_infra

from .model import FileAnalysis, Problem, SourceFile, Value

CONTAINS = uko.contains

# Values that mark an entity's text as secret: its content hash is withheld, because a
# hash of a short secret can be brute-forced offline.
SECRET_FLAGS = (uko_infra.isSecret,)


def literal(value: Value) -> str:
    if isinstance(value, bool):
        return f'"{"true" if value else "false"}"^^<{XSD}boolean>'
    if isinstance(value, int):
        return f'"{value}"^^<{XSD}integer>'
    if isinstance(value, float):
        return f'"{value!r}"^^<{XSD}double>'
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def decimal(value: float) -> str:
    return f'"{value:.2f}"^^<{XSD}decimal>'


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def edge_lines(subject: str, predicate: str, obj: str, confidence: float, resolved_by: str) -> list[str]:
    """The edge and its reifier (RDF 1.2 ``rdf:reifies``) with confidence and method."""
    reifier = edge_iri(subject, predicate, obj)
    return [
        f"<{subject}> <{predicate}> <{obj}> .",
        f"<{reifier}> <{RDF_REIFIES}> <<( <{subject}> <{predicate}> <{obj}> )>> .",
        f"<{reifier}> <{CA}confidence> {decimal(confidence)} .",
        f"<{reifier}> <{CA}resolvedBy> {literal(resolved_by)} .",
    ]


def provenance_lines(node: str, resource_iri: str, path: str) -> list[str]:
    return [f"<{node}> <{UKO}sourceResource> <{resource_iri}> .", f"<{node}> <{UKO}sourcePath> {literal(path)} ."]


def entity_lines(analysis: FileAnalysis, source: SourceFile, resource_ulid: str, resource_iri: str) -> list[str]:
    """Every triple one file's analysis asserts, except cross-file edges (the linker's)."""
    lines: list[str] = []
    iris = {entity.key: file_iri(resource_ulid, source.path, entity.key) for entity in analysis.entities}
    for entity in analysis.entities:
        node = iris[entity.key]
        lines += [f"<{node}> <{RDF_TYPE}> <{t}> ." for t in entity.types]
        lines.append(f"<{node}> <{UKO}name> {literal(entity.name)} .")
        lines += provenance_lines(node, resource_iri, source.path)
        if entity.span is not None:
            lines.append(f"<{node}> <{UKO}sourceRange> {literal(entity.span.literal())} .")
            if not any(entity.values.get(flag) == [True] for flag in SECRET_FLAGS):
                chunk = source.data[entity.span.start_byte : entity.span.end_byte]
                lines.append(f"<{node}> <{UKO}contentHash> {literal(content_hash(chunk))} .")
        elif entity.key == "":
            lines.append(f"<{node}> <{UKO}contentHash> {literal(source.content_hash)} .")
        for predicate, values in entity.values.items():
            lines += [f"<{node}> <{predicate}> {literal(v)} ." for v in values]
        for predicate, key in entity.links:
            if key in iris:
                lines.append(f"<{node}> <{predicate}> <{iris[key]}> .")
        if entity.parent is not None and entity.parent in iris:
            lines.append(f"<{iris[entity.parent]}> <{CONTAINS}> <{node}> .")
    if analysis.problems:
        lines += problem_lines(iris[""], analysis.problems)
    return lines


def problem_lines(node: str, problems: list[Problem]) -> list[str]:
    lines = [
        f"<{node}> <{UKO}hasParseErrors> {literal(True)} .",
        f"<{node}> <{CA}parseErrorCount> {literal(len(problems))} .",
    ]
    for problem in problems:
        where = problem.span.literal() if problem.span else "?"
        lines.append(f"<{node}> <{CA}parseError> {literal(f'{where} {problem.message}')} .")
        lines += [f"<{node}> <{CA}hiddenByParseError> {literal(name)} ." for name in problem.hidden]
    return lines
