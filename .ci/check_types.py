"""Type-check the package with basedpyright at the level of pyproject.toml [tool.basedpyright].

Like the import contract (check_layers.py), the check runs over ``cleveragents`` laid out
as the wheel lays it out, so ``cleveragents.analyzers``, ``.strategies`` and ``.cli``
resolve; reported paths are mapped back to the checkout.

    python .ci/check_types.py [CHECKOUT]      # exit 0 when there is no error
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # .ci/ is not a package
from check_layers import assemble


def _in_copy(paths: list[str], checkout: Path) -> list[str]:
    """Checkout-relative paths (``src/cleveragents/graph``, ``cli``) as paths in the copy;
    a path that does not exist (a package another branch is still adding) is left out."""
    out = []
    for path in paths:
        if not (checkout / path).exists():
            continue
        inner = path.removeprefix("src/cleveragents").lstrip("/")
        out.append(f"cleveragents/{inner}".rstrip("/"))
    return out


def check(checkout: Path) -> int:
    settings = tomllib.loads((checkout / "pyproject.toml").read_text())["tool"]["basedpyright"]
    basedpyright = Path(sys.executable).with_name("basedpyright")
    with tempfile.TemporaryDirectory(prefix="types-") as tmp:
        package = assemble(checkout, Path(tmp))
        config = {
            **settings,
            "include": _in_copy(settings.get("include", ["src/cleveragents"]), checkout),
            "exclude": _in_copy(settings.get("exclude", []), checkout),
        }
        (Path(tmp) / "pyrightconfig.json").write_text(json.dumps(config))
        done = subprocess.run(
            [str(basedpyright), "--project", tmp, "--pythonpath", sys.executable],
            cwd=tmp,
            text=True,
            capture_output=True,
        )
    sources = {
        str(package / "cli"): str(checkout / "cli"),
        str(package / "analyzers"): str(checkout / "analyzers"),
        str(package / "strategies"): str(checkout / "strategies"),
        str(package): str(checkout / "src" / "cleveragents"),
    }
    out = done.stdout
    for copied, original in sources.items():  # longest first: the folders before the package
        out = out.replace(copied, original)
    print(out.strip(), done.stderr.strip(), sep="\n" if done.stderr.strip() else "")
    return done.returncode


if __name__ == "__main__":
    sys.exit(check(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]))
