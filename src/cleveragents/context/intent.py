"""Intent analysis of a context request (the "Analyze" of ARCE), for any strategy:
``analyze(request)`` gives an ``Intent`` with the paths, symbols (qualified, backticked,
called, CamelCase, snake_case), plain words and UKO types the request names, and the actor
pattern its purpose asks for (strategy, execution, estimation); ``expand`` turns a
``prefix:Local`` type into its IRI.

Regexes find candidates; the graph confirms them (``toolkit.resolve_focus``), so a word
that names nothing costs one VALUES row and no noise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cleveragents.context.model import ContextRequest
from cleveragents.terms import PREFIXES

_EXT = r"(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|md|rst|txt|toml|ya?ml|json|sql|cfg|ini|tf)"
PATH = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.{_EXT})(?![\w])")
QUALIFIED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
BACKTICKED = re.compile(r"`([^`\s]+)`")
CALL = re.compile(r"\b([A-Za-z_]\w*)\(\)")
CAMEL = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]\w*)\b")
# One capitalized word ("Session", but also "Returns" opening a sentence): a weak name.
CAPITALIZED = re.compile(r"\b([A-Z][a-z]{2,})\b")
SNAKE = re.compile(r"\b(_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+_*)\b")
WORD = re.compile(r"\b([a-z][a-z0-9]{2,})\b")
_STOP_TEXT = """the and for with that this from what where when which how why does into than then there their
they them these those are was were been being have has had not but all any can could should would will shall may
might must about over under also only just more most some such very each other its use used using like make code
file files function functions class classes method methods module modules find show explain change changes changed
work works handle handles called call calls return returns value values new get set add test tests who our your
you please need want"""
STOPWORDS = frozenset(_STOP_TEXT.split())

# Words of a request that name a UKO type (Layer 0 to 2; the graph's closure covers the rest).
TYPE_WORDS = {
    "class": "uko-oo:Class",
    "classes": "uko-oo:Class",
    "method": "uko-oo:Method",
    "methods": "uko-oo:Method",
    "function": "uko-code:Callable",
    "functions": "uko-code:Callable",
    "module": "uko-code:Module",
    "modules": "uko-code:Module",
    "package": "uko-code:Package",
    "test": "uko-code:TestCase",
    "tests": "uko-code:TestCase",
    "table": "uko-data:Table",
    "tables": "uko-data:Table",
    "section": "uko-doc:Section",
    "sections": "uko-doc:Section",
}

# Actor patterns of the spec (architecture.md, "Strategy: arce").
ACTOR_WORDS = {
    "strategy": ("strateg", "plan", "design", "architect", "overview"),
    "execution": ("execut", "implement", "fix", "edit", "write", "debug"),
    "estimation": ("estimat", "effort", "size", "complex", "cost", "risk"),
}


@dataclass
class Intent:
    paths: list[str] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)  # explicit: qualified, backticked, called, Camel, snake
    words: list[str] = field(default_factory=list)  # plain words that may name something
    uko_types: list[str] = field(default_factory=list)  # expanded type IRIs
    actor: str = ""  # "strategy", "execution", "estimation" or ""

    def keys(self) -> list[str]:
        """Every focus key to look up in the graph, strongest first, without repeats."""
        return list(dict.fromkeys([*self.paths, *self.symbols, *self.words]))


def expand(term: str) -> str:
    prefix, sep, local = term.partition(":")
    if sep and prefix in PREFIXES and not local.startswith("//"):
        return PREFIXES[prefix] + local
    return term


def analyze(request: ContextRequest) -> Intent:
    text = request.query or ""
    intent = Intent()
    intent.paths = _unique(m.group(1) for m in PATH.finditer(text))
    path_parts = {p for path in intent.paths for p in (path, path.rsplit("/", 1)[-1])}
    explicit: list[str] = [*request.entities]
    explicit += [m.group(1).strip("().") for m in BACKTICKED.finditer(text)]
    explicit += [m.group(1) for m in QUALIFIED.finditer(text) if m.group(1) not in path_parts]
    explicit += [m.group(1) for m in CALL.finditer(text)]
    explicit += [m.group(1) for m in CAMEL.finditer(text)]
    explicit += [m.group(1) for m in SNAKE.finditer(text)]
    intent.symbols = [s for s in _unique(explicit) if s not in path_parts and s.lower() not in STOPWORDS]
    taken = set(intent.symbols) | path_parts
    plain = [*(m.group(1) for m in CAPITALIZED.finditer(text)), *(m.group(1) for m in WORD.finditer(text))]
    intent.words = [w for w in _unique(plain) if w.lower() not in STOPWORDS and w not in taken]
    lowered = text.lower()
    words = set(re.findall(r"[a-z]+", lowered))
    types = [*request.uko_types, *(TYPE_WORDS[w] for w in sorted(words) if w in TYPE_WORDS)]
    intent.uko_types = _unique(expand(t) for t in types)
    purpose = (request.purpose or "").lower()
    intent.actor = next((a for a, stems in ACTOR_WORDS.items() if any(s in purpose for s in stems)), "")
    return intent


def _unique(items: object) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))  # type: ignore[attr-defined]
