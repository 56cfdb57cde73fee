"""The SQL-script analyzer: DDL in several dialects to schema entities, references, problems, renderings."""

from __future__ import annotations

import re

import pytest

from cleveragents.analyzers import _sql_script, sql
from cleveragents.analyzers._schemas import LEVELS
from cleveragents.indexing.model import FileAnalysis, Reference, RenderRequest
from cleveragents.terms import UKO_DATA
from corpora.fetch import corpus_dir
from tests.analyzers.support import analyze, entity, graph, iri, select

SQL = sql.ANALYZERS[0]
D = UKO_DATA

POSTGRES = """\
-- Shop schema
CREATE SCHEMA shop;

CREATE TABLE shop.customers (
    id          bigserial PRIMARY KEY,
    email       varchar(255) NOT NULL UNIQUE,
    name        text,
    legacy_code char(4),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT email_has_at CHECK (position('@' in email) > 1)
);

CREATE TABLE shop.orders (
    id           bigserial,
    customer_id  bigint NOT NULL REFERENCES shop.customers (id) ON DELETE CASCADE,
    placed_on    date DEFAULT CURRENT_DATE,
    account_id   integer REFERENCES billing.accounts,
    PRIMARY KEY (id)
);

CREATE TABLE shop.order_lines (
    order_id  bigint NOT NULL,
    line_no   integer NOT NULL,
    sku       text NOT NULL,
    quantity  integer NOT NULL DEFAULT 1 CHECK (quantity > 0),
    PRIMARY KEY (order_id, line_no),
    FOREIGN KEY (order_id) REFERENCES shop.orders (id),
    FOREIGN KEY (sku) REFERENCES catalog.products (sku)
);

CREATE TABLE shop.broken (
    id integer PRIMARY KEY
    price numeric(10, 2)
);

CREATE TABLE shop.shipments (
    order_id  bigint,
    line_no   integer,
    CONSTRAINT shipments_line_fk FOREIGN KEY (order_id, line_no) REFERENCES shop.order_lines (order_id, line_no)
);

CREATE INDEX orders_customer_idx ON shop.orders (customer_id, placed_on DESC);
CREATE UNIQUE INDEX customers_lower_email ON shop.customers (lower(email));
CREATE INDEX lost_idx ON shop.orders (;

ALTER TABLE shop.customers ADD COLUMN phone varchar(32);
ALTER TABLE shop.orders ADD COLUMN total numeric(12, 2) NOT NULL DEFAULT 0,
    ADD CONSTRAINT orders_total_positive CHECK (total >= 0);
ALTER TABLE shop.customers ALTER COLUMN name SET NOT NULL;
ALTER TABLE shop.customers DROP COLUMN legacy_code;
ALTER TABLE shop.orders RENAME COLUMN placed_on TO placed_at;

CREATE VIEW shop.customer_totals AS
    SELECT c.id, c.email, sum(o.total) AS total
    FROM shop.customers c
    JOIN shop.orders o ON o.customer_id = c.id
    LEFT JOIN billing.invoices i ON i.order_id = o.id
    GROUP BY c.id, c.email;

CREATE FUNCTION shop.touch_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.placed_at := now();  -- a semicolon inside the body
    RETURN NEW;
END;
$$;

CREATE TRIGGER orders_touch BEFORE UPDATE ON shop.orders
    FOR EACH ROW EXECUTE FUNCTION shop.touch_order();

COMMENT ON COLUMN shop.customers.email IS 'login address';

INSERT INTO shop.customers (email, name) VALUES ('a@example.com', 'Ann; Smith');
"""

MYSQL = """\
DROP TABLE IF EXISTS `customers`;
CREATE TABLE `customers` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `name` varchar(100) NOT NULL DEFAULT '' COMMENT 'display name',
  `email` varchar(255) DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uq_email` (`email`),
  KEY `ix_name` (`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `order_items` (
  `order_id` int(11) NOT NULL,
  `line_no` int(11) NOT NULL,
  `customer_id` int(11) NOT NULL,
  `note` text,
  PRIMARY KEY (`order_id`, `line_no`),
  CONSTRAINT `fk_items_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE CASCADE
) ENGINE=InnoDB;

INSERT INTO `customers` VALUES (1,'Ann','ann@example.com'),(2,'Bob; the \\'builder\\'','bob@example.com');

DELIMITER $$
CREATE DEFINER=`root`@`localhost` PROCEDURE `customer_count`(OUT n INT)
BEGIN
  SELECT COUNT(*) INTO n FROM customers;
  IF n > 10 THEN SET n = 10; END IF;
END$$
CREATE TRIGGER `items_before_insert` BEFORE INSERT ON `order_items` FOR EACH ROW
BEGIN
  SET NEW.note = 'x;y';
END$$
DELIMITER ;

CREATE VIEW `customer_orders` AS SELECT c.name, i.order_id FROM customers c JOIN order_items i ON i.customer_id = c.id;
"""

SQLITE = """\
PRAGMA foreign_keys = ON;
BEGIN TRANSACTION;
CREATE TABLE IF NOT EXISTS "artist" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT,
  "name" TEXT NOT NULL COLLATE NOCASE
);
CREATE TABLE track (
  id INTEGER NOT NULL,
  artist_id INTEGER REFERENCES artist,
  title TEXT CHECK (length(title) > 0),
  PRIMARY KEY (id)
) WITHOUT ROWID;
CREATE INDEX track_artist ON track(artist_id);
CREATE TRIGGER track_touch AFTER UPDATE OF title ON track
BEGIN
  UPDATE artist SET name = name WHERE id = NEW.artist_id;
  SELECT CASE WHEN NEW.title = '' THEN RAISE(ABORT, 'empty') END;
END;
CREATE VIEW artist_tracks AS
  WITH t AS (SELECT * FROM track)
  SELECT a.name, t.title FROM artist a JOIN t ON t.artist_id = a.id;
COMMIT;
"""

TSQL = """\
SET ANSI_NULLS ON
GO
CREATE TABLE [dbo].[Departments] (
    [DeptId] INT IDENTITY(1,1) NOT NULL,
    [Name] NVARCHAR(50) NOT NULL,
    CONSTRAINT [PK_Departments] PRIMARY KEY CLUSTERED ([DeptId] ASC)
) ON [PRIMARY]
GO
CREATE PROCEDURE [dbo].[RaiseAll] @pct DECIMAL(5,2)
AS
    UPDATE [dbo].[Employees] SET [Salary] = [Salary] * (1 + @pct / 100);
    SELECT COUNT(*) FROM [dbo].[Employees];
GO
CREATE NONCLUSTERED INDEX [IX_Dept_Name] ON [dbo].[Departments] ([Name])
GO
"""


def values(analysis: FileAnalysis, key: str, local: str) -> list[object]:
    return entity(analysis, key).values.get(D + local, [])


def links(analysis: FileAnalysis, key: str, local: str) -> list[str]:
    return [k for p, k in entity(analysis, key).links if p == D + local]


def refs(analysis: FileAnalysis, key: str, local: str) -> list[Reference]:
    return [r for r in analysis.references if r.source == key and r.predicate == D + local]


def types(analysis: FileAnalysis, key: str) -> set[str]:
    return {t.removeprefix(D) for t in entity(analysis, key).types}


def line_of(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(start))


def render(path: str, source: str, key: str, level: str) -> str:
    node = entity(analyze(SQL, path, source), key)
    request = RenderRequest(key, node.types, path, source.encode(), node.span, level, LEVELS.index(level))
    return SQL.render(request)


@pytest.fixture(scope="module")
def shop() -> FileAnalysis:
    return analyze(SQL, "db/schema.sql", POSTGRES)


def test_file_node_schemas_tables_and_views(shop: FileAnalysis) -> None:
    assert types(shop, "") == {"SchemaScript"}
    assert values(shop, "", "sqlDialect") == ["postgres"]
    assert types(shop, "shop") == {"Schema"}
    assert entity(shop, "shop").span is not None and entity(shop, "shop").span.start_line == 2
    tables = [e.key for e in shop.entities if D + "Table" in e.types]
    assert tables == ["shop.customers", "shop.orders", "shop.order_lines", "shop.broken", "shop.shipments"]
    assert types(shop, "shop.customer_totals") == {"View"}
    assert entity(shop, "shop.orders").parent == "shop"
    assert entity(shop, "shop.orders.customer_id").parent == "shop.orders"
    assert entity(shop, "shop.orders").symbols == (("sql", "shop.orders"), ("sql", "orders"))
    assert ("sql", "orders.customer_id") in entity(shop, "shop.orders.customer_id").symbols
    assert len({e.key for e in shop.entities}) == len(shop.entities)


def test_columns_carry_type_nullability_key_and_default(shop: FileAnalysis) -> None:
    assert values(shop, "shop.customers.email", "dataType") == ["varchar(255)"]
    assert values(shop, "shop.customers.email", "isNullable") == [False]
    assert values(shop, "shop.customers.id", "isPrimaryKey") == [True]
    assert values(shop, "shop.customers.id", "isNullable") == [False]  # a primary key is NOT NULL
    assert values(shop, "shop.customers.created_at", "defaultValue") == ["now()"]  # as written
    assert values(shop, "shop.order_lines.quantity", "defaultValue") == ["1"]
    assert values(shop, "shop.orders.account_id", "isNullable") == [True]
    assert values(shop, "shop.orders.account_id", "isPrimaryKey") == [False]
    # A column's range is its definition inside the CREATE TABLE.
    span = entity(shop, "shop.customers.email").span
    assert span is not None and POSTGRES.splitlines()[span.start_line - 1].strip().startswith("email")


def test_composite_primary_key_and_constraints(shop: FileAnalysis) -> None:
    assert [values(shop, f"shop.order_lines.{c}", "isPrimaryKey") for c in ("order_id", "line_no", "sku")] == [
        [True],
        [True],
        [False],
    ]
    assert values(shop, "shop.order_lines/pk", "constraintKind") == ["PRIMARY KEY"]
    assert links(shop, "shop.order_lines/pk", "constrainsColumn") == [
        "shop.order_lines.order_id",
        "shop.order_lines.line_no",
    ]
    assert values(shop, "shop.customers/unique(email)", "constraintKind") == ["UNIQUE"]
    assert values(shop, "shop.customers/email_has_at", "constraintKind") == ["CHECK"]
    assert links(shop, "shop.customers/email_has_at", "constrainsColumn") == ["shop.customers.email"]
    assert links(shop, "shop.order_lines/check", "constrainsColumn") == ["shop.order_lines.quantity"]
    assert types(shop, "shop.shipments/shipments_line_fk") == {"ForeignKey", "Constraint"}


def test_foreign_keys_link_columns_in_the_file_and_reference_others(shop: FileAnalysis) -> None:
    assert links(shop, "shop.orders.customer_id", "foreignKeyTo") == ["shop.customers.id"]
    assert links(shop, "shop.order_lines.order_id", "foreignKeyTo") == ["shop.orders.id"]
    # Composite: column by column.
    assert links(shop, "shop.shipments.order_id", "foreignKeyTo") == ["shop.order_lines.order_id"]
    assert links(shop, "shop.shipments.line_no", "foreignKeyTo") == ["shop.order_lines.line_no"]
    # Elsewhere: by qualified column, then by table.column; a bare REFERENCES names the table.
    (sku,) = refs(shop, "shop.order_lines.sku", "foreignKeyTo")
    assert sku.namespace == "sql" and sku.targets == (("catalog.products.sku", 0.9), ("products.sku", 0.7))
    (account,) = refs(shop, "shop.orders.account_id", "foreignKeyTo")
    assert account.targets == (("billing.accounts", 0.9), ("accounts", 0.7))
    assert account.line == line_of(POSTGRES, "    account_id")


def test_view_definition_and_references(shop: FileAnalysis) -> None:
    view = entity(shop, "shop.customer_totals")
    assert view.values[D + "viewDefinition"][0].startswith("SELECT c.id, c.email, sum(o.total) AS total")
    assert links(shop, "shop.customer_totals", "viewReferences") == ["shop.customers", "shop.orders"]
    (invoices,) = refs(shop, "shop.customer_totals", "viewReferences")
    assert invoices.targets == (("billing.invoices", 0.9), ("invoices", 0.7))
    assert [e.name for e in shop.entities if e.parent == "shop.customer_totals"] == ["id", "email", "total"]
    assert values(shop, "shop.customer_totals.total", "isNullable") == []  # unknown for a view


def test_alter_table_changes_the_table_model(shop: FileAnalysis) -> None:
    assert values(shop, "shop.customers.phone", "dataType") == ["VARCHAR(32)"]
    assert values(shop, "shop.orders.total", "isNullable") == [False]
    assert values(shop, "shop.orders.total", "defaultValue") == ["0"]
    assert values(shop, "shop.orders/orders_total_positive", "constraintKind") == ["CHECK"]
    assert values(shop, "shop.customers.name", "isNullable") == [False]  # SET NOT NULL
    assert "shop.customers.legacy_code" not in {e.key for e in shop.entities}  # DROP COLUMN
    assert "shop.orders.placed_at" in {e.key for e in shop.entities}  # RENAME COLUMN
    span = entity(shop, "shop.customers.phone").span  # the ALTER's range, not the CREATE's
    assert span is not None and span.start_line == line_of(POSTGRES, "ALTER TABLE shop.customers ADD COLUMN phone")


def test_indexes_triggers_and_routines(shop: FileAnalysis) -> None:
    assert types(shop, "shop.orders/orders_customer_idx") == {"Index"}
    assert links(shop, "shop.orders/orders_customer_idx", "indexesColumn") == [
        "shop.orders.customer_id",
        "shop.orders.placed_at",  # renamed after the index was made
    ]
    assert links(shop, "shop.customers/customers_lower_email", "indexesColumn") == []  # an expression
    assert not refs(shop, "shop.customers/customers_lower_email", "indexesColumn")
    trigger = entity(shop, "shop.orders/orders_touch")
    assert types(shop, "shop.orders/orders_touch") == {"Trigger"} and trigger.parent == "shop.orders"
    assert links(shop, "shop.orders/orders_touch", "triggerFires") == ["shop.orders"]
    routine = entity(shop, "routine/shop.touch_order")
    assert types(shop, "routine/shop.touch_order") == {"StoredProcedure"} and routine.name == "touch_order"
    assert "a semicolon inside the body" in str(routine.values[D + "procedureBody"][0])
    assert routine.symbols == (("sql", "shop.touch_order"), ("sql", "touch_order"))


def test_a_broken_statement_is_a_problem_and_the_rest_is_read(shop: FileAnalysis) -> None:
    broken, lost = shop.problems
    start = line_of(POSTGRES, "CREATE TABLE shop.broken (")
    assert broken.span is not None and (broken.span.start_line, broken.span.end_line) == (start, start + 3)
    assert broken.message == (
        f"cannot parse CREATE TABLE broken (Expecting ) at line {start + 2}); its columns are not indexed"
    )
    assert [e.name for e in shop.entities if e.parent == "shop.broken"] == []  # kept, but empty
    assert lost.hidden == ("index lost_idx",)
    assert lost.span is not None and lost.span.start_line == line_of(POSTGRES, "CREATE INDEX lost_idx")
    store = graph(SQL, "db/schema.sql", POSTGRES)
    rows = select(store, f"SELECT ?n WHERE {{ <{iri('db/schema.sql')}> ca:parseErrorCount ?n }}")
    assert rows == [{"n": "2"}]


def test_graph_triples(shop: FileAnalysis) -> None:
    store = graph(SQL, "db/schema.sql", POSTGRES)
    rows = select(
        store,
        "SELECT ?name ?type ?null WHERE { ?t uko:name 'order_lines' ; uko:contains ?c . "
        "?c a uko-data:Column ; uko:name ?name ; uko-data:dataType ?type ; uko-data:isNullable ?null } ORDER BY ?name",
    )
    assert [(r["name"], r["type"], r["null"]) for r in rows] == [
        ("line_no", "integer", "false"),
        ("order_id", "bigint", "false"),
        ("quantity", "integer", "false"),
        ("sku", "text", "false"),
    ]
    fk = select(store, "SELECT ?from ?to WHERE { ?from uko-data:foreignKeyTo ?to }")
    assert {
        "from": iri("db/schema.sql", "shop.orders.customer_id"),
        "to": iri("db/schema.sql", "shop.customers.id"),
    } in fk


def test_mysql_dump_with_delimiters() -> None:
    analysis = analyze(SQL, "dump.sql", MYSQL)
    assert values(analysis, "", "sqlDialect") == ["mysql"]
    assert analysis.problems == []
    assert values(analysis, "customers.id", "dataType") == ["int(11)"]
    assert values(analysis, "customers.name", "defaultValue") == ["''"]
    assert links(analysis, "customers/pk", "constrainsColumn") == ["customers.id"]
    assert values(analysis, "customers/uq_email", "constraintKind") == ["UNIQUE"]
    assert links(analysis, "customers/ix_name", "indexesColumn") == ["customers.name"]
    assert links(analysis, "order_items/pk", "constrainsColumn") == ["order_items.order_id", "order_items.line_no"]
    assert links(analysis, "order_items.customer_id", "foreignKeyTo") == ["customers.id"]
    assert links(analysis, "order_items/items_before_insert", "triggerFires") == ["order_items"]
    body = str(entity(analysis, "routine/customer_count").values[D + "procedureBody"][0])
    assert body.startswith("CREATE DEFINER") and "END IF;" in body and body.endswith("END;")
    assert links(analysis, "customer_orders", "viewReferences") == ["customers", "order_items"]


def test_sqlite_script_blocks_and_table_options() -> None:
    analysis = analyze(SQL, "schema.sql", SQLITE)
    assert values(analysis, "", "sqlDialect") == ["sqlite"]
    assert analysis.problems == []
    # WITHOUT ROWID is beyond sqlglot: the table is read without its trailing options.
    assert [e.name for e in analysis.entities if e.parent == "track" and D + "Column" in e.types] == [
        "id",
        "artist_id",
        "title",
    ]
    assert links(analysis, "track.artist_id", "foreignKeyTo") == ["artist.id"]  # REFERENCES artist: its key
    trigger = entity(analysis, "track/track_touch")
    assert trigger.span is not None and (trigger.span.start_line, trigger.span.end_line) == (14, 18)
    assert links(analysis, "artist_tracks", "viewReferences") == ["artist", "track"]  # not the CTE 't'
    assert not refs(analysis, "artist_tracks", "viewReferences")


def test_tsql_batches() -> None:
    analysis = analyze(SQL, "schema.sql", TSQL)
    assert values(analysis, "", "sqlDialect") == ["tsql"]
    assert analysis.problems == []
    assert links(analysis, "dbo.Departments/PK_Departments", "constrainsColumn") == ["dbo.Departments.DeptId"]
    assert values(analysis, "dbo.Departments.DeptId", "dataType") == ["INT"]
    body = str(entity(analysis, "routine/dbo.RaiseAll").values[D + "procedureBody"][0])
    assert "UPDATE" in body and "SELECT COUNT(*)" in body  # the procedure runs to GO
    assert links(analysis, "dbo.Departments/IX_Dept_Name", "indexesColumn") == ["dbo.Departments.Name"]


def test_dialect_from_comment_and_path() -> None:
    text = "CREATE TABLE t (a int);"
    assert values(analyze(SQL, "x.sql", "-- dialect: mysql\n" + text), "", "sqlDialect") == ["mysql"]
    assert values(analyze(SQL, "db/sqlite/x.sql", text), "", "sqlDialect") == ["sqlite"]
    assert values(analyze(SQL, "schema.mssql.sql", text), "", "sqlDialect") == ["tsql"]
    assert values(analyze(SQL, "x.sql", "-- dialect: nosuch\n" + text), "", "sqlDialect") == ["postgres"]


@pytest.mark.parametrize(
    ("path", "version", "direction"),
    [
        ("db/migration/V1_2__create_users.sql", "1.2", "up"),
        ("db/migration/U3__drop.sql", "3", "down"),
        ("migrations/000001_create_users.up.sql", "000001", "up"),
        ("migrations/000001_create_users.down.sql", "000001", "down"),
        ("app/migrations/0002_add_age.sql", "0002", "up"),
        ("migrations/2019-01-01-000000_create/up.sql", "2019-01-01-000000", "up"),
        ("db/migration/R__views.sql", None, None),
    ],
)
def test_migrations(path: str, version: str | None, direction: str | None) -> None:
    text = "CREATE TABLE users (id int);\nALTER TABLE accounts ADD COLUMN age int;\nCREATE INDEX i ON orders (x);"
    analysis = analyze(SQL, path, text)
    assert types(analysis, "") == {"SchemaScript", "Migration"}
    assert SQL.file_types(path) == (D + "SchemaScript", D + "Migration")
    assert values(analysis, "", "migrationVersion") == ([version] if version else [])
    assert values(analysis, "", "migrationDirection") == ([direction] if direction else [])
    altered = [r.targets for r in refs(analysis, "", "migrationAlters")]
    assert altered == [(("users", 0.9),), (("accounts", 0.9),), (("orders", 0.9),)]


def test_not_migrations() -> None:
    for path in ("schema.sql", "sql/0001_init.sql", "migrations/readme.sql"):
        analysis = analyze(SQL, path, "CREATE TABLE users (id int);")
        assert types(analysis, "") == {"SchemaScript"}, path
        assert not refs(analysis, "", "migrationAlters")


def test_duplicate_names_get_suffixed_keys() -> None:
    analysis = analyze(SQL, "x.sql", "CREATE TABLE t (a int);\nCREATE TABLE IF NOT EXISTS t (b int);")
    assert [e.key for e in analysis.entities] == ["", "t", "t.a", "t~2", "t~2.b"]


def test_copy_from_stdin_data_is_not_split() -> None:
    text = (
        "CREATE TABLE public.notes (id integer, body text);\n"
        "COPY public.notes (id, body) FROM stdin;\n1\tsemi; colon\n2\tCREATE TABLE fake (x int);\n\\.\n"
        "CREATE TABLE public.after (id integer);\n"
    )
    analysis = analyze(SQL, "dump.sql", text)
    assert [e.key for e in analysis.entities if D + "Table" in e.types] == ["public.notes", "public.after"]
    assert analysis.problems == []
    sample = render("dump.sql", text, "public.notes", "WITH_SAMPLE_DATA")
    assert "1\tsemi; colon" in sample


def test_broken_utf8_and_empty_files() -> None:
    data = b"CREATE TABLE caf\xe9 (x int, \xff\xfe text);\nCREATE TABLE ok (y int);\n"
    analysis = analyze(SQL, "bad.sql", data)
    assert analysis.problems[0].message.startswith("not valid UTF-8")
    assert analysis.problems[0].span is not None and analysis.problems[0].span.start_byte == data.index(b"\xe9")
    assert [e.name for e in analysis.entities if D + "Table" in e.types] == ["caf\ufffd", "ok"]
    graph(SQL, "bad.sql", data)  # the triples are valid N-Triples
    for text in ("", "-- nothing\n/* at all */\n", "\n\n;;\n"):
        empty = analyze(SQL, "empty.sql", text)
        assert [e.key for e in empty.entities] == [""] and empty.problems == []
        assert render("empty.sql", text, "", "TABLE_LISTING") == "script empty.sql"


def test_hostile_input_never_raises() -> None:
    cases = {
        "nesting": "SELECT " + "(" * 3000 + "1" + ")" * 3000 + ";\nCREATE TABLE c (z int);",
        "unterminated": "CREATE TABLE a (x int);\nINSERT INTO a VALUES ('oops);\nCREATE TABLE b (y int);\n",
        "unbalanced": "CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE a SET x = 1;\nCREATE TABLE f (y int);\n",
        "garbage": "this is not sql; neither is this!!! ;; CREATE TABLE g (q int);",
    }
    nesting = analyze(SQL, "x.sql", cases["nesting"])
    assert [p.message for p in nesting.problems] == ["statement nested too deeply to read"]
    assert "c" in {e.key for e in nesting.entities}
    unterminated = analyze(SQL, "x.sql", cases["unterminated"])
    assert [(p.message, p.span.start_line) for p in unterminated.problems if p.span] == [
        ("unterminated quoted string or identifier", 2)
    ]
    assert {"a", "b"} <= {e.key for e in unterminated.entities}
    # A trigger whose BEGIN never ends is re-read up to its first semicolon.
    unbalanced = analyze(SQL, "x.sql", cases["unbalanced"])
    assert {"a/t", "f"} <= {e.key for e in unbalanced.entities}
    garbage = analyze(SQL, "x.sql", cases["garbage"])
    assert len(garbage.problems) == 2 and "g" in {e.key for e in garbage.entities}


# ── Renderings ─────────────────────────────────────────────────────


def test_file_renderings_grow_level_by_level() -> None:
    out = {level: render("db/schema.sql", POSTGRES, "", level) for level in LEVELS}
    assert out["SCHEMA_LISTING"] == "script schema.sql\n  schema shop"
    assert "table shop.orders" in out["TABLE_LISTING"] and "customer_id" not in out["TABLE_LISTING"]
    assert "    customer_id" in out["COLUMN_LISTING"] and "bigint" not in out["COLUMN_LISTING"]
    assert "customer_id bigint NOT NULL" in out["TYPED_COLUMNS"] and "DEFAULT" not in out["TYPED_COLUMNS"]
    constraints = out["CONSTRAINTS"]
    assert "DEFAULT now()" in constraints and "PRIMARY KEY (order_id, line_no)" in constraints
    assert "CONSTRAINT email_has_at CHECK" in constraints and "FOREIGN KEY" not in constraints
    relationships = out["RELATIONSHIPS"]
    assert "FOREIGN KEY (customer_id) REFERENCES shop.customers (id)" in relationships
    assert "referenced by shop.orders.customer_id" in relationships and "INDEX" not in relationships
    assert "reads shop.customers, shop.orders, billing.invoices" in relationships
    assert "INDEX orders_customer_idx ON shop.orders" in out["INDEXES_AND_STATS"]
    ddl = out["DDL"]
    assert (
        POSTGRES[POSTGRES.index("CREATE TABLE shop.orders") : POSTGRES.index("CREATE TABLE shop.order_lines")].strip()
        in ddl
    )
    assert "ALTER TABLE shop.customers ADD COLUMN phone" in ddl
    assert "CREATE TRIGGER" not in ddl and "INSERT" not in ddl and "touch_order" not in ddl
    triggers = out["DDL_WITH_TRIGGERS"]
    assert "CREATE TRIGGER orders_touch" in triggers
    assert "CREATE FUNCTION shop.touch_order() RETURNS trigger LANGUAGE plpgsql" in triggers
    assert "RETURN NEW" not in triggers and "RETURN NEW" in out["FULL_PROCEDURES"]
    assert "INSERT INTO shop.customers" not in out["FULL_PROCEDURES"]
    assert "INSERT INTO shop.customers" in out["WITH_SAMPLE_DATA"]
    assert out["FULL_CATALOG"] == POSTGRES
    assert len(set(out.values())) == len(LEVELS)


def test_schema_table_view_and_column_renderings() -> None:
    assert render("db/schema.sql", POSTGRES, "shop", "SCHEMA_LISTING") == "schema shop"
    assert render("db/schema.sql", POSTGRES, "shop", "TABLE_LISTING").splitlines()[1:4] == [
        "  table shop.customers",
        "  table shop.orders",
        "  table shop.order_lines",
    ]
    table = {level: render("db/schema.sql", POSTGRES, "shop.orders", level) for level in LEVELS}
    assert table["TABLE_LISTING"] == "table shop.orders"
    assert table["COLUMN_LISTING"].splitlines() == [
        "table shop.orders",
        "  id",
        "  customer_id",
        "  placed_at",
        "  account_id",
        "  total",
    ]
    assert "referenced by shop.order_lines.order_id" in table["RELATIONSHIPS"]
    assert table["RELATIONSHIPS"].endswith("read by shop.customer_totals")
    assert "read by" not in table["CONSTRAINTS"]
    assert table["DDL"].startswith("CREATE TABLE shop.orders (") and "CREATE INDEX orders_customer_idx" in table["DDL"]
    assert "ADD COLUMN total" in table["DDL"] and "CREATE TRIGGER" not in table["DDL"]
    assert "CREATE TRIGGER orders_touch" in table["DDL_WITH_TRIGGERS"]
    assert "RETURN NEW" not in table["DDL_WITH_TRIGGERS"] and "RETURN NEW" in table["FULL_PROCEDURES"]
    customers = render("db/schema.sql", POSTGRES, "shop.customers", "WITH_SAMPLE_DATA")
    assert "INSERT INTO shop.customers (email, name) VALUES ('a@example.com', 'Ann; Smith');" in customers
    view = render("db/schema.sql", POSTGRES, "shop.customer_totals", "DDL")
    assert view.startswith("CREATE VIEW shop.customer_totals AS") and view.endswith("GROUP BY c.id, c.email;")
    assert render("db/schema.sql", POSTGRES, "shop.customer_totals", "RELATIONSHIPS").endswith(
        "reads shop.customers, shop.orders, billing.invoices"
    )
    column = {level: render("db/schema.sql", POSTGRES, "shop.orders.customer_id", level) for level in LEVELS}
    assert column["COLUMN_LISTING"] == "shop.orders.customer_id"
    assert column["TYPED_COLUMNS"] == "shop.orders.customer_id bigint NOT NULL"
    assert "FOREIGN KEY (customer_id) REFERENCES shop.customers (id)" in column["RELATIONSHIPS"]
    assert "INDEX orders_customer_idx" in column["INDEXES_AND_STATS"]
    assert column["DDL"].startswith("customer_id  bigint NOT NULL REFERENCES shop.customers (id) ON DELETE CASCADE")
    key = render("db/schema.sql", POSTGRES, "shop.customers.id", "RELATIONSHIPS")
    assert "referenced by shop.orders.customer_id" in key
    unknown = RenderRequest("no such key", (), "db/schema.sql", POSTGRES.encode(), None, "DDL", LEVELS.index("DDL"))
    assert SQL.render(unknown) == ""


# ── Real data ──────────────────────────────────────────────────────

CREATE_TABLE = re.compile(
    r"^\s*CREATE\s+(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|UNLOGGED)\s+)*TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"`\[\]]+)",
    re.IGNORECASE | re.MULTILINE,
)


def test_aiosql_corpus() -> None:
    root = corpus_dir("aiosql-13.0")
    files = sorted(root.rglob("*.sql"))
    assert len(files) == 33
    tables_seen = 0
    for path in files:
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        analysis = analyze(SQL, rel, data)
        tables = [e.name for e in analysis.entities if D + "Table" in e.types]
        written = [_sql_script.unquote(name).rsplit(".", 1)[-1] for name in CREATE_TABLE.findall(data.decode())]
        assert sorted(tables) == sorted(written), rel
        assert len({e.key for e in analysis.entities}) == len(analysis.entities), rel
        graph(SQL, rel, data)
        for level in ("TABLE_LISTING", "RELATIONSHIPS", "DDL", "FULL_CATALOG"):
            SQL.render(RenderRequest("", (D + "SchemaScript",), rel, data, None, level, LEVELS.index(level)))
        tables_seen += len(tables)
    assert tables_seen == 21
    # Prose before the first query (after a comment line) runs into the first statement: one Problem.
    blogs = analyze(SQL, "tests/blogdb/sql/blogs/blogs.sql", (root / "tests/blogdb/sql/blogs/blogs.sql").read_bytes())
    assert [(p.span.start_line, p.span.end_line) for p in blogs.problems if p.span] == [(2, 6)]


def test_handles() -> None:
    assert SQL.name == "sql" and SQL.handles("db/Schema.SQL")
    assert not SQL.handles("x.sqlite") and not SQL.handles("sql/readme.md")
    assert SQL.file_types("db/schema.sql") == (D + "SchemaScript",)
