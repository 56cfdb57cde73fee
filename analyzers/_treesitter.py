"""Tree-sitter plumbing shared by the built-in code analyzers (not a plugin itself).

Grammars come from the per-language wheels (tree-sitter-python, ...), which ship
compiled parsers: nothing is downloaded at run time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

import tree_sitter as ts

from cleveragents.indexing.model import Problem, Span


@cache
def parser(language_factory: Callable[[], object]) -> ts.Parser:
    """One parser per grammar per process (parsers are not shared across processes)."""
    return ts.Parser(ts.Language(language_factory()))


def parse(language_factory: Callable[[], object], data: bytes) -> ts.Tree:
    return parser(language_factory).parse(data)


def span(node: ts.Node) -> Span:
    (sl, sc), (el, ec) = node.start_point, node.end_point
    return Span(sl + 1, sc, el + 1, ec, node.start_byte, node.end_byte)


def text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def field_text(node: ts.Node, name: str) -> str:
    return text(node.child_by_field_name(name))


def walk(node: ts.Node) -> Iterator[ts.Node]:
    """Pre-order traversal without recursion (deep files must not hit the recursion limit)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def problems(tree: ts.Tree, definition: re.Pattern[str]) -> list[Problem]:
    """Each ERROR or MISSING region as a Problem, naming the definitions it swallowed.

    ``definition`` matches a definition keyword and captures its name (e.g.
    ``def (\\w+)``); what it finds inside an error region is reported as hidden.
    """
    if not tree.root_node.has_error:
        return []
    found: list[Problem] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_missing:
            found.append(Problem(f"missing {node.type}", span(node)))
        elif node.is_error:
            hidden = tuple(m.group(0) for m in definition.finditer(text(node)))
            found.append(Problem("syntax error", span(node), hidden))
        elif node.has_error:
            stack.extend(reversed(node.children))
    return found
