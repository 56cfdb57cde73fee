"""SQLite database files (``*.sqlite``, ``*.sqlite3``, ``*.db``): the schema, introspected.

The bytes are written to a private temporary file opened read-only with ``immutable=1``,
so the user's file is never opened, locked or changed, and no journal is looked for.
Structure comes from ``sqlite_master`` and the ``table_info``, ``foreign_key_list``,
``index_list`` and ``index_info`` pragmas; what the pragmas do not tell (CHECK constraints,
a view's source tables, a trigger's timing, each column's DDL) is read from the stored
CREATE statements with the SQL analyzer's reader. Queries over the data (row counts, sample
rows, statistics) run under a time budget, so a huge table or a view over an endless
recursive CTE cannot stall indexing.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from cleveragents.indexing.model import Entity, FileAnalysis, Problem, RenderRequest, SourceFile
from cleveragents.vocabulary import uko_data

from . import _schemas as model
from .sql import script_reader

MAGIC = b"SQLite format 3\x00"
DATABASE = uko_data.Database
TIME_BUDGET = 5.0  # seconds for all queries of one analysis or rendering
STATISTICS_ROWS = 10_000  # value statistics (FULL_CATALOG) look at this many rows per table
VALUE_CHARS = 80  # a longer sample value is cut


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: object) -> str:
    """A sample value as an SQL literal, cut to VALUE_CHARS."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        text = "X'" + value[: VALUE_CHARS // 2].hex().upper() + "'"
        return text + ("..." if len(value) > VALUE_CHARS // 2 else "")
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    cut = text[:VALUE_CHARS] + ("..." if len(text) > VALUE_CHARS else "")
    return "'" + cut.replace("'", "''") + "'"


@contextmanager
def _connection(data: bytes) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a private copy of ``data``."""
    with tempfile.TemporaryDirectory(prefix="cleveragents-sqlite-") as folder:
        path = Path(folder) / "copy.sqlite"
        path.write_bytes(data)
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            connection.execute("PRAGMA trusted_schema = OFF")
            yield connection
        finally:
            connection.close()


class _Introspection:
    def __init__(self, connection: sqlite3.Connection, name: str, detail: bool) -> None:
        self.connection = connection
        self.detail = detail  # sample rows and value statistics (only renderings need them)
        self.catalog = model.Catalog(name, "database")
        self.problems: list[Problem] = []
        self.deadline = time.monotonic() + TIME_BUDGET

    def query(self, statement: str, *args: object) -> list[tuple[Any, ...]]:
        return self.connection.execute(statement, args).fetchall()

    def data(self, statement: str) -> list[tuple[Any, ...]] | str:
        """Rows of a query over the data (counts, samples, statistics), or why there are none: these run
        under the time budget, so a huge table or an endless view cannot stall indexing."""
        self.connection.set_progress_handler(lambda: int(time.monotonic() > self.deadline), 10_000)
        try:
            return self.connection.execute(statement).fetchall()
        except sqlite3.Error as exc:
            return str(exc)
        finally:
            self.connection.set_progress_handler(None, 0)

    def guarded(self, what: str, action: Callable[[], None]) -> None:
        """Run one object's introspection; a failure (corruption, time budget) is that object's Problem."""
        try:
            action()
        except sqlite3.Error as exc:
            self.problems.append(Problem(model.clean(f"{what}: {exc}")))

    def read(self) -> None:
        rows = self.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
        objects = [(str(t), str(n), str(tb), s if isinstance(s, str) else None) for t, n, tb, s in rows]
        for kind, name, _, text in objects:
            if kind in ("table", "view") and not name.startswith("sqlite_"):
                self.guarded(f"{kind} {name}", lambda k=kind, n=name, t=text: self.table(k, n, t))
        for kind, name, table, text in objects:
            if kind == "trigger" and text:
                self.trigger(name, table, text)
        for kind, name, _, text in objects:
            if text and not name.startswith("sqlite_autoindex"):
                self.catalog.ddl.append(("trigger" if kind == "trigger" else "ddl", text.rstrip().rstrip(";") + ";"))

    def stored(self, text: str | None) -> model.Table | None:
        """The table or view as its stored CREATE statement describes it."""
        if not text:
            return None
        script = script_reader().read(text, "sqlite")
        return script.catalog.tables[0] if script.catalog.tables else None

    def table(self, kind: str, name: str, text: str | None) -> None:
        parsed = self.stored(text)
        table = model.Table(name, view=kind == "view", ddl=[text.rstrip().rstrip(";") + ";"] if text else [])
        info = self.query(f"PRAGMA table_info({_quote(name)})")
        keys = sorted((int(pk), str(col)) for _, col, _, _, _, pk in info if pk)
        for _, col, declared, notnull, default, pk in info:
            column = model.Column(str(col), str(declared or ""))
            column.primary_key = bool(pk)
            column.nullable = None if table.view else not (notnull or pk)
            column.default = None if default is None else str(default)
            written = parsed.column(column.name) if parsed is not None else None
            if written is not None:
                column.definition, column.comment = written.definition, written.comment
            table.columns.append(column)
        if parsed is not None:
            table.query, table.sources = parsed.query, parsed.sources
        if not table.view:
            if keys:
                table.constraints.append(model.Constraint("PRIMARY KEY", [c for _, c in keys]))
            self.foreign_keys(table)
            self.indexes(table)
            if parsed is not None:
                table.constraints += [c for c in parsed.constraints if c.kind == "CHECK"]
            counted = self.data(f"SELECT count(*) FROM {_quote(name)}")
            table.row_estimate = int(counted[0][0]) if isinstance(counted, list) else None
        self.catalog.add(table)
        if self.detail:
            self.samples(table)

    def foreign_keys(self, table: model.Table) -> None:
        grouped: dict[int, model.Constraint] = {}
        for fk_id, _, target, source, to, *_ in self.query(f"PRAGMA foreign_key_list({_quote(table.name)})"):
            constraint = grouped.setdefault(fk_id, model.Constraint("FOREIGN KEY", [], ref_table=str(target)))
            constraint.columns.append(str(source))
            if to is not None:
                constraint.ref_columns.append(str(to))
        table.constraints += [grouped[k] for k in sorted(grouped, reverse=True)]  # SQLite numbers them last first

    def indexes(self, table: model.Table) -> None:
        statements = dict(
            self.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", table.name)
        )
        for _, name, unique, origin, *_ in reversed(self.query(f"PRAGMA index_list({_quote(table.name)})")):
            info = self.query(f"PRAGMA index_info({_quote(str(name))})")
            columns = [str(c) if c is not None else "(expression)" for _, _, c in info]
            if origin == "pk":
                continue
            if origin == "u":  # UNIQUE in the table definition: a constraint, backed by an automatic index
                table.constraints.append(model.Constraint("UNIQUE", columns))
                continue
            text = statements.get(name)
            definition = str(text).rstrip(";") + ";" if text else ""
            written = script_reader().read(definition, "sqlite").catalog.indexes if definition else []
            if written and len(written[0].columns) == len(columns):  # expressions as written, not '(expression)'
                columns = written[0].columns
            table.indexes.append(model.Index(str(name), table.name, columns, bool(unique), definition))

    def trigger(self, name: str, table: str, text: str) -> None:
        script = script_reader().read(text, "sqlite")
        timing = script.catalog.triggers[0].timing if script.catalog.triggers else ""
        self.catalog.triggers.append(model.Trigger(name, table, timing, text.rstrip().rstrip(";") + ";"))

    def samples(self, table: model.Table) -> None:
        """WITH_SAMPLE_DATA rows and FULL_CATALOG value statistics."""
        names = [c.name for c in table.columns]
        quoted = _quote(table.name)
        rows = self.data(f"SELECT * FROM {quoted} LIMIT {model.SAMPLE_ROWS}")
        if isinstance(rows, str):
            table.samples = [f"-- {table.qualified}: no sample ({rows})"]
            return
        table.samples = [f"-- {table.qualified} (first {len(rows)} rows): {', '.join(names)}"]
        table.samples += ["(" + ", ".join(_literal(v) for v in row) + ")" for row in rows]
        for position, column in enumerate(table.columns):
            column.samples = [_literal(row[position]) for row in rows if position < len(row)]
        if table.view:
            return
        for column in table.columns:
            found = self.data(
                f"SELECT count(DISTINCT v), sum(v IS NULL), min(v), max(v) "
                f"FROM (SELECT {_quote(column.name)} AS v FROM {quoted} LIMIT {STATISTICS_ROWS})"
            )
            if isinstance(found, str):
                continue
            distinct, nulls, low, high = found[0]
            line = f"{column.name}: {distinct} distinct, {nulls or 0} null, min {_literal(low)}, max {_literal(high)}"
            if (table.row_estimate or 0) > STATISTICS_ROWS:
                line += f" (in the first {STATISTICS_ROWS} rows)"
            column.statistics = [line]
            table.statistics.append(line)


def introspect(data: bytes, name: str, detail: bool = False) -> tuple[model.Catalog, list[Problem]]:
    """The database's catalog and what could not be read; never raises."""
    if data and not data.startswith(MAGIC):
        return model.Catalog(name, "database"), [Problem("not an SQLite 3 database (no 'SQLite format 3' header)")]
    try:
        with _connection(data) as connection:
            found = _Introspection(connection, name, detail)
            found.guarded("cannot read the database schema", found.read)
            return found.catalog, found.problems
    except (sqlite3.Error, OSError) as exc:
        return model.Catalog(name, "database"), [Problem(model.clean(f"cannot open the database: {exc}"))]


class SqliteAnalyzer:
    name = "sqlite"
    version = "1"

    def handles(self, path: str) -> bool:
        return path.lower().endswith((".sqlite", ".sqlite3", ".db"))

    def file_types(self, path: str) -> tuple[str, ...]:
        return (DATABASE,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        name = PurePosixPath(source.path).name
        catalog, problems = introspect(source.data, name)
        entities, references = model.build_entities(catalog, Entity("", (DATABASE,), name))
        return FileAnalysis(entities, references, problems)

    def render(self, request: RenderRequest) -> str:
        depth = model.level_depth(request.level, request.depth)
        catalog, _ = introspect(request.content, PurePosixPath(request.path).name, detail=depth >= model.SAMPLES)
        return model.render(catalog, request.key, request.level, request.depth)


ANALYZERS = [SqliteAnalyzer()]
