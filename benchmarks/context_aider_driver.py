"""Aider's repo map as a context baseline: run by the aider venv's python, never imported.

Reads a JSON job file and writes a JSON result file (aider's spinner writes to stdout, so
stdout is not the channel). No LLM is called: RepoMap only ranks tags and renders a map.

    <aider-venv>/bin/python context_aider_driver.py IN.json OUT.json

IN: {"root": dir, "files": [rel paths], "encoding": "o200k_base", "jobs": [...]} where a job
is {"kind": "map", "chat": [rel], "idents": [...], "budgets": [...]} (the map text per budget,
as aider builds it for a chat with those files and mentioned identifiers) or
{"kind": "rank", "text": "..."} (the ranked files and definitions for a message, with the
mentioned identifiers and file names aider derives from its words).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import bpe_openai
from aider.repomap import RepoMap


class QuietIO:
    """The slice of aider's InputOutput that RepoMap uses."""

    def tool_output(self, *args: Any, **kwargs: Any) -> None: ...

    def tool_warning(self, *args: Any, **kwargs: Any) -> None: ...

    def tool_error(self, *args: Any, **kwargs: Any) -> None: ...

    def read_text(self, filename: str, silent: bool = False) -> str | None:
        try:
            return Path(filename).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None


class Model:
    """Aider asks its model for token counts; this one counts with the benchmark's encoding."""

    def __init__(self, encoding: str) -> None:
        self._bpe = bpe_openai.get_encoding(encoding)

    def token_count(self, text: str) -> int:
        return len(self._bpe.encode_ordinary(text))


def memoize_ranking(repo_map: RepoMap) -> None:
    """The PageRank over tags depends on the chat files and mentions, not on the budget;
    computing it once per job instead of per budget changes no result, only the run time."""
    original = repo_map.get_ranked_tags
    cache: dict[tuple[Any, ...], list[Any]] = {}

    def ranked(
        chat_fnames: Any, other_fnames: Any, mentioned_fnames: Any, mentioned_idents: Any, progress: Any = None
    ) -> list[Any]:
        key = (tuple(sorted(chat_fnames)), frozenset(mentioned_fnames or ()), frozenset(mentioned_idents or ()))
        if key not in cache:
            cache.clear()
            cache[key] = original(chat_fnames, other_fnames, mentioned_fnames, mentioned_idents, progress)
        return cache[key]

    repo_map.get_ranked_tags = ranked  # type: ignore[method-assign]


def filename_mentions(idents: set[str], files: list[str]) -> set[str]:
    """Aider's Coder.get_ident_filename_matches: files whose stem (5+ chars) is a mentioned word."""
    stems: dict[str, set[str]] = {}
    for rel in files:
        stem = Path(rel).stem.lower()
        if len(stem) >= 5:
            stems.setdefault(stem, set()).add(rel)
    out: set[str] = set()
    for ident in idents:
        if len(ident) >= 5:
            out |= stems.get(ident.lower(), set())
    return out


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    root = spec["root"]
    os.chdir(root)
    files = list(spec["files"])
    absolute = [os.path.join(root, rel) for rel in files]
    repo_map = RepoMap(map_tokens=1024, root=root, main_model=Model(spec["encoding"]), io=QuietIO(), refresh="always")
    memoize_ranking(repo_map)
    results: list[dict[str, Any]] = []
    for job in spec["jobs"]:
        started = time.perf_counter()
        if job["kind"] == "map":
            chat = [os.path.join(root, rel) for rel in job["chat"]]
            others = [path for path in absolute if path not in set(chat)]
            maps = {}
            for budget in job["budgets"]:
                repo_map.max_map_tokens = budget
                maps[str(budget)] = (
                    repo_map.get_repo_map(chat, others, set(), set(job["idents"]), force_refresh=True) or ""
                )
            results.append({"maps": maps, "seconds": time.perf_counter() - started})
        else:
            # What Coder.get_repo_map passes for a message: its words and the files they name.
            idents = set(re.split(r"\W+", job["text"])) - {""}
            tags = repo_map.get_ranked_tags([], absolute, filename_mentions(idents, files), idents)
            ranked_files: list[str] = []
            definitions: list[list[Any]] = []
            for tag in tags:
                if tag[0] not in ranked_files:
                    ranked_files.append(tag[0])
                if len(tag) > 1 and tag.kind == "def":
                    definitions.append([tag.rel_fname, tag.name, tag.line + 1])
            results.append(
                {"files": ranked_files, "definitions": definitions, "seconds": time.perf_counter() - started}
            )
    Path(sys.argv[2]).write_text(json.dumps(results))


if __name__ == "__main__":
    main()
