"""Confining an analyzer failure to what failed (shared by the code analyzers; not a plugin).

A bug in an analyzer, met on one odd construct, must cost that construct and never the
file: a definition whose analysis raises is dropped (with whatever entities it had
already added) and recorded on the file node with its range and the error, and a
failure in a later phase (calls, resolution) loses that phase's edges but keeps every
definition. Only a failure outside both (the parser itself) loses the file, and that is
reported with ``FILE_FAILURE`` so a sweep can count it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import tree_sitter as ts

from cleveragents.indexing.model import Entity, FileAnalysis, Problem

from . import _treesitter as tsu

# Message prefixes of the problems recorded for each kind of failure.
FILE_FAILURE = "analysis failed"
DEFINITION_FAILURE = "definition not analyzed"
PHASE_FAILURE = "edges not collected"


class Isolation:
    """Records failures confined to one definition or one phase of one file's analysis."""

    def __init__(self, entities: list[Entity]) -> None:
        self.entities = entities  # the analysis's own list: a failed definition's entries are cut from it
        self.problems: list[Problem] = []
        # Byte ranges of failed definitions: what lies inside them belongs to them and is skipped.
        self.failed: list[tuple[int, int]] = []

    def inside_failed(self, node: ts.Node) -> bool:
        return any(start <= node.start_byte < end for start, end in self.failed)

    @contextmanager
    def definition(self, node: ts.Node, name: str = "") -> Iterator[None]:
        """Analyze one definition; on an exception drop the entities it added and record why."""
        mark = len(self.entities)
        try:
            yield
        except Exception as exc:  # any analyzer bug; RecursionError included
            self.fail(node, exc, mark, name)

    def fail(self, node: ts.Node, exc: Exception, mark: int, name: str = "") -> None:
        """Record a failed definition and drop what it added after ``mark`` (for hot loops
        that catch the exception themselves rather than enter ``definition`` per node)."""
        del self.entities[mark:]
        self.failed.append((node.start_byte, node.end_byte))
        label = name or tsu.text(node.child_by_field_name("name")) or node.type
        self.problems.append(
            Problem(
                f"{DEFINITION_FAILURE}: {label}: {type(exc).__name__}: {exc}",
                tsu.span(node),
                (label,),
            )
        )

    @contextmanager
    def phase(self, what: str) -> Iterator[None]:
        """Run one phase after the definitions (calls, resolution); on an exception keep the file."""
        try:
            yield
        except Exception as exc:  # any analyzer bug
            self.problems.append(Problem(f"{PHASE_FAILURE}: {what}: {type(exc).__name__}: {exc}"))

    def finish(self, analysis: FileAnalysis) -> FileAnalysis:
        """The analysis with the failures recorded and no edge left from a dropped entity."""
        if not self.problems:
            return analysis
        keys = {entity.key for entity in analysis.entities}
        analysis.references = [r for r in analysis.references if r.source in keys]
        for entity in analysis.entities:
            if entity.parent is not None and entity.parent not in keys:
                entity.parent = ""  # its container was dropped: the file holds it
        analysis.problems = [*analysis.problems, *self.problems]
        return analysis


def file_failure(file_node: Entity, exc: BaseException) -> FileAnalysis:
    """What is left when the file itself could not be analyzed: its node and the reason."""
    return FileAnalysis([file_node], [], [Problem(f"{FILE_FAILURE}: {type(exc).__name__}: {exc}")])
