"""The Output Rendering Framework: format-agnostic producers, format-specific output.

    with OutputSession("project list", "json") as out:
        with out.table("Projects", ["name", "resources"]) as table:
            table.add_row({"name": "local/api", "resources": 2})
        out.status("1 project listed", level="ok")

See ``session`` for the producer API, ``render_data`` for the json/yaml envelope and
``formats`` for format resolution.
"""

import logging

from cleveragents.output.elements import (
    ColumnDef,
    Element,
    Level,
    StructuredOutput,
)
from cleveragents.output.failures import CANCELLED_EXIT_CODE
from cleveragents.output.formats import (
    AUTO,
    BUILTIN_FORMATS,
    available_formats,
    is_tty,
    register_format,
    resolve_format,
)
from cleveragents.output.handles import ElementClosedError
from cleveragents.output.render_data import envelope
from cleveragents.output.session import OutputSession

# Force-closed-handle warnings are for logs, never for the user's terminal.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = [
    "AUTO",
    "BUILTIN_FORMATS",
    "CANCELLED_EXIT_CODE",
    "ColumnDef",
    "Element",
    "ElementClosedError",
    "Level",
    "OutputSession",
    "StructuredOutput",
    "available_formats",
    "envelope",
    "is_tty",
    "register_format",
    "resolve_format",
]
