"""Locate the top-level data folders (ontology/, shapes/, queries/) in any install mode.

In a source checkout they sit beside ``src/`` and ``cleveragents.__path__`` includes the
checkout root; in a built wheel they are force-included as ``cleveragents/<name>``. Both
cases are covered by looking for ``<name>`` under every entry of the package path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import cleveragents
from cleveragents.errors import ConfigurationError

DATA_FOLDERS: Final = ("ontology", "shapes", "queries")


def data_path(name: str) -> Path:
    """The directory of the top-level data folder ``name`` (one of DATA_FOLDERS)."""
    if name not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {name!r}; expected one of {DATA_FOLDERS}")
    for entry in cleveragents.__path__:
        candidate = Path(entry) / name
        if candidate.is_dir():
            return candidate
    raise ConfigurationError(
        f"data folder {name!r} not found",
        detail=f"searched {list(cleveragents.__path__)}",
        suggestions=["reinstall cleveragents; the wheel must include its data folders"],
    )
