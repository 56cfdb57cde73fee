"""Resource language discovery: file extension analysis first, then content analysis (shebang lines, editor mode lines)
for files without a known extension or with an ambiguous one.

Languages are LSP language identifiers (the ``languageId`` of ``textDocument/didOpen``),
so a discovered language can be matched against a registry entry's ``languages`` as it is.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePath

from cleveragents.indexing.sources import DirectorySnapshot

# How much of a file content analysis looks at: shebang and mode lines sit at the top;
# an ambiguous header's telling lines often come after a long license comment.
HEAD_BYTES = 1024
AMBIGUOUS_HEAD_BYTES = 16384

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".c": "c",
    ".h": "c",  # ambiguous (AMBIGUOUS): content analysis may make it cpp or objective-c
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".m": "objective-c",
    ".mm": "objective-cpp",
    ".cs": "csharp",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".vb": "vb",
    ".swift": "swift",
    ".dart": "dart",
    ".rb": "ruby",
    ".php": "php",
    ".pl": "perl",
    ".pm": "perl",
    ".raku": "raku",
    ".lua": "lua",
    ".r": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".zig": "zig",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".zsh": "shellscript",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".bat": "bat",
    ".cmd": "bat",
    ".sql": "sql",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".sass": "sass",
    ".less": "less",
    ".vue": "vue",
    ".svelte": "svelte",
    ".json": "json",
    ".jsonc": "jsonc",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".xml": "xml",
    ".xsl": "xsl",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "restructuredtext",
    ".tex": "latex",
    ".bib": "bibtex",
    ".proto": "proto",
    ".tf": "terraform",
    ".diff": "diff",
    ".patch": "diff",
}

AMBIGUOUS = frozenset({".h"})

# Whole file names that say the language (compared case-sensitively, as tools do).
FILENAMES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Containerfile": "dockerfile",
    "Makefile": "makefile",
    "GNUmakefile": "makefile",
    "makefile": "makefile",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Jenkinsfile": "groovy",
    "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark",
    ".bashrc": "shellscript",
    ".bash_profile": "shellscript",
    ".zshrc": "shellscript",
    ".profile": "shellscript",
}

# Interpreters named on a shebang line (after any version suffix is dropped).
INTERPRETERS: dict[str, str] = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "bun": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
    "sh": "shellscript",
    "bash": "shellscript",
    "dash": "shellscript",
    "zsh": "shellscript",
    "ksh": "shellscript",
    "ruby": "ruby",
    "perl": "perl",
    "raku": "raku",
    "php": "php",
    "lua": "lua",
    "rscript": "r",
    "julia": "julia",
    "elixir": "elixir",
    "escript": "erlang",
    "pwsh": "powershell",
    "groovy": "groovy",
    "scala": "scala",
    "swift": "swift",
    "kotlin": "kotlin",
    "make": "makefile",
}

# Emacs and vim mode names that differ from the LSP language id.
MODE_ALIASES: dict[str, str] = {
    "sh": "shellscript",
    "bash": "shellscript",
    "shell-script": "shellscript",
    "js": "javascript",
    "js2": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "objc": "objective-c",
    "py": "python",
    "rb": "ruby",
    "rust-mode": "rust",
    "make": "makefile",
}

_SHEBANG = re.compile(rb"#![ \t]*(\S+)([^\r\n]*)")
_VERSION_SUFFIX = re.compile(r"[\d.]+$")
_EMACS_LINE = re.compile(rb"-\*-(.*?)-\*-")
_VIM_MODE = re.compile(rb"\bvim?:.*?\b(?:ft|filetype)=([A-Za-z0-9+_-]+)")
_CPP_MARKERS = re.compile(
    rb"^\s*(?:class|namespace|template\s*<|using\s+namespace)\b|std::|#include\s*<[a-z_]+>\s*$", re.M
)
_OBJC_MARKERS = re.compile(rb"^\s*(?:@interface|@protocol|@end|#import)\b", re.M)


def language_of(path: str | PurePath, head: bytes | None = None) -> str | None:
    """The LSP language id of a file, from its name and, when the name does not settle it,
    from ``head`` (the first bytes of its content); None when nothing tells."""
    name = PurePath(path).name
    if name in FILENAMES:
        return FILENAMES[name]
    suffix = PurePath(name).suffix.lower()
    by_extension = EXTENSIONS.get(suffix)
    if by_extension is not None:
        if suffix in AMBIGUOUS and head:
            return _header_language(head)
        return by_extension
    return content_language(head) if head else None


def content_language(head: bytes) -> str | None:
    """The language a file's first bytes declare: a shebang line, else an Emacs or vim
    mode line in the first five lines."""
    shebang = _SHEBANG.match(head)
    if shebang:
        return _interpreter_language(shebang.group(1), shebang.group(2))
    for line in head.splitlines()[:5]:
        mode = _emacs_mode(line) or _vim_mode(line)
        if mode:
            word = mode.lower().removesuffix("-mode")
            language = MODE_ALIASES.get(word, word)
            return language if language in _KNOWN else None
    return None


def needs_content(path: str | PurePath) -> bool:
    """Whether the name alone leaves the language open (no known extension, or an ambiguous one)."""
    name = PurePath(path).name
    if name in FILENAMES:
        return False
    suffix = PurePath(name).suffix.lower()
    return suffix not in EXTENSIONS or suffix in AMBIGUOUS


def resource_languages(paths: Iterable[str | Path]) -> dict[str, int]:
    """How many files of each language there are among ``paths`` (files on disk; those the
    name does not settle are read for content analysis). Most frequent first, then by id."""
    counts: Counter[str] = Counter()
    for path in paths:
        language = language_of(path, _read_head(Path(path)) if needs_content(path) else None)
        if language is not None:
            counts[language] += 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def directory_languages(root: Path) -> dict[str, int]:
    """``resource_languages`` of a directory's files, skipping what indexing skips
    (VCS internals, dependency and cache folders, symlinks)."""
    listing, _ = DirectorySnapshot(root).listing()
    return resource_languages(root / rel for rel in listing)


def _read_head(path: Path) -> bytes | None:
    size = AMBIGUOUS_HEAD_BYTES if path.suffix.lower() in AMBIGUOUS else HEAD_BYTES
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return None


def _interpreter_language(program: bytes, rest: bytes) -> str | None:
    command = os.path.basename(program.decode("utf-8", "replace"))
    if command == "env":
        # "#!/usr/bin/env -S node --flag" or "#!/usr/bin/env VAR=1 python3": the first word
        # that is neither an option nor an assignment is the interpreter.
        words = [w for w in rest.decode("utf-8", "replace").split() if not w.startswith("-") and "=" not in w]
        if not words:
            return None
        command = os.path.basename(words[0])
    command = _VERSION_SUFFIX.sub("", command.lower()) or command.lower()
    return INTERPRETERS.get(command)


def _emacs_mode(line: bytes) -> str | None:
    """``-*- mode: python; coding: utf-8 -*-`` or the short ``-*- python -*-``."""
    found = _EMACS_LINE.search(line)
    if not found:
        return None
    body = found.group(1).decode("utf-8", "replace").strip()
    if ":" not in body:
        return body or None
    for item in body.split(";"):
        key, _, value = item.partition(":")
        if key.strip().lower() == "mode" and value.strip():
            return value.strip()
    return None


def _vim_mode(line: bytes) -> str | None:
    found = _VIM_MODE.search(line)
    return found.group(1).decode("ascii") if found else None


def _header_language(head: bytes) -> str:
    if _OBJC_MARKERS.search(head):
        return "objective-c"
    return "cpp" if _CPP_MARKERS.search(head) else "c"


_KNOWN = frozenset(EXTENSIONS.values()) | frozenset(FILENAMES.values()) | frozenset(INTERPRETERS.values())
