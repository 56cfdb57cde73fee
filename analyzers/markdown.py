"""Markdown documents (CommonMark with tables, footnotes and front matter) as uko-doc: nodes.

markdown-it-py parses; this module turns its block tokens into the shared ``Block``s of
``_documents`` (which builds sections, keys, links, keywords and renders).
"""

from __future__ import annotations

import re
from collections import Counter

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from ._documents import Block, DocumentAnalyzer, Parsed, code_name

# markdown-it stops nesting at this token depth and drops what is inside; real documents
# stay far below it (a list six deep is about 13), so reaching it means content was lost.
MAX_NESTING = 40

_PARSER = (
    MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).use(front_matter_plugin).use(footnote_plugin).enable("table")
)
_TITLE = re.compile(r"^title\s*[:=]\s*(.*?)\s*$", re.MULTILINE)
_ATTRIBUTION = re.compile(r"^\s*(?:--|—|―|-)\s*(\S.*)$")
_BLOCK_KINDS = {
    "paragraph_open": "paragraph",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "table_open": "table",
    "blockquote_open": "quote",
}


class MarkdownAnalyzer(DocumentAnalyzer):
    name = "markdown"
    version = "1"
    extensions = (".md", ".markdown")

    def parse(self, path: str, text: str) -> Parsed:
        tokens = _PARSER.parse(text)
        parsed = Parsed([])
        slugs: Counter[str] = Counter()
        i = 0
        while i < len(tokens):
            token = tokens[i]
            end = _close(tokens, i)
            if token.type == "front_matter":
                title = _TITLE.search(token.content)
                parsed.title = title.group(1).strip("\"'") if title else ""
            elif token.type == "heading_open" and token.map:
                block = _block("heading", token, tokens[i:end])
                block.level = int(token.tag[1:])
                block.anchors = [_github_anchor(block.text, slugs)]
                parsed.blocks.append(block)
            elif token.type in _BLOCK_KINDS and token.map:
                parsed.blocks.append(_block(_BLOCK_KINDS[token.type], token, tokens[i:end]))
            elif token.type in ("fence", "code_block") and token.map:
                info = token.info.strip().split(maxsplit=1)
                language = info[0].strip("{}.").lower() if info else ""
                body = token.content[:-1] if token.content.endswith("\n") else token.content
                parsed.blocks.append(Block("code", token.map[0], token.map[1], body, language=language))
            elif token.type == "html_block" and token.map and token.content.lstrip().startswith("<!--"):
                body = token.content.strip().removeprefix("<!--").removesuffix("-->").strip()
                parsed.blocks.append(Block("comment", token.map[0], token.map[1], body))
            elif token.type == "footnote_block_open":
                parsed.blocks += _footnotes(tokens[i:end])
            i = end + 1 if token.nesting == 1 else i + 1
        deepest = max((t.level for t in tokens), default=0)
        if deepest >= MAX_NESTING - 1:
            line = next((t.map[0] for t in tokens if t.level == deepest and t.map), 0)
            parsed.issues.append(
                (f"nesting deeper than {MAX_NESTING} levels: the innermost content was not parsed", line)
            )
        return parsed


def _close(tokens: list[Token], i: int) -> int:
    """Index of the token closing ``tokens[i]`` (itself when it opens nothing)."""
    if tokens[i].nesting != 1:
        return i
    level = tokens[i].level
    for j in range(i + 1, len(tokens)):
        if tokens[j].level == level and tokens[j].nesting == -1:
            return j
    return len(tokens) - 1


def _block(kind: str, opener: Token, tokens: list[Token]) -> Block:
    assert opener.map is not None
    block = Block(kind, opener.map[0], opener.map[1])
    texts = [_inline(t, block) for t in tokens if t.type == "inline"]
    block.text = "\n".join(texts)
    if kind == "list":
        block.items = _items(tokens, opener.level + 1)
    elif kind == "table":
        block.items = _rows(tokens)
        block.text = "\n".join(block.items)
    elif kind == "quote" and "\n" in block.text:
        body, last = block.text.rsplit("\n", 1)
        attribution = _ATTRIBUTION.match(last)
        if attribution:
            block.text, block.caption = body, attribution.group(1)
    elif kind == "paragraph":
        children = [c for t in tokens if t.type == "inline" for c in t.children or ()]
        if any(c.type == "image" for c in children) and all(
            c.type in ("image", "softbreak") or (c.type == "text" and not c.content.strip()) for c in children
        ):
            block.kind, block.caption = "figure", block.text
    return block


def _inline(token: Token, block: Block) -> str:
    """Plain text of an inline token; its links, code names and footnote references go to ``block``."""
    line = (token.map[0] if token.map else block.start) + 1
    parts: list[str] = []
    for child in token.children or ():
        if child.type in ("text", "html_inline"):
            parts.append(child.content if child.type == "text" else "")
        elif child.type == "code_inline":
            parts.append(child.content)
            name = code_name(child.content)
            if name is not None:
                block.mentions.append(((name,), line))
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
            line += 1
        elif child.type == "link_open":
            href = child.attrs.get("href")
            if isinstance(href, str):
                block.hrefs.append((href, line))
        elif child.type == "image":
            parts.append("".join(c.content for c in child.children or ()))
        elif child.type == "footnote_ref":
            block.footnote_refs.append(str(child.meta.get("label", "")))
    return "".join(parts)


def _items(tokens: list[Token], level: int) -> list[str]:
    items: list[str] = []
    for token in tokens:
        if token.type == "list_item_open" and token.level == level:
            items.append("")
        elif token.type == "inline" and items:
            items[-1] += ("\n\n" if items[-1] else "") + token.content
    return items


def _rows(tokens: list[Token]) -> list[str]:
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(token.content)
    return [" | ".join(cells) for cells in rows]


def _footnotes(tokens: list[Token]) -> list[Block]:
    """One block per footnote definition (markdown-it gathers them at the end, without lines)."""
    found: list[Block] = []
    i = 0
    while i < len(tokens):
        if tokens[i].type == "footnote_open":
            end = _close(tokens, i)
            body = tokens[i + 1 : end]
            spans = [t.map for t in body if t.map]
            if spans:
                block = Block("footnote", min(m[0] for m in spans), max(m[1] for m in spans))
                block.label = str(tokens[i].meta.get("label", ""))
                block.text = "\n".join(_inline(t, block) for t in body if t.type == "inline")
                found.append(block)
            i = end
        i += 1
    return found


def _github_anchor(text: str, seen: Counter[str]) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens, "-1"... for repeats."""
    anchor = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
    count = seen[anchor]
    seen[anchor] += 1
    return f"{anchor}-{count}" if count else anchor


ANALYZERS = [MarkdownAnalyzer()]
