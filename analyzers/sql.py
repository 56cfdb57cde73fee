"""SQL scripts (``*.sql``): the analyzer plugin. The reading is in _sql_script.py, imported
on the first file: sqlglot takes ~60 ms to import, which every run that loads the
analyzers and meets no SQL would pay.

A file in a migrations layout (Flyway ``V2__x.sql``, ``0003_x.up.sql``, ``migrations/0004_x.sql``,
Diesel ``2020-01-01-000000_x/up.sql``) is also a ``uko-data:Migration``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from types import ModuleType

from cleveragents.indexing.model import Entity, FileAnalysis, Reference, RenderRequest, SourceFile
from cleveragents.vocabulary import uko_data

from . import _schemas as model

SCRIPT = uko_data.SchemaScript
MIGRATION = uko_data.Migration

_FLYWAY = re.compile(r"^(?P<kind>[VUR])(?P<version>\d[\d._]*)?__.*\.sql$", re.IGNORECASE)
_UP_DOWN = re.compile(r"^(?P<version>\d[\d._-]*)?[^.]*\.(?P<direction>up|down)\.sql$", re.IGNORECASE)
_NUMBERED = re.compile(r"^(?P<version>\d+)(?:[_\-.][^/]*)?\.sql$")
_MIGRATION_DIRS = frozenset({"migrations", "migration", "migrate", "db_migrations"})


def migration(path: str) -> tuple[str | None, str | None] | None:
    """(version, direction) when the path is a migration script, else None."""
    parts = PurePosixPath(path).parts
    if not parts:
        return None
    file = parts[-1]
    if found := _FLYWAY.match(file):
        version = (found.group("version") or "").replace("_", ".").strip(".") or None
        return version, {"V": "up", "U": "down"}.get(found.group("kind").upper())
    if file.lower() in ("up.sql", "down.sql") and len(parts) > 1:  # Diesel: <version>_<name>/up.sql
        folder = re.match(r"\d[\d-]*", parts[-2])
        return (folder.group().strip("-") if folder else None), file.lower()[:-4]
    if found := _UP_DOWN.match(file):
        version = found.group("version")
        return (version.strip("_-.") if version else None), found.group("direction").lower()
    if any(p.lower() in _MIGRATION_DIRS for p in parts[:-1]) and (found := _NUMBERED.match(file)):
        return found.group("version"), "up"
    return None


def script_reader() -> ModuleType:
    """The SQL reading module (sqlglot and the statement lexer)."""
    from . import _sql_script

    return _sql_script


class SqlAnalyzer:
    name = "sql"
    version = "1"

    def handles(self, path: str) -> bool:
        return path.lower().endswith(".sql")

    def file_types(self, path: str) -> tuple[str, ...]:
        return (SCRIPT, MIGRATION) if migration(path) else (SCRIPT,)

    def analyze(self, source: SourceFile) -> FileAnalysis:
        text = source.data.decode("utf-8", "surrogateescape")
        reader = script_reader()
        script = reader.read_script(text, source.path)
        file = Entity("", self.file_types(source.path), PurePosixPath(source.path).name)
        file.add(uko_data.sqlDialect, script.dialect or "generic")
        entities, references = model.build_entities(script.catalog, file)
        problems = list(script.problems)
        invalid = reader.first_invalid_utf8(source.data, script.positions)
        if invalid is not None:
            problems.insert(0, invalid)
        found = migration(source.path)
        if found is not None:
            references += self.migration(file, found, script.touched)
        return FileAnalysis(entities, references, problems)

    @staticmethod
    def migration(file: Entity, found: tuple[str | None, str | None], touched: list[str]) -> list[Reference]:
        version, direction = found
        if version:
            file.add(uko_data.migrationVersion, version)
        if direction:
            file.add(uko_data.migrationDirection, direction)
        refs = []
        for name in dict.fromkeys(model.clean(t).lower() for t in touched if t):
            bare = name.rsplit(".", 1)[-1]
            targets = ((name, model.CONFIDENCE),) + (((bare, model.CONFIDENCE - 0.2),) if bare != name else ())
            refs.append(Reference("", uko_data.migrationAlters, model.NAMESPACE, targets))
        return refs

    def render(self, request: RenderRequest) -> str:
        script = script_reader().read_script(request.content.decode("utf-8", "surrogateescape"), request.path)
        return model.render(script.catalog, request.key, request.level, request.depth)


ANALYZERS = [SqlAnalyzer()]
