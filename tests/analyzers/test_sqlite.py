"""The SQLite analyzer: a database file introspected into schema entities, problems and renderings."""

from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

import pytest

from cleveragents.analyzers import sqlite
from cleveragents.analyzers._schemas import LEVELS
from cleveragents.indexing.model import FileAnalysis, RenderRequest
from cleveragents.terms import UKO_DATA
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

SQLITE = sqlite.ANALYZERS[0]
D = UKO_DATA

SCHEMA = '''\
CREATE TABLE artist (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    born INTEGER DEFAULT 1900 CHECK (born > 1000)
);
CREATE TABLE album (
    id INTEGER PRIMARY KEY,
    artist_id INTEGER NOT NULL REFERENCES artist (id) ON DELETE CASCADE,
    title TEXT,
    label_id INTEGER REFERENCES label
);
CREATE TABLE track (
    album_id INTEGER NOT NULL,
    no INTEGER NOT NULL,
    title TEXT,
    PRIMARY KEY (album_id, no),
    FOREIGN KEY (album_id) REFERENCES album (id)
) WITHOUT ROWID;
CREATE TABLE play (
    album_id INTEGER,
    track_no INTEGER,
    at TEXT,
    FOREIGN KEY (album_id, track_no) REFERENCES track (album_id, no)
);
CREATE TABLE "odd ""name""" ("a b" BLOB);
CREATE INDEX album_title ON album (title);
CREATE UNIQUE INDEX album_artist_title ON album (artist_id, lower(title));
CREATE VIEW artist_albums AS SELECT a.name, b.title FROM artist a JOIN album b ON b.artist_id = a.id;
CREATE TRIGGER album_touch AFTER INSERT ON album BEGIN UPDATE artist SET name = name WHERE id = NEW.artist_id; END;
INSERT INTO artist (name, born) VALUES ('Ann', 1950), ('Bob', 1960), ('O''Neil', NULL);
INSERT INTO album (artist_id, title) VALUES (1, 'First'), (1, 'Second'), (2, 'Blob');
INSERT INTO "odd ""name""" VALUES (x'00ff');
'''


def build(path: Path, script: str = SCHEMA) -> bytes:
    connection = sqlite3.connect(path)
    connection.executescript(script)
    connection.commit()
    connection.close()
    return path.read_bytes()


@pytest.fixture(scope="module")
def music(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return build(tmp_path_factory.mktemp("db") / "music.db")


@pytest.fixture(scope="module")
def analysis(music: bytes) -> FileAnalysis:
    return analyze(SQLITE, "data/music.db", music)


def values(analysis: FileAnalysis, key: str, local: str) -> list[object]:
    return entity(analysis, key).values.get(D + local, [])


def links(analysis: FileAnalysis, key: str, local: str) -> list[str]:
    return [k for p, k in entity(analysis, key).links if p == D + local]


def render(data: bytes, key: str, level: str, path: str = "data/music.db") -> str:
    return SQLITE.render(RenderRequest(key, (), path, data, None, level, LEVELS.index(level)))


def test_database_tables_and_columns(analysis: FileAnalysis) -> None:
    assert analysis.problems == []
    assert entity(analysis, "").types == (D + "Database",) and entity(analysis, "").name == "music.db"
    tables = [e.key for e in analysis.entities if D + "Table" in e.types]
    assert tables == ["artist", "album", "track", "play", 'odd "name"']
    assert values(analysis, "artist", "rowEstimate") == [3]
    assert values(analysis, "track", "rowEstimate") == [0]
    assert entity(analysis, "album").symbols == (("sql", "album"),)
    assert values(analysis, "artist.id", "isPrimaryKey") == [True]
    assert values(analysis, "artist.name", "isNullable") == [False]
    assert values(analysis, "artist.born", "isNullable") == [True]
    assert values(analysis, "artist.born", "defaultValue") == ["1900"]
    assert values(analysis, "artist.born", "dataType") == ["INTEGER"]
    assert [values(analysis, f"track.{c}", "isPrimaryKey") for c in ("album_id", "no", "title")] == [
        [True],
        [True],
        [False],
    ]
    assert values(analysis, 'odd "name".a b', "dataType") == ["BLOB"]
    assert len({e.key for e in analysis.entities}) == len(analysis.entities)


def test_constraints_foreign_keys_and_indexes(analysis: FileAnalysis) -> None:
    assert values(analysis, "artist/pk", "constraintKind") == ["PRIMARY KEY"]
    assert links(analysis, "artist/unique(name)", "constrainsColumn") == ["artist.name"]  # from its autoindex
    assert values(analysis, "artist/check", "constraintKind") == ["CHECK"]  # from the stored DDL
    assert links(analysis, "artist/check", "constrainsColumn") == ["artist.born"]
    assert links(analysis, "track/pk", "constrainsColumn") == ["track.album_id", "track.no"]
    assert links(analysis, "album.artist_id", "foreignKeyTo") == ["artist.id"]
    assert links(analysis, "play.album_id", "foreignKeyTo") == ["track.album_id"]
    assert links(analysis, "play.track_no", "foreignKeyTo") == ["track.no"]
    assert entity(analysis, "play/fk(album_id,track_no)").types == (D + "ForeignKey", D + "Constraint")
    (label,) = [r for r in analysis.references if r.source == "album.label_id"]
    assert (label.predicate, label.namespace, label.targets) == (D + "foreignKeyTo", "sql", (("label", 0.9),))
    assert links(analysis, "album/album_title", "indexesColumn") == ["album.title"]
    assert links(analysis, "album/album_artist_title", "indexesColumn") == ["album.artist_id"]  # lower(title): none
    assert [r for r in analysis.references if r.predicate == D + "indexesColumn"] == []


def test_views_and_triggers(analysis: FileAnalysis) -> None:
    view = entity(analysis, "artist_albums")
    assert view.types == (D + "View",)
    assert view.values[D + "viewDefinition"] == [
        "SELECT a.name, b.title FROM artist a JOIN album b ON b.artist_id = a.id"
    ]
    assert links(analysis, "artist_albums", "viewReferences") == ["artist", "album"]
    assert [e.name for e in analysis.entities if e.parent == "artist_albums"] == ["name", "title"]
    assert values(analysis, "artist_albums.name", "isNullable") == []
    trigger = entity(analysis, "album/album_touch")
    assert trigger.types == (D + "Trigger",) and trigger.parent == "album"
    assert links(analysis, "album/album_touch", "triggerFires") == ["album"]


def test_graph(music: bytes) -> None:
    store = graph(SQLITE, "data/music.db", music)
    rows = select(store, "SELECT ?c WHERE { ?c uko-data:foreignKeyTo ?k . ?k uko:name 'id' } ORDER BY ?c")
    assert [r["c"] for r in rows] == [iri("data/music.db", "album.artist_id"), iri("data/music.db", "track.album_id")]
    count = select(store, "SELECT (COUNT(?c) AS ?n) WHERE { ?c a uko-data:Column }")
    assert count == [{"n": "16"}]  # 3 + 4 + 3 + 3 + 1 in tables, 2 in the view


def test_reads_a_private_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, music: bytes) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    original = tmp_path / "music.db"
    original.write_bytes(music)
    before = original.stat().st_mtime_ns
    found = analyze(SQLITE, "music.db", original.read_bytes())
    render(original.read_bytes(), "artist", "FULL_CATALOG")
    assert len(found.entities) > 10
    assert list(scratch.iterdir()) == []  # the temporary copy is gone
    assert original.read_bytes() == music and original.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["music.db", "scratch"]  # no journal, no -wal


def test_bad_files_are_problems(tmp_path: Path, music: bytes) -> None:
    cases = {
        "text.db": (b"hello, not a database", "not an SQLite 3 database (no 'SQLite format 3' header)"),
        "header.db": (b"SQLite format 3\x00", "cannot read the database schema: file is not a database"),
        "truncated.db": (music[:5000], "cannot read the database schema: database disk image is malformed"),
        "zeros.db": (music[:100] + bytes(8000), "cannot read the database schema: database disk image is malformed"),
    }
    for path, (data, message) in cases.items():
        found = analyze(SQLITE, path, data)
        assert [e.key for e in found.entities] == [""], path
        assert [p.message for p in found.problems] == [message], path
        assert render(data, "", "FULL_CATALOG", path) == f"database {path}"
        graph(SQLITE, path, data)
    empty = analyze(SQLITE, "empty.db", b"")  # SQLite opens an empty file as an empty database
    assert [e.key for e in empty.entities] == [""] and empty.problems == []


def test_renderings(music: bytes) -> None:
    out = {level: render(music, "", level) for level in LEVELS}
    assert out["SCHEMA_LISTING"] == "database music.db"
    assert "  table album" in out["TABLE_LISTING"] and "title" not in out["TABLE_LISTING"]
    assert "    artist_id" in out["COLUMN_LISTING"] and "INTEGER" not in out["COLUMN_LISTING"]
    assert "    artist_id INTEGER NOT NULL" in out["TYPED_COLUMNS"] and "1900" not in out["TYPED_COLUMNS"]
    assert "born INTEGER NULL DEFAULT 1900" in out["CONSTRAINTS"] and "CHECK (born > 1000)" in out["CONSTRAINTS"]
    assert "UNIQUE (name)" in out["CONSTRAINTS"] and "FOREIGN KEY" not in out["CONSTRAINTS"]
    assert "FOREIGN KEY (album_id, track_no) REFERENCES track (album_id, no)" in out["RELATIONSHIPS"]
    assert "referenced by album.artist_id" in out["RELATIONSHIPS"] and "(~3 rows)" not in out["RELATIONSHIPS"]
    assert "table artist (~3 rows)" in out["INDEXES_AND_STATS"]
    assert "UNIQUE INDEX album_artist_title ON album (artist_id, LOWER(title))" in out["INDEXES_AND_STATS"]
    assert out["DDL"].startswith("CREATE TABLE artist (\n    id INTEGER PRIMARY KEY,")
    assert "CREATE INDEX album_title ON album (title);" in out["DDL"] and "TRIGGER" not in out["DDL"]
    assert "CREATE TRIGGER album_touch AFTER INSERT ON album" in out["DDL_WITH_TRIGGERS"]
    assert "(3, 'O''Neil', NULL)" not in out["FULL_PROCEDURES"]
    samples = out["WITH_SAMPLE_DATA"]
    assert (
        "-- artist (first 3 rows): id, name, born\n(1, 'Ann', 1950)\n(2, 'Bob', 1960)\n(3, 'O''Neil', NULL)" in samples
    )
    assert "(X'00FF')" in samples and "('Ann', 'First')" in samples  # a blob; a view's rows
    assert "distinct" not in samples
    assert "-- artist: born: 2 distinct, 1 null, min 1950, max 1960" in out["FULL_CATALOG"]


def test_table_and_column_renderings(music: bytes) -> None:
    assert render(music, "album", "TABLE_LISTING") == "table album"
    ddl = render(music, "album", "DDL")
    assert ddl.startswith("CREATE TABLE album (") and "CREATE INDEX album_title ON album (title);" in ddl
    assert "CREATE TRIGGER" in render(music, "album", "DDL_WITH_TRIGGERS") and "CREATE TRIGGER" not in ddl
    assert "(1, 1, 'First', NULL)" in render(music, "album", "WITH_SAMPLE_DATA")
    assert "title: 3 distinct" in render(music, "album", "FULL_CATALOG")
    column = {level: render(music, "artist.born", level) for level in LEVELS}
    assert column["COLUMN_LISTING"] == "artist.born"
    assert column["TYPED_COLUMNS"] == "artist.born INTEGER NULL"
    assert column["CONSTRAINTS"] == "artist.born INTEGER NULL DEFAULT 1900\nCHECK (born > 1000)"
    assert column["DDL"].startswith("born INTEGER DEFAULT 1900 CHECK (born > 1000)")
    assert column["WITH_SAMPLE_DATA"].endswith("sample: 1950\nsample: 1960\nsample: NULL")
    assert column["FULL_CATALOG"].endswith("born: 2 distinct, 1 null, min 1950, max 1960")
    assert "referenced by album.artist_id" in render(music, "artist.id", "RELATIONSHIPS")
    assert render(music, "artist_albums", "DDL").startswith("CREATE VIEW artist_albums AS")


def test_queries_run_under_a_time_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endless = (
        "CREATE VIEW forever AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
        "SELECT x FROM n ORDER BY x;"
    )
    data = build(tmp_path / "endless.db", "CREATE TABLE t (a INTEGER);\n" + endless)
    monkeypatch.setattr(sqlite, "TIME_BUDGET", 0.5)
    started = time.monotonic()
    text = render(data, "forever", "WITH_SAMPLE_DATA", "endless.db")
    assert time.monotonic() - started < 5
    assert "-- forever: no sample (interrupted)" in text
    assert [e.key for e in analyze(SQLITE, "endless.db", data).entities] == ["", "t", "t.a", "forever", "forever.x"]


def test_the_budget_spares_the_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = (
        "CREATE TABLE big (n INTEGER);\n"
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000)\n"
        "INSERT INTO big SELECT x FROM c;\n"
        "CREATE TABLE later (id INTEGER PRIMARY KEY, big_n INTEGER REFERENCES big (n));\n"
    )
    data = build(tmp_path / "big.db", script)
    monkeypatch.setattr(sqlite, "TIME_BUDGET", 0.0)  # every long data query is cut at once
    found = analyze(SQLITE, "big.db", data)
    assert found.problems == []
    keys = ["", "big", "big.n", "later", "later.id", "later.big_n", "later/pk", "later/fk(big_n)"]
    assert [e.key for e in found.entities] == keys
    assert links(found, "later.big_n", "foreignKeyTo") == ["big.n"]
    catalog = render(data, "", "FULL_CATALOG", "big.db")
    assert "-- big (first 5 rows): n\n(1)\n(2)" in catalog  # quick queries finish
    assert "-- big: n:" not in catalog  # statistics over 10,000 rows do not
    assert "CREATE TABLE later" in catalog


def test_pyzipcode_corpus() -> None:
    path = corpus_dir("pyzipcode-3.0.1") / "pyzipcode" / "zipcodes.db"
    data = path.read_bytes()
    found = analyze(SQLITE, "pyzipcode/zipcodes.db", data)
    assert found.problems == []
    assert values(found, "ZipCodes", "rowEstimate") == [43191]
    columns = [e.name for e in found.entities if e.parent == "ZipCodes" and D + "Column" in e.types]
    assert columns == ["zip", "city", "state", "longitude", "latitude", "timezone", "dst"]
    assert [e.key for e in found.entities if D + "Index" in e.types] == [
        "ZipCodes/zip_index",
        "ZipCodes/city_index",
        "ZipCodes/state_index",
    ]
    stats = render(data, "ZipCodes.state", "FULL_CATALOG", "pyzipcode/zipcodes.db")
    assert "(in the first 10000 rows)" in stats


def test_handles() -> None:
    assert SQLITE.name == "sqlite"
    assert all(SQLITE.handles(p) for p in ("a.db", "b.sqlite", "c/d.SQLITE3"))
    assert not SQLITE.handles("e.sql") and not SQLITE.handles("db.py")
    assert SQLITE.file_types("a.db") == (D + "Database",)
