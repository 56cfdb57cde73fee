"""Reading SQL scripts, for analyzers/sql.py (which imports this on first use): schemas,
tables, views, columns, constraints, indexes, triggers, routines.

Statements are split by a small lexer of our own (quotes, comments, dollar-quoted bodies,
``BEGIN ... END`` blocks of triggers and routines, MySQL ``DELIMITER``, T-SQL ``GO``,
``COPY ... FROM stdin`` data), so one statement sqlglot cannot read becomes a Problem with
its line range and the others are still read. The lexer takes its quote and comment
characters from sqlglot's tokenizer of the dialect.

Each statement is parsed with sqlglot in one dialect: the one a ``-- dialect: name``
comment or the path names (``postgres/``, ``schema.mysql.sql``...), else the first of
postgres, mysql, sqlite, tsql, generic with the fewest errors over the first statements.
Triggers and routines are read from their headers (sqlglot reads few procedural bodies),
INSERT and COPY statements are kept as sample data without being parsed.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import PurePosixPath

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError

from cleveragents.indexing.model import Problem, Span

from . import _schemas as model

DETECT_ORDER = ("postgres", "mysql", "sqlite", "tsql", "")  # "" is sqlglot's generic dialect
DETECT_STATEMENTS = 60  # statements parsed per candidate dialect when detecting
SAMPLE_CHARS = 2000  # an INSERT longer than this is cut in renderings


class _QuietCommandFallback(logging.Filter):
    """sqlglot warns for every statement it keeps as a raw Command; that is routine here."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in str(record.msg)


logging.getLogger("sqlglot").addFilter(_QuietCommandFallback())


# ── Lexing and statement splitting ─────────────────────────────────


@dataclass(frozen=True)
class _Lexicon:
    token: re.Pattern[str]  # one token: whitespace, comment, string, identifier, word, number, other
    run: re.Pattern[str]  # text that cannot end a plain statement: skipped in one match
    line_run: re.Pattern[str]  # the same, stopping at line ends (T-SQL batches end at a GO line)


@cache
def _lexicon(dialect: str) -> _Lexicon:
    """Patterns for the dialect's whitespace, comments, strings, identifiers and words."""
    tokenizer = Dialect.get_or_raise(dialect).tokenizer_class
    comments = []
    for comment in tokenizer.COMMENTS:
        if isinstance(comment, tuple):
            comments.append(f"{re.escape(comment[0])}.*?(?:{re.escape(comment[1])}|\\Z)")
        else:
            comments.append(f"{re.escape(comment)}[^\\n]*")
    backslash = "\\" in tokenizer.STRING_ESCAPES
    strings = [r"[eE]'(?:[^'\\]|''|\\.)*'"]  # PostgreSQL escape strings
    for quote in sorted((q for q in tokenizer.QUOTES if isinstance(q, str)), key=len, reverse=True):
        q = re.escape(quote)
        if len(quote) > 1:
            strings.append(f"{q}.*?{q}")
        elif backslash:
            strings.append(f"{q}(?:[^{q}\\\\]|{q}{q}|\\\\.)*{q}")
        else:
            strings.append(f"{q}(?:[^{q}]|{q}{q})*{q}")
    idents = []
    for ident in tokenizer.IDENTIFIERS:
        opener, closer = (ident, ident) if isinstance(ident, str) else ident
        o, c = re.escape(opener), re.escape(closer)
        idents.append(f"{o}(?:[^{c}]|{c}{c})*{c}")
    parts = [r"(?P<ws>\s+)", f"(?P<comment>{'|'.join(comments)})"]
    if "$" in getattr(tokenizer, "HEREDOC_STRINGS", ()):
        parts.append(r"(?P<heredoc>\$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?\$(?P=tag)\$)")
    parts += [
        f"(?P<string>{'|'.join(strings)})",
        f"(?P<ident>{'|'.join(idents)})",
        r"(?P<word>(?:[^\W\d]|[@#])[\w$@#]*)",
        r"(?P<number>\d+(?:\.\d+)?)",
        r"(?P<other>.)",  # an unterminated quote lands here, so lexing goes on after it
    ]
    # A run never starts a comment, a dollar quote, an E'' string or an unclosed quote: it stops
    # before their first character and the token pattern takes over.
    quoted = "|".join(strings[1:] + idents)
    plain = r"[^;'\"`\[$#/\-eE{}]|[eE](?!')"
    return _Lexicon(
        re.compile("|".join(parts), re.DOTALL),
        re.compile(f"(?:{plain.format('')}|{quoted})+", re.DOTALL),
        re.compile(f"(?:{plain.format(chr(92) + 'n')}|{quoted})+", re.DOTALL),
    )


def _lexer(dialect: str) -> re.Pattern[str]:
    return _lexicon(dialect).token


@dataclass(frozen=True)
class Statement:
    start: int  # first significant character
    body_end: int  # end of the statement proper (before its terminator)
    end: int  # after the terminator (and after COPY data)
    words: tuple[str, ...]  # leading words, upper-case
    unterminated: bool = False  # a quote that never closes (the lexer went on after it)


_BLOCK_KINDS = frozenset({"TRIGGER", "FUNCTION", "PROCEDURE", "PROC", "EVENT", "PACKAGE"})
_OBJECT_KINDS = _BLOCK_KINDS | {"TABLE", "VIEW", "INDEX", "SCHEMA", "SEQUENCE", "TYPE", "DATABASE", "DOMAIN"}
# BEGIN followed by these (or by no word: 'BEGIN;') starts a transaction, not a block.
_NOT_BLOCK_BEGIN = frozenset({"", "TRANSACTION", "TRAN", "WORK", "DISTRIBUTED", "DEFERRED", "IMMEDIATE", "EXCLUSIVE"})
_NOT_BLOCK_END = frozenset({"IF", "LOOP", "WHILE", "REPEAT", "FOR"})
_GO_LINE = re.compile(r"^[ \t]*GO[ \t]*\d*[ \t]*$", re.IGNORECASE | re.MULTILINE)
_COPY_END = re.compile(r"^\\\.[ \t]*\r?$", re.MULTILINE)
_COPY_STDIN = re.compile(r"\bFROM\s+STDIN\b", re.IGNORECASE)
_WORDS = 12


def _kind_word(words: tuple[str, ...] | list[str]) -> str | None:
    """The object kind a CREATE statement makes (TABLE, TRIGGER...), if its leading words say."""
    if not words or words[0] != "CREATE":
        return None
    return next((w for w in words[1:] if w in _OBJECT_KINDS), None)


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    return text.rfind("\n", 0, start) + 1, (text.find("\n", end) + 1 or len(text) + 1) - 1


def _alone_on_line(text: str, start: int, end: int) -> bool:
    line_start, line_end = _line_bounds(text, start, end)
    rest = text[end:line_end].strip()
    return not text[line_start:start].strip() and (not rest or rest.isdigit())


def _next_word(pattern: re.Pattern[str], text: str, pos: int) -> str:
    while pos < len(text):
        m = pattern.match(text, pos)
        if m is None or m.lastgroup not in ("ws", "comment"):
            return m.group().upper() if m is not None and m.lastgroup == "word" else ""
        pos = m.end()
    return ""


def split(text: str, dialect: str) -> Iterator[Statement]:
    """The script's statements in order; never raises, whatever the text."""
    pattern = _lexer(dialect)
    batches = _GO_LINE.search(text) is not None  # T-SQL: GO ends a batch, and a routine runs to it
    delimiter = ";"
    plain_at = -1  # a block statement that never closed is re-read as a plain one
    pos, n = 0, len(text)
    start, last, depth = -1, -1, 0
    words: list[str] = []
    open_quote = False
    plain = False  # the statement cannot be a block: skip ahead to what can end it
    skip = _lexicon(dialect).line_run if batches else _lexicon(dialect).run
    while True:
        while pos < n:
            if (
                plain
                and start >= 0
                and delimiter == ";"
                and not (batches and not text[text.rfind("\n", 0, pos) + 1 : pos].strip())  # leave GO to the lexer
                and (run := skip.match(text, pos))
            ):
                if run.group().strip():
                    last = pos + len(run.group().rstrip())
                pos = run.end()
                continue
            if delimiter != ";" and text.startswith(delimiter, pos):
                if start >= 0:
                    yield Statement(start, pos, pos + len(delimiter), tuple(words), open_quote)
                start, depth, words, pos, open_quote, plain = -1, 0, [], pos + len(delimiter), False, False
                continue
            m = pattern.match(text, pos)
            assert m is not None  # the pattern's last branch matches any character
            kind, s, e = m.lastgroup, m.start(), m.end()
            if delimiter != ";" and kind != "comment" and (cut := text.find(delimiter, s + 1, e)) > 0:
                e = cut  # 'END$$': the custom delimiter ends the word
            pos = e
            if kind in ("ws", "comment"):
                continue
            block = _kind_word(words) in _BLOCK_KINDS and start != plain_at
            if kind == "word":
                upper = m.group().upper()
                if start < 0 and upper == "DELIMITER" and not text[_line_bounds(text, s, e)[0] : s].strip():
                    line_end = _line_bounds(text, s, e)[1]
                    delimiter = (text[e:line_end].split() or [";"])[0]
                    pos = line_end
                    continue
                if upper == "GO" and batches and _alone_on_line(text, s, e):
                    if start >= 0:
                        yield Statement(start, last, last, tuple(words), open_quote)
                    start, depth, words, pos, open_quote, plain = -1, 0, [], _line_bounds(text, s, e)[1], False, False
                    continue
                if len(words) < _WORDS:
                    words.append(upper)
                    kind_word = _kind_word(words)
                    plain = kind_word not in _BLOCK_KINDS and (
                        words[0] != "CREATE" or kind_word is not None or len(words) == _WORDS
                    )
                if block and delimiter == ";" and not batches:
                    if upper == "CASE" or (upper == "BEGIN" and _next_word(pattern, text, e) not in _NOT_BLOCK_BEGIN):
                        depth += 1
                    elif upper == "END" and depth and _next_word(pattern, text, e) not in _NOT_BLOCK_END:
                        depth -= 1
            elif kind == "other" and m.group() in "'\"`":
                open_quote = True
            elif kind == "other" and m.group() == ";" and delimiter == ";":
                if start < 0:
                    continue
                if block and (depth > 0 or batches):
                    last = e
                    continue
                end = e
                if words and words[0] == "COPY" and _COPY_STDIN.search(text, start, s):
                    found = _COPY_END.search(text, e)
                    end = found.end() if found else n
                yield Statement(start, s, end, tuple(words), open_quote)
                start, depth, words, pos, open_quote, plain = -1, 0, [], end, False, False
                continue
            if start < 0:
                start = s
            last = e
        if start >= 0 and depth > 0 and start != plain_at:
            plain_at, pos, depth, words, open_quote, plain, start = start, start, 0, [], False, False, -1
            continue
        if start >= 0:
            yield Statement(start, last, last, tuple(words), open_quote)
        return


def elements(text: str, dialect: str, start: int, end: int) -> tuple[list[tuple[int, int]], int | None]:
    """The comma-separated items inside the first top-level parentheses of ``text[start:end]``, and
    where those parentheses close (None if they do not)."""
    pattern = _lexer(dialect)
    pos, depth = start, 0
    found: list[tuple[int, int]] = []
    item_start, item_end = -1, -1
    while pos < end:
        m = pattern.match(text, pos)
        assert m is not None
        pos = m.end()
        if m.lastgroup in ("ws", "comment"):
            continue
        char = m.group() if m.lastgroup == "other" else ""
        if char == "(":
            depth += 1
            if depth == 1:
                continue
        elif char == ")":
            depth -= 1
            if depth == 0:
                if item_start >= 0:
                    found.append((item_start, item_end))
                return found, pos
        if depth == 1 and char == ",":
            if item_start >= 0:
                found.append((item_start, item_end))
            item_start = -1
            continue
        if depth >= 1:
            if item_start < 0:
                item_start = m.start()
            item_end = m.end()
    return found, None


def _after_as(text: str, dialect: str, start: int, end: int) -> int | None:
    """Where a view's query starts: after the first ``AS`` outside parentheses."""
    pattern = _lexer(dialect)
    pos, depth = start, 0
    while pos < end:
        m = pattern.match(text, pos)
        assert m is not None
        pos = m.end()
        if m.lastgroup == "other":
            depth += {"(": 1, ")": -1}.get(m.group(), 0)
        elif m.lastgroup == "word" and depth == 0 and m.group().upper() == "AS":
            return pos
    return None


class Positions:
    """Character offsets of a decoded text to Spans (lines 1-based, columns and bytes of the raw data)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.bytes = [0]
        self.ascii: list[bool] = []  # a character is a byte: columns need no encoding (long one-line dumps)
        for i in range(1, len(self.starts) + 1):
            chunk = text[self.starts[i - 1] : self.starts[i] if i < len(self.starts) else len(text)]
            self.ascii.append(chunk.isascii())
            self.bytes.append(self.bytes[-1] + len(chunk.encode("utf-8", "surrogateescape")))

    def point(self, offset: int) -> tuple[int, int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        col = offset - start if self.ascii[line] else len(self.text[start:offset].encode("utf-8", "surrogateescape"))
        return line + 1, col, self.bytes[line] + col

    def span(self, start: int, end: int) -> Span:
        (sl, sc, sb), (el, ec, eb) = self.point(start), self.point(end)
        return Span(sl, sc, el, ec, sb, eb)


# ── Names ──────────────────────────────────────────────────────────

_PART = r'(?:"(?:[^"]|"")+"|`[^`]+`|\[[^\]]+\]|[\w$@#]+)'
_QNAME = rf"{_PART}(?:\s*\.\s*{_PART})*"
_DEFINER = r"(?:DEFINER\s*=\s*\S+(?:\s*@\s*\S+)?\s+)?"
_TRIGGER = re.compile(
    rf"^CREATE\s+(?:OR\s+(?:REPLACE|ALTER)\s+)?{_DEFINER}(?:CONSTRAINT\s+)?(?:TEMP(?:ORARY)?\s+)?TRIGGER\s+"
    rf"(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>{_QNAME})\s+(?P<timing>.*?)\bON\s+(?P<table>{_QNAME})",
    re.IGNORECASE | re.DOTALL,
)
_ROUTINE = re.compile(
    rf"^CREATE\s+(?:OR\s+(?:REPLACE|ALTER)\s+)?{_DEFINER}(?:(?:TEMP|TEMPORARY|AGGREGATE)\s+)?"
    rf"(?P<kind>FUNCTION|PROCEDURE|PROC)\s+(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>{_QNAME})",
    re.IGNORECASE,
)
_CREATE = re.compile(
    rf"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|UNLOGGED|MATERIALIZED|VIRTUAL|"
    rf"RECURSIVE|UNIQUE|CLUSTERED|NONCLUSTERED)\s+)*(?P<kind>TABLE|VIEW|SCHEMA|INDEX)\s+"
    rf"(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>{_QNAME})(?:\s+ON\s+(?:ONLY\s+)?(?P<table>{_QNAME}))?",
    re.IGNORECASE,
)
_DATA = re.compile(
    rf"^(?:(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE|OR\s+\w+)\s+)*(?:INTO\s+)?|COPY\s+)"
    rf"(?P<name>{_QNAME})",
    re.IGNORECASE,
)
_ROUTINE_BODY = frozenset({"AS", "IS", "BEGIN", "RETURN"})
# Words that end a column's DEFAULT expression, and its type (the next column constraint or option).
_AFTER_DEFAULT = frozenset(
    {"NOT", "NULL", "PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "CONSTRAINT", "COLLATE", "GENERATED", "ON"}
    | {"COMMENT", "AUTO_INCREMENT", "AUTOINCREMENT", "IDENTITY", "KEY", "AS"}
)
_AFTER_TYPE = _AFTER_DEFAULT | {"DEFAULT", "CHARACTER", "CHARSET"}


def unquote(name: str) -> str:
    """``"a"."b c"`` -> ``a.b c``: the qualified name with each part's quotes removed."""
    parts = re.findall(_PART, name)
    out = []
    for part in parts:
        if part[0] in '"`[':
            part = part[1:-1].replace('""', '"') if part[0] == '"' else part[1:-1]
        out.append(part)
    return ".".join(out)


def _table_name(node: exp.Expr | None) -> tuple[str | None, str]:
    """(schema, name) of an sqlglot table reference; a catalog-qualified schema is 'db.schema'."""
    if not isinstance(node, exp.Table):
        return None, node.name if isinstance(node, exp.Expr) else ""
    schema = ".".join(p for p in (node.catalog, node.db) if p)
    return schema or None, node.name


def _qualified(node: exp.Expr | None) -> str:
    schema, name = _table_name(node)
    return f"{schema}.{name}" if schema else name


def _names(items: list[exp.Expr] | None, dialect: str) -> list[str]:
    out = []
    for item in items or []:
        node = item
        while isinstance(node, exp.Ordered | exp.ColumnPrefix | exp.Paren):
            node = node.this
        if isinstance(node, exp.Identifier | exp.Column):
            out.append(node.name)
        elif isinstance(node, exp.Expr):
            out.append(node.sql(dialect=dialect))
    return out


# ── Reading a script into a Catalog ────────────────────────────────


@dataclass
class Script:
    catalog: model.Catalog
    dialect: str
    positions: Positions
    problems: list[Problem] = field(default_factory=list)
    errors: int = 0  # statements not understood (dialect detection minimizes this)
    touched: list[str] = field(default_factory=list)  # tables created, altered, indexed or dropped


class _NotUnderstood(Exception):
    """A statement sqlglot parsed into something that is not a statement, or kept as a raw command."""


class _Reader:
    """Applies statements, in order, to one Catalog; the statement being read is ``self.st``."""

    def __init__(self, text: str, dialect: str, name: str, positions: Positions) -> None:
        self.text = text
        self.dialect = dialect
        self.positions = positions
        self.script = Script(model.Catalog(name, "script", source=text), dialect, positions)
        self.samples: dict[str, int] = {}
        self.st = Statement(0, 0, 0, ())
        self.body = ""  # the statement without its terminator
        self.shown = ""  # the statement as renderings show it, ending in ';' whatever the delimiter was
        self.span = positions.span(0, 0)

    def statement(self, st: Statement) -> None:
        self.st, self.body = st, self.text[st.start : st.body_end]
        self.shown = self.body.rstrip() + ";"
        self.span = self.positions.span(st.start, st.end)
        if st.unterminated:  # whatever sqlglot makes of it, the statement is cut short or runs on
            self.problem("unterminated quoted string or identifier")
        try:
            if st.words and st.words[0] in ("INSERT", "REPLACE", "COPY"):
                self.data()
            elif _kind_word(st.words) in _BLOCK_KINDS:
                self.block()
            else:
                self.parsed()
        except RecursionError:
            self.problem("statement nested too deeply to read")
        except Exception as exc:  # sqlglot meets arbitrary text: one statement's trouble stays its own
            self.problem(f"cannot read statement: {type(exc).__name__}: {exc}".splitlines()[0])

    def problem(self, message: str, hides: bool = True) -> None:
        """A Problem over the statement's lines, naming what it defined if that is lost with it."""
        hidden: tuple[str, ...] = ()
        if not hides:
            pass
        elif match := _CREATE.match(self.body) or _ROUTINE.match(self.body):
            hidden = (f"{match.group('kind').lower()} {unquote(match.group('name'))}",)
        elif match := _TRIGGER.match(self.body):
            hidden = (f"trigger {unquote(match.group('name'))}",)
        self.script.problems.append(Problem(model.clean(message), self.span, tuple(model.clean(h) for h in hidden)))
        self.script.errors += 1

    def record(self, kind: str = "ddl") -> None:
        self.script.catalog.ddl.append((kind, self.shown))

    def data(self) -> None:
        """INSERT/COPY: kept (a few per table) as sample data, not parsed."""
        match = _DATA.match(self.body)
        if match is None:
            return
        name = unquote(match.group("name"))
        count = self.samples.get(name.lower(), 0)
        if count >= model.SAMPLE_ROWS:
            return
        self.samples[name.lower()] = count + 1
        whole = self.text[self.st.start : self.st.end]  # COPY's data lines follow its terminator
        sample = whole if len(whole) <= SAMPLE_CHARS else whole[:SAMPLE_CHARS] + " ..."
        self.script.catalog.ddl.append(("data", sample))
        table = self.script.catalog.find(name)
        if table is not None:
            table.samples.append(sample)

    def block(self) -> None:
        """Triggers and routines, read from their headers."""
        catalog = self.script.catalog
        if _kind_word(self.st.words) == "TRIGGER":
            found = _TRIGGER.match(self.body)
            if found is None:
                self.problem("CREATE TRIGGER without a recognizable name and ON table")
                return
            table = unquote(found.group("table"))
            timing = " ".join(found.group("timing").split())
            catalog.triggers.append(model.Trigger(unquote(found.group("name")), table, timing, self.shown, self.span))
            self.record("trigger")
            return
        self.record("routine")
        routine = _ROUTINE.match(self.body)
        if routine is None:  # EVENT, PACKAGE: kept as text only
            return
        kind = "PROCEDURE" if routine.group("kind").upper().startswith("PROC") else "FUNCTION"
        header_end = self.routine_body(self.st.start + routine.end(), self.st.body_end)
        signature = self.text[self.st.start : header_end].rstrip()
        catalog.routines.append(model.Routine(unquote(routine.group("name")), kind, signature, self.shown, self.span))

    def routine_body(self, start: int, end: int) -> int:
        """Where a routine's body begins: AS/IS/BEGIN/RETURN or a dollar-quoted string, outside parentheses."""
        pattern = _lexer(self.dialect)
        pos, depth = start, 0
        while pos < end:
            m = pattern.match(self.text, pos)
            assert m is not None
            if m.lastgroup == "other":
                depth += {"(": 1, ")": -1}.get(m.group(), 0)
            elif depth == 0 and (
                m.lastgroup == "heredoc" or (m.lastgroup == "word" and m.group().upper() in _ROUTINE_BODY)
            ):
                return m.start()
            pos = m.end()
        return end

    def parse(self, dialect: str, body: str | None = None) -> list[exp.Expr]:
        parsed = [e for e in sqlglot.parse(self.body if body is None else body, read=dialect) if e is not None]
        for expression in parsed:
            if isinstance(expression, exp.Condition | exp.Alias | exp.Identifier | exp.Var | exp.Tuple):
                raise _NotUnderstood("not a SQL statement")
        return parsed

    def parsed(self) -> None:
        words = self.st.words
        ddl = _kind_word(words) in ("TABLE", "VIEW", "INDEX", "SCHEMA") or words[:2] == ("ALTER", "TABLE")
        try:
            expressions = self.parse(self.dialect)
            if ddl and any(isinstance(e, exp.Command) for e in expressions):
                raise _NotUnderstood("kept as a raw command")
        except (SqlglotError, _NotUnderstood) as first:
            expressions = self.retry(_kind_word(words) == "TABLE") if ddl else []
            if not expressions:
                self.failed(first)
                return
            self.script.errors += 1  # read, but not in the script's dialect: detection prefers one that can
        for expression in expressions:
            self.apply(expression)

    def retry(self, table: bool) -> list[exp.Expr]:
        """DDL the script's dialect cannot read: in another dialect (mixed scripts), then for a table
        without the options after its column list (``WITHOUT ROWID``, ``ON [PRIMARY]``...)."""
        bodies: list[str | None] = [None]
        if table:
            close = elements(self.text, self.dialect, self.st.start, self.st.body_end)[1]
            if close is not None and close < self.st.body_end:
                bodies.append(self.text[self.st.start : close])
        for body in bodies:
            for dialect in DETECT_ORDER:
                if dialect == self.dialect and body is None:
                    continue
                try:
                    found = self.parse(dialect, body)
                except (SqlglotError, _NotUnderstood, RecursionError):
                    continue
                if found and not any(isinstance(e, exp.Command) for e in found):
                    return found
        return []

    def failed(self, error: Exception) -> None:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        if isinstance(error, ParseError) and error.errors:
            first = error.errors[0]
            line = self.span.start_line + int(first.get("line") or 1) - 1
            message = f"{first.get('description')} at line {line}"
        found = _CREATE.match(self.body)
        kind = found.group("kind").upper() if found else ""
        if found and kind in ("TABLE", "VIEW"):
            # The object exists even if its body could not be read: keep it, say what is missing.
            schema, name = _split_name(unquote(found.group("name")))
            self.add_table(model.Table(name, schema, view=kind == "VIEW", ddl=[self.shown], span=self.span))
            self.problem(f"cannot parse CREATE {kind} {name} ({message}); its columns are not indexed", hides=False)
        elif found and kind == "SCHEMA":
            self.schema(unquote(found.group("name")), self.span)
            self.record()
        else:
            self.problem(f"cannot parse statement: {message}")

    def schema(self, name: str, span: Span | None) -> None:
        schemas = self.script.catalog.schemas
        existing = next((s for s in schemas if s.lower() == name.lower()), None)
        if existing is None:
            schemas[name] = span
        elif span is not None and schemas[existing] is None:
            schemas[existing] = span

    def add_table(self, table: model.Table) -> None:
        if table.schema:
            self.schema(table.schema, None)
        self.script.catalog.add(table)
        self.record()
        self.script.touched.append(table.qualified)

    def apply(self, expression: exp.Expr) -> None:
        kind = (str(expression.args.get("kind") or "").upper().split() or [""])[-1]  # NONCLUSTERED INDEX
        if isinstance(expression, exp.Create):
            if kind in ("SCHEMA", "DATABASE"):
                target = expression.this
                parts = [target.catalog, target.db, target.name] if isinstance(target, exp.Table) else [target.name]
                self.schema(".".join(p for p in parts if p), self.span)
                self.record()
            elif kind == "TABLE":
                self.create_table(expression)
            elif kind == "VIEW":
                self.create_view(expression)
            elif kind == "INDEX":
                self.create_index(expression)
            else:
                self.record()
        elif isinstance(expression, exp.Alter) and kind == "TABLE":
            self.alter_table(expression)
        elif isinstance(expression, exp.Drop):
            self.drop(expression, kind)
        elif isinstance(expression, exp.Comment):
            self.comment(expression, kind)
        elif self.st.words and self.st.words[0] in ("CREATE", "ALTER", "DROP", "COMMENT", "RENAME"):
            self.record()

    def create_table(self, expression: exp.Create) -> None:
        target = expression.this
        items = target.expressions if isinstance(target, exp.Schema) else []
        schema, name = _table_name(target.this if isinstance(target, exp.Schema) else target)
        table = model.Table(name, schema, ddl=[self.shown], span=self.span)
        spans, _ = elements(self.text, self.dialect, self.st.start, self.st.body_end)
        if len(spans) != len(items):  # sqlglot and the lexer disagree: spans fall back to the statement's
            spans = [(-1, -1)] * len(items)
        for item, (start, end) in zip(items, spans, strict=True):
            item_span = self.positions.span(start, end) if start >= 0 else self.span
            self.element(table, item, self.text[start:end] if start >= 0 else "", item_span)
        query = expression.expression
        if isinstance(query, exp.Query) and not items:  # CREATE TABLE ... AS SELECT
            table.columns = [model.Column(n) for n in query.named_selects if n and n != "*"]
        _finish(table)
        self.add_table(table)

    def create_view(self, expression: exp.Create) -> None:
        target = expression.this
        schema, name = _table_name(target.this if isinstance(target, exp.Schema) else target)
        query = expression.expression
        view = model.Table(name, schema, view=True, ddl=[self.shown], span=self.span)
        start = _after_as(self.text, self.dialect, self.st.start, self.st.body_end)
        if start is not None:
            view.query = self.text[start : self.st.body_end].strip()
        elif isinstance(query, exp.Expr):
            view.query = query.sql(dialect=self.dialect)
        if isinstance(target, exp.Schema):
            view.columns = [model.Column(n, nullable=None) for n in _names(target.expressions, self.dialect)]
        elif isinstance(query, exp.Query):
            view.columns = [model.Column(n, nullable=None) for n in query.named_selects if n and n != "*"]
        if isinstance(query, exp.Expr):
            ctes = {c.alias_or_name.lower() for c in query.find_all(exp.CTE)}
            for node in query.find_all(exp.Table):
                if isinstance(node.this, exp.Identifier) and not (not node.db and node.name.lower() in ctes):
                    view.sources.append(_qualified(node))
        self.add_table(view)

    def create_index(self, expression: exp.Create) -> None:
        self.record()
        index = expression.this
        if not isinstance(index, exp.Index):
            return
        params = index.args.get("params")
        columns = _names(params.args.get("columns") if params else None, self.dialect)
        table_name = _qualified(index.args.get("table"))
        unique = bool(expression.args.get("unique"))
        made = model.Index(index.name, table_name, columns, unique, self.shown, self.span)
        table = self.script.catalog.find(table_name)
        (table.indexes if table is not None else self.script.catalog.indexes).append(made)
        self.script.touched.append(table_name)

    def alter_table(self, expression: exp.Alter) -> None:
        self.record()
        name = _qualified(expression.this)
        self.script.touched.append(name)
        table = self.script.catalog.find(name)
        if table is None:
            return  # defined in another file; a migration still records that it alters it
        table.ddl.append(self.shown)
        for action in expression.args.get("actions") or []:
            self.alter_action(table, action)
        _finish(table)

    def alter_action(self, table: model.Table, action: exp.Expr) -> None:
        if isinstance(action, exp.ColumnDef):
            self.element(table, action, "", self.span)
        elif isinstance(action, exp.ModifyColumn) and isinstance(action.this, exp.ColumnDef):
            table.columns = [c for c in table.columns if c.name.lower() != action.this.name.lower()]
            self.element(table, action.this, "", self.span)
        elif isinstance(action, exp.AddConstraint):
            for item in action.expressions:
                self.element(table, item, "", self.span)
        elif isinstance(action, exp.Drop):
            dropped = {n.lower() for n in _names(action.args.get("tables"), self.dialect)}
            if str(action.args.get("kind") or "").upper() == "CONSTRAINT":
                table.constraints = [c for c in table.constraints if (c.name or "").lower() not in dropped]
            else:
                table.columns = [c for c in table.columns if c.name.lower() not in dropped]
        elif isinstance(action, exp.AlterColumn):
            self.alter_column(table, action)
        elif isinstance(action, exp.RenameColumn):
            column = table.column(action.this.name if action.this else "")
            if column is not None and action.args.get("to") is not None:
                self.rename_column(table, column, action.args["to"].name)
        elif isinstance(action, exp.AlterRename):
            schema, name = _table_name(action.this)
            self.script.catalog.rename(table, name, schema or table.schema)

    def rename_column(self, table: model.Table, column: model.Column, new: str) -> None:
        """The column and every key, index and foreign key of this file that names it."""
        old = column.name.lower()
        column.name = new

        def renamed(names: list[str]) -> list[str]:
            return [new if n.lower() == old else n for n in names]

        catalog = self.script.catalog
        for constraint in table.constraints:
            constraint.columns = renamed(constraint.columns)
        for index in table.indexes + [i for i in catalog.indexes if catalog.find(i.table) is table]:
            index.columns = renamed(index.columns)
        for other in catalog.tables:
            for fk in other.constraints:
                if fk.kind == "FOREIGN KEY" and fk.ref_table and catalog.find(fk.ref_table) is table:
                    fk.ref_columns = renamed(fk.ref_columns)

    def alter_column(self, table: model.Table, action: exp.AlterColumn) -> None:
        column = table.column(action.name)
        if column is None:
            return
        if isinstance(action.args.get("dtype"), exp.DataType):
            column.data_type = action.args["dtype"].sql(dialect=self.dialect)
        if action.args.get("allow_null") is not None:
            column.nullable = bool(action.args["allow_null"])
        if isinstance(action.args.get("default"), exp.Expr):
            column.default = action.args["default"].sql(dialect=self.dialect)
        elif action.args.get("drop"):
            column.default = None

    def drop(self, expression: exp.Drop, kind: str) -> None:
        self.record()
        catalog = self.script.catalog
        names = [_qualified(t) for t in expression.args.get("tables") or [] if isinstance(t, exp.Table)]
        if kind in ("TABLE", "VIEW"):
            for name in names:
                self.script.touched.append(name)
                table = catalog.find(name)
                if table is not None:
                    catalog.remove(table)
        elif kind == "INDEX":
            gone = {n.rsplit(".", 1)[-1].lower() for n in names}
            for table in catalog.tables:
                table.indexes = [i for i in table.indexes if i.name.lower() not in gone]
            catalog.indexes = [i for i in catalog.indexes if i.name.lower() not in gone]

    def comment(self, expression: exp.Comment, kind: str) -> None:
        self.record()
        text = expression.expression.name if isinstance(expression.expression, exp.Literal) else None
        target = expression.this
        table = column = None
        if kind == "TABLE" and isinstance(target, exp.Table):
            table = self.script.catalog.find(_qualified(target))
            if table is not None:
                table.comment = text
        elif kind == "COLUMN" and isinstance(target, exp.Column):
            parts = [p.name for p in target.parts]
            table = self.script.catalog.find(".".join(parts[:-1]))
            column = table.column(parts[-1]) if table is not None else None
            if column is not None:
                column.comment = text
        if table is not None and (kind == "TABLE" or column is not None):
            table.ddl.append(self.shown)

    # ── Table elements: columns and table constraints ──

    def element(self, table: model.Table, item: exp.Expr, text: str, span: Span) -> None:
        if isinstance(item, exp.ColumnDef):
            self.column(table, item, text, span)
            return
        name = None
        parts: list[exp.Expr] = [item]
        if isinstance(item, exp.Constraint):
            name = item.name or None
            parts = list(item.expressions)
        clustered = next((p for p in parts if isinstance(p, exp.ClusteredColumnConstraint)), None)
        for part in parts:
            made = self.constraint(part, clustered, name, text, span)
            if isinstance(made, model.Constraint):
                table.constraints.append(made)
            elif isinstance(made, model.Index):
                made.table = table.qualified
                table.indexes.append(made)

    def constraint(
        self, part: exp.Expr, clustered: exp.Expr | None, name: str | None, text: str, span: Span
    ) -> model.Constraint | model.Index | None:
        d = self.dialect
        if isinstance(part, exp.PrimaryKey):
            return model.Constraint("PRIMARY KEY", _names(part.expressions, d), name, definition=text, span=span)
        if isinstance(part, exp.PrimaryKeyColumnConstraint):  # T-SQL: the columns sit in CLUSTERED (...)
            columns = _names(clustered.this if clustered is not None else None, d)
            return model.Constraint("PRIMARY KEY", columns, name, definition=text, span=span)
        if isinstance(part, exp.UniqueColumnConstraint):
            schema = part.this
            columns = _names(schema.expressions if isinstance(schema, exp.Schema) else None, d)
            own = schema.this.name if isinstance(schema, exp.Schema) and schema.this is not None else None
            return model.Constraint("UNIQUE", columns, name or own or None, definition=text, span=span)
        if isinstance(part, exp.CheckColumnConstraint):
            check = part.this.sql(dialect=d) if part.this is not None else ""
            columns = list(dict.fromkeys(c.name for c in part.find_all(exp.Column)))
            return model.Constraint("CHECK", columns, name, expression=check, definition=text, span=span)
        if isinstance(part, exp.ForeignKey):
            ref_table, ref_columns = self.reference(part.args.get("reference"))
            columns = _names(part.expressions, d)
            return model.Constraint("FOREIGN KEY", columns, name, ref_table, ref_columns, definition=text, span=span)
        if isinstance(part, exp.IndexColumnConstraint):
            unique = str(part.args.get("kind") or "").upper() == "UNIQUE"
            return model.Index(part.name or "index", "", _names(part.expressions, d), unique, text, span)
        return None

    def reference(self, reference: exp.Expr | None) -> tuple[str | None, list[str]]:
        if not isinstance(reference, exp.Reference):
            return None, []
        target = reference.this
        if isinstance(target, exp.Schema):
            return _qualified(target.this), _names(target.expressions, self.dialect)
        return _qualified(target), []

    def column(self, table: model.Table, item: exp.ColumnDef, text: str, span: Span) -> None:
        kind = item.args.get("kind")
        data_type = kind.sql(dialect=self.dialect) if isinstance(kind, exp.DataType) else ""
        column = model.Column(item.name, (self.as_written(text, None, _AFTER_TYPE) or data_type) if data_type else "")
        column.definition, column.span = text, span
        for wrapper in item.args.get("constraints") or []:
            part = wrapper.args.get("kind") if isinstance(wrapper, exp.ColumnConstraint) else wrapper
            name = (wrapper.name or None) if isinstance(wrapper, exp.ColumnConstraint) else None
            made: model.Constraint | None = None
            if isinstance(part, exp.NotNullColumnConstraint):
                column.nullable = bool(part.args.get("allow_null"))
            elif isinstance(part, exp.PrimaryKeyColumnConstraint):
                column.primary_key = True
                made = model.Constraint("PRIMARY KEY", [column.name], name)
            elif isinstance(part, exp.UniqueColumnConstraint):
                made = model.Constraint("UNIQUE", [column.name], name)
            elif isinstance(part, exp.CheckColumnConstraint) and part.this is not None:
                made = model.Constraint("CHECK", [column.name], name, expression=part.this.sql(dialect=self.dialect))
            elif isinstance(part, exp.Reference):
                ref_table, ref_columns = self.reference(part)
                made = model.Constraint("FOREIGN KEY", [column.name], name, ref_table, ref_columns)
            elif isinstance(part, exp.DefaultColumnConstraint) and part.this is not None:
                column.default = self.as_written(text, "DEFAULT", _AFTER_DEFAULT) or part.this.sql(dialect=self.dialect)
            elif isinstance(part, exp.CommentColumnConstraint) and part.this is not None:
                column.comment = part.this.name
            if made is not None:
                made.definition, made.span = text, span
                table.constraints.append(made)
        table.columns.append(column)

    def as_written(self, text: str, after: str | None, stops: frozenset[str]) -> str | None:
        """The clause of a column definition that follows the word ``after`` (or the column name when
        None), up to the next word of ``stops`` outside parentheses, as written: sqlglot rewrites types
        and defaults (INT(11) -> INT, now() -> CURRENT_TIMESTAMP)."""
        pattern = _lexer(self.dialect)
        pos, depth, start, end = 0, 0, -1, -1
        skip = 1 if after is None else -1  # units to pass before the clause starts
        while pos < len(text):
            m = pattern.match(text, pos)
            assert m is not None
            pos = m.end()
            if m.lastgroup in ("ws", "comment"):
                continue
            word = m.group().upper() if m.lastgroup in ("word", "ident") else ""
            if start < 0:
                if skip > 0:
                    skip -= 1
                    if skip == 0:
                        start = pos
                elif depth == 0 and word == after:
                    start = pos
            elif depth == 0 and word in stops and m.lastgroup == "word":
                break
            else:
                end = pos
            if m.lastgroup == "other":
                depth += {"(": 1, ")": -1}.get(m.group(), 0)
        return text[start:end].strip() if start >= 0 and end > start else None


def _split_name(qualified: str) -> tuple[str | None, str]:
    schema, _, name = qualified.rpartition(".")
    return schema or None, name


def _finish(table: model.Table) -> None:
    """Primary-key columns are flagged and NOT NULL whichever way the key was declared."""
    keys = {c.lower() for c in table.primary_key()}
    for column in table.columns:
        if column.name.lower() in keys:
            column.primary_key, column.nullable = True, False


# ── Dialect, migrations, the script as a whole ─────────────────────

_DIALECT_COMMENT = re.compile(r"^\s*(?:--|#|/\*)\s*dialect\s*[:=]\s*(\w+)", re.IGNORECASE | re.MULTILINE)
_PATH_DIALECTS = {
    "postgres": "postgres",
    "postgresql": "postgres",
    "pg": "postgres",
    "pgsql": "postgres",
    "psql": "postgres",
    "plpgsql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "sqlite3": "sqlite",
    "tsql": "tsql",
    "mssql": "tsql",
    "sqlserver": "tsql",
}


def dialect_hint(text: str, path: str) -> str | None:
    """The dialect a ``-- dialect: x`` comment (first lines) or the path names, if any."""
    found = _DIALECT_COMMENT.search(text[:2000])
    if found:
        name = found.group(1).lower()
        name = _PATH_DIALECTS.get(name, name)
        try:
            Dialect.get_or_raise(name)
            return name
        except ValueError:
            pass
    for token in re.split(r"[/._\-\s]+", path.lower()):
        if token in _PATH_DIALECTS:
            return _PATH_DIALECTS[token]
    return None


def _read(
    text: str, dialect: str, name: str, positions: Positions, limit: int | None = None, give_up: int | None = None
) -> Script:
    """Read the first ``limit`` statements (all by default), stopping once ``give_up`` errors are reached."""
    reader = _Reader(text, dialect, name, positions)
    for count, statement in enumerate(split(text, dialect)):
        if (limit is not None and count >= limit) or (give_up is not None and reader.script.errors >= give_up):
            break
        reader.statement(statement)
    return reader.script


def read(text: str, dialect: str, name: str = "") -> Script:
    """The catalog of SQL text in a known dialect (the SQLite analyzer reads stored DDL with it)."""
    return _read(text, dialect, name, Positions(text))


@lru_cache(maxsize=8)
def read_script(text: str, path: str) -> Script:
    """The script's catalog in its hinted or detected dialect.

    Cached: a file is analyzed, then rendered node by node and level by level; nobody changes a
    Script once read.
    """
    name = PurePosixPath(path).name
    positions = Positions(text)
    hint = dialect_hint(text, path)
    if hint is not None:
        return _read(text, hint, name, positions)
    best, fewest = DETECT_ORDER[0], None
    for dialect in DETECT_ORDER:
        # A later dialect wins only with strictly fewer errors: stop reading it once it cannot.
        errors = _read(text, dialect, name, positions, DETECT_STATEMENTS, fewest).errors
        if fewest is None or errors < fewest:
            best, fewest = dialect, errors
        if errors == 0:
            break
    return _read(text, best, name, positions)


def first_invalid_utf8(data: bytes, positions: Positions) -> Problem | None:
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        offset = len(data[: exc.start].decode("utf-8", "surrogateescape"))
        where = positions.span(offset, min(offset + 1, len(positions.text)))
        return Problem("not valid UTF-8; undecodable bytes are read as U+FFFD", where)
