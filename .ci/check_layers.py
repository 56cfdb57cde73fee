"""Check the import contract of pyproject.toml ([tool.importlinter], see ARCHITECTURE.md).

import-linter analyses a package directory, but ``cleveragents`` is assembled from
``src/cleveragents`` and the top-level folders the wheel force-includes (cli/, analyzers/,
strategies/; in a checkout ``cleveragents/__init__.py`` appends them to ``__path__``,
which grimp does not follow). So the package is copied into a temporary directory in the
wheel's layout and the contract is checked there.

    python .ci/check_layers.py [CHECKOUT]     # exit 0 when every contract is kept
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path


def assemble(checkout: Path, target: Path) -> Path:
    """Lay out ``cleveragents`` under ``target`` as the wheel does; returns the package dir."""
    package = target / "cleveragents"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(checkout / "src" / "cleveragents", package, ignore=ignore)
    config = tomllib.loads((checkout / "pyproject.toml").read_text())
    included = config["tool"]["hatch"]["build"]["targets"]["wheel"].get("force-include", {})
    for source, destination in included.items():
        folder = checkout / source
        if (folder / "__init__.py").is_file():  # Python packages only (not ontology/, queries/...)
            shutil.copytree(folder, target / destination, ignore=ignore)
    return package


def check(checkout: Path) -> int:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    with tempfile.TemporaryDirectory(prefix="layers-") as tmp:
        assemble(checkout, Path(tmp))
        env = {"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"}
        done = subprocess.run(
            [str(lint_imports), str(checkout / "pyproject.toml"), "--no-cache"],
            cwd=tmp,  # away from the checkout: only the assembled copy is importable
            env=env,
            text=True,
            capture_output=True,
        )
    # The banner is noise in CI logs; the contracts and any broken one are what matter.
    report = done.stdout[done.stdout.find("Contracts") :] if "Contracts" in done.stdout else done.stdout
    print(report.strip(), done.stderr.strip(), sep="\n" if done.stderr.strip() else "")
    return done.returncode


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
