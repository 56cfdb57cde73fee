"""The text an LLM receives: an assembly as markdown, grouped by file the way a developer
reads code.

Each file is one block: a header naming its path and the line ranges shown, then one
fenced block with the fragments in source order (a container before its members), the
lines between them elided and marked (``⋮ 40 lines``). Fragments that are no source
excerpt (history summaries, decisions) are plain blocks after the files. This is the one
rendering: the budget is counted on it, its hash is the assembly's hash, and the CLI, the
skill and the servers deliver it, so what is counted is what is delivered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cleveragents.context.model import ContextFragment

ELISION: Final = "⋮"
_LANGUAGES = {".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript"}
_LANGUAGES |= {".jsx": "jsx", ".mjs": "javascript", ".rs": "rust", ".java": "java", ".go": "go", ".md": "markdown"}
_LANGUAGES |= {".rst": "rst", ".sql": "sql", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}
_LANGUAGES |= {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby", ".tf": "hcl"}


def language(path: str | None) -> str:
    """The fence's language tag for a path ('' when unknown)."""
    if not path or "." not in path.rsplit("/", 1)[-1]:
        return ""
    return _LANGUAGES.get("." + path.rsplit(".", 1)[-1].lower(), "")


def is_source_excerpt(fragment: ContextFragment) -> bool:
    """Whether a fragment shows a file's content (grouped under its file), rather than
    text about it (a history summary) or a node without a file."""
    return bool(fragment.provenance.path) and not fragment.metadata.get("history")


def elision(lines: int) -> str:
    return f"{ELISION} {lines} line{'s' if lines != 1 else ''}"


def _ranges(fragments: Sequence[ContextFragment]) -> str:
    spans = [f.provenance.line_range for f in fragments if f.provenance.line_range]
    return ", ".join(f"L{a}" if a == b else f"L{a}-{b}" for a, b in spans)


def _source_order(fragment: ContextFragment) -> tuple[int, int, str]:
    start, end = fragment.provenance.line_range or (0, 0)
    return (start, -end, fragment.uko_node)


def as_in_file(text: str, column: int) -> str:
    """A member's text as it stands in its file: renderings start at the definition, so
    its first line gets back the indentation its source has (``column``), and a method
    shown under its class reads as a method."""
    return " " * column + text if column > 0 and text and not text[:1].isspace() else text


def file_block(path: str, fragments: Sequence[ContextFragment], label: str | None = None) -> str:
    """One file: its header and one fenced block of its fragments in source order, with
    the lines between them marked as elided."""
    ordered = sorted(fragments, key=_source_order)
    ranges = _ranges(ordered)
    header = f"### {label or path}" + (f" · {ranges}" if ranges else "")
    body: list[str] = []
    shown_to = 0  # the last source line shown so far
    for fragment in ordered:
        span = fragment.provenance.line_range
        if body:
            if span and span[0] > shown_to + 1 and shown_to:
                body.append(elision(span[0] - shown_to - 1))
            elif not (span and span[0] <= shown_to):  # a member of what is shown: no gap to mark
                body.append("")
        body.append(fragment.content.rstrip("\n"))
        if span:
            shown_to = max(shown_to, span[1])
    text = "\n".join(body)
    fence = "````" if "```" in text else "```"
    return f"{header}\n{fence}{language(path)}\n{text}\n{fence}"


def render(fragments: Sequence[ContextFragment], preamble: str | None = None) -> str:
    """The assembly as markdown: the preamble, each file's block (files in the order their
    first fragment comes), then the fragments that are not source excerpts."""
    groups: dict[tuple[str, str], list[ContextFragment]] = {}
    others: list[ContextFragment] = []
    for fragment in fragments:
        if is_source_excerpt(fragment):
            groups.setdefault((fragment.provenance.resource, fragment.provenance.path or ""), []).append(fragment)
        else:
            others.append(fragment)
    several = len({resource for resource, _ in groups}) > 1
    parts = [preamble.strip()] if preamble and preamble.strip() else []
    for (resource, path), group in groups.items():
        parts.append(file_block(path, group, f"{resource}:{path}" if several else None))
    parts += [f.content.strip() for f in others if f.content.strip()]
    return "\n\n".join(parts) + ("\n" if parts else "")


# What the packer charges for the markdown around a fragment, in tokens, before the exact
# count of the whole rendering: a file's header and fences, and a fragment's range in the
# header plus its elision mark. Generous, so the exact count seldom has to drop anything.
FILE_OVERHEAD_TOKENS: Final = 12
FRAGMENT_OVERHEAD_TOKENS: Final = 10
