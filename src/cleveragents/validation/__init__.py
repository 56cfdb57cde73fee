"""SHACL Core validation compiled to SPARQL over pyoxigraph, with pyshacl as the reference."""

from cleveragents.validation.compiler import CompiledShapes, compile_shapes
from cleveragents.validation.report import Violation, render_report
from cleveragents.validation.shapes import ShapeCompileError

__all__ = ["CompiledShapes", "ShapeCompileError", "Violation", "compile_shapes", "render_report"]
