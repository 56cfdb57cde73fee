"""The TBox: ontology modules, their closure, term lookup, detail levels and consistency.

(Named ``tbox`` because ``cleveragents.ontology`` is the data folder of Turtle files.)
"""

from __future__ import annotations

from .closure import closure_pairs, superclasses, superproperties, tbox_closure
from .detail_levels import (
    Level,
    declared_depth_mismatches,
    effective_levels,
    max_depth,
    resolve_depth,
)
from .lookup import TermInfo, expand_term, show_term
from .modules import (
    OntologyModule,
    list_modules,
    load_ontology,
    load_shapes,
    module_by_prefix,
    module_of,
    ontology_ntriples,
    ontology_triples,
    shapes_ntriples,
    shapes_triples,
)

__all__ = [
    "Level",
    "OntologyModule",
    "TermInfo",
    "closure_pairs",
    "declared_depth_mismatches",
    "effective_levels",
    "expand_term",
    "list_modules",
    "load_ontology",
    "load_shapes",
    "max_depth",
    "module_by_prefix",
    "module_of",
    "ontology_ntriples",
    "ontology_triples",
    "resolve_depth",
    "shapes_ntriples",
    "shapes_triples",
    "show_term",
    "superclasses",
    "superproperties",
    "tbox_closure",
]
