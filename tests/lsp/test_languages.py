"""Resource language discovery: the extension table, content analysis (shebangs, mode
lines, ambiguous headers) and counts over real corpora."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cleveragents.indexing.sources import IGNORED_DIRS
from cleveragents.lsp.languages import directory_languages, language_of, needs_content, resource_languages
from corpora.fetch import corpus_dir


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("stubs/mod.pyi", "python"),
        ("web/index.ts", "typescript"),
        ("web/App.tsx", "typescriptreact"),
        ("web/old.js", "javascript"),
        ("web/esm.MJS", "javascript"),
        ("web/View.jsx", "javascriptreact"),
        ("src/lib.rs", "rust"),
        ("cmd/main.go", "go"),
        ("src/Main.java", "java"),
        ("native/x.c", "c"),
        ("native/x.cpp", "cpp"),
        ("native/x.hpp", "cpp"),
        ("native/x.h", "c"),  # without content, a header is C
        ("docs/index.md", "markdown"),
        ("Dockerfile", "dockerfile"),
        ("sub/Makefile", "makefile"),
        ("notes.txt", None),
        ("LICENSE", None),
    ],
)
def test_by_name(path: str, language: str | None):
    assert language_of(path) == language


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#!/usr/bin/env python3\nprint(1)\n", "python"),
        (b"#!/usr/bin/python3.11 -u\n", "python"),
        (b"#!/usr/bin/env -S node --experimental-modules\n", "javascript"),
        (b"#!/usr/bin/env VAR=1 ts-node\n", "typescript"),
        (b"#! /bin/bash\nset -e\n", "shellscript"),
        (b"#!/bin/sh\n", "shellscript"),
        (b"#!/usr/bin/perl -w\n", "perl"),
        (b"#!/usr/bin/env ruby\n", "ruby"),
        (b"#!/usr/bin/env\n", None),
        (b"#!/usr/bin/awk -f\n", None),
        (b"# -*- coding: utf-8 -*-\n# -*- mode: python -*-\n", "python"),
        (b";; -*- mode: shell-script; coding: utf-8 -*-\n", "shellscript"),
        (b"// -*- c++ -*-\n", "cpp"),
        (b"# vim: set ft=ruby :\n", "ruby"),
        (b"# vim: set ft=nosuchlang :\n", None),
        (b"just some text\n", None),
        (b"\x7fELF\x02\x01\x01\x00", None),
    ],
)
def test_extensionless_files_by_content(head: bytes, language: str | None):
    assert needs_content("bin/tool")
    assert language_of("bin/tool", head) == language


def test_content_does_not_override_a_known_extension():
    assert not needs_content("x.py") and not needs_content("Dockerfile")
    assert language_of("x.py", b"#!/bin/bash\n") == "python"


@pytest.mark.parametrize(
    ("head", "language"),
    [
        (b"#ifndef X_H\n#define X_H\nint add(int a, int b);\n#endif\n", "c"),
        (b"/* license */\n#pragma once\nnamespace acme {\nclass Widget;\n}\n", "cpp"),
        (b"#include <vector>\nstd::vector<int> v();\n", "cpp"),
        (b"#import <Foundation/Foundation.h>\n@interface Widget : NSObject\n@end\n", "objective-c"),
    ],
)
def test_ambiguous_header(head: bytes, language: str):
    assert needs_content("include/x.h")
    assert language_of("include/x.h", head) == language


def test_resource_languages_reads_what_the_name_leaves_open(tmp_path: Path):
    files = {
        "a.py": "x = 1\n",
        "b.py": "y = 2\n",
        "bin/run": "#!/usr/bin/env python3\n",
        "bin/deploy": "#!/bin/bash\n",
        "bin/data": "no shebang\n",
        "lib.rs": "fn main() {}\n",
        "inc/w.h": "// " + "license " * 300 + "\nnamespace w { class W; }\n",  # telling line after 2 KB
        "README": "text\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    counts = resource_languages(tmp_path / rel for rel in files)
    assert counts == {"python": 3, "cpp": 1, "rust": 1, "shellscript": 1}
    assert list(counts) == ["python", "cpp", "rust", "shellscript"]  # most files first, then by id
    assert resource_languages([tmp_path / "missing-file"]) == {}


def _count_files(root: Path, suffixes: tuple[str, ...]) -> int:
    """Files with these suffixes under root, counted independently (os.walk, same skips)."""
    total = 0
    for _dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS]
        total += sum(1 for name in filenames if name.endswith(suffixes))
    return total


@pytest.mark.parametrize(
    ("corpus", "main", "suffixes"),
    [
        ("requests-2.31.0", "python", (".py",)),
        ("gojsonnet-0.22.0", "go", (".go",)),
        ("jpype1-1.5.2", "python", (".py", ".pyi")),
    ],
)
def test_discovery_on_real_corpora(corpus: str, main: str, suffixes: tuple[str, ...]):
    root = corpus_dir(corpus)
    counts = directory_languages(root)
    assert next(iter(counts)) == main
    assert counts[main] == _count_files(root, suffixes)


def test_discovery_on_a_mixed_corpus():
    """jpype: Java, C++ (whose headers start with a long license) and Python side by side."""
    root = corpus_dir("jpype1-1.5.2")
    counts = directory_languages(root)
    assert counts["java"] == _count_files(root, (".java",)) == 114
    # Every .h of this C++ project is recognized as C++, even those with only C-looking heads.
    assert counts["cpp"] == _count_files(root, (".cpp", ".h", ".hpp"))
    assert "c" not in counts


def test_discovery_on_typescript_with_jsx():
    root = corpus_dir("react-query-5.62.0")
    counts = directory_languages(root)
    assert counts["typescriptreact"] == _count_files(root, (".tsx",)) > 0
    assert counts["typescript"] == _count_files(root, (".ts", ".mts", ".cts"))
