"""CleverAgents KG: a knowledge-graph-first agent system on an embedded temporal RDF store."""

from pathlib import Path

__version__ = "0.1.0"

# In a source checkout the top-level folders (cli/, ontology/, shapes/, queries/,
# analyzers/, strategies/) are subpackages of cleveragents; a built wheel force-includes
# them instead (see pyproject.toml). Editable installs ignore hatch's source remapping.
_checkout = Path(__file__).resolve().parents[2]
if (_checkout / "pyproject.toml").is_file() and (_checkout / "cli" / "__init__.py").is_file():
    __path__.append(str(_checkout))
