"""A neutral model of a relational schema, its UKO entities, and its renderings (not a plugin).

The SQL-script analyzer (``sql``) and the SQLite-file analyzer (``sqlite``) each read their
input into a ``Catalog``; everything after that is shared: entity keys, symbols, same-file
links versus references, and every level of the uko-data DetailLevelMap.

Keys: a schema is its name; a table or view its qualified name (``app.users``); a column
``<table>.<column>``; constraints, indexes and triggers ``<table>/<name>`` (unnamed
constraints ``<table>/pk``, ``<table>/unique(email)``, ``<table>/fk(org_id)``,
``<table>/check``); routines ``routine/<qualified name>``.

Foreign keys are edges between columns (the ontology's domain and range): each referencing
column gets ``uko-data:foreignKeyTo`` to the referenced column. When the referenced columns
are implicit (``REFERENCES users``) they are the target's primary key if the target is in
the same file; otherwise the edge goes to the referenced table itself.

SQL identifiers are matched case-insensitively (unquoted names fold), so symbols and
reference targets are lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cleveragents.indexing.model import Entity, Reference, Span, Value
from cleveragents.terms import UKO_DATA
from cleveragents.vocabulary import detail_levels, uko_data

NAMESPACE = "sql"
CONFIDENCE = 0.9  # a name written in the DDL, resolved by name in the "sql" namespace
SAMPLE_ROWS = 5  # WITH_SAMPLE_DATA: rows (or INSERT statements) per table

SCHEMA = uko_data.Schema
TABLE = uko_data.Table
VIEW = uko_data.View
COLUMN = uko_data.Column
CONSTRAINT = uko_data.Constraint
FOREIGN_KEY = uko_data.ForeignKey
INDEX = uko_data.Index
TRIGGER = uko_data.Trigger
PROCEDURE = uko_data.StoredProcedure

LEVELS = detail_levels.UKO_DATA
TYPED, CONSTRAINTS, RELATIONSHIPS, STATS, DDL, TRIGGERS, PROCEDURES, SAMPLES, CATALOG = range(3, 12)


def clean(text: str) -> str:
    """Text decoded with ``surrogateescape`` back to printable form (bad bytes become U+FFFD)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass
class Column:
    name: str
    data_type: str = ""
    nullable: bool | None = True  # None: unknown (a view's column)
    primary_key: bool = False
    default: str | None = None
    comment: str | None = None
    definition: str = ""  # the column's DDL as written
    span: Span | None = None
    statistics: list[str] = field(default_factory=list)  # FULL_CATALOG lines (value distribution)
    samples: list[str] = field(default_factory=list)  # WITH_SAMPLE_DATA values


@dataclass
class Constraint:
    kind: str  # 'PRIMARY KEY', 'UNIQUE', 'CHECK', 'FOREIGN KEY' (uko-data:constraintKind)
    columns: list[str]
    name: str | None = None
    ref_table: str | None = None  # FOREIGN KEY: the referenced table as written
    ref_columns: list[str] = field(default_factory=list)
    expression: str | None = None  # CHECK
    definition: str = ""
    span: Span | None = None

    def summary(self) -> str:
        head = f"CONSTRAINT {self.name} " if self.name else ""
        cols = f" ({', '.join(self.columns)})" if self.columns else ""
        if self.kind == "CHECK":
            return f"{head}CHECK ({self.expression or ''})"
        if self.kind == "FOREIGN KEY":
            refs = f" ({', '.join(self.ref_columns)})" if self.ref_columns else ""
            return f"{head}FOREIGN KEY{cols} REFERENCES {self.ref_table}{refs}"
        return f"{head}{self.kind}{cols}"


@dataclass
class Index:
    name: str
    table: str  # qualified name as written
    columns: list[str]
    unique: bool = False
    definition: str = ""
    span: Span | None = None

    def summary(self) -> str:
        return f"{'UNIQUE ' if self.unique else ''}INDEX {self.name} ON {self.table} ({', '.join(self.columns)})"


@dataclass
class Trigger:
    name: str
    table: str  # qualified name as written
    timing: str = ""  # e.g. 'BEFORE UPDATE OF email'
    definition: str = ""
    span: Span | None = None

    def summary(self) -> str:
        return f"TRIGGER {self.name} {self.timing + ' ' if self.timing else ''}ON {self.table}"


@dataclass
class Routine:
    name: str  # qualified name as written
    kind: str  # 'FUNCTION' or 'PROCEDURE'
    signature: str
    definition: str
    span: Span | None = None


@dataclass
class Table:
    name: str
    schema: str | None = None
    view: bool = False
    columns: list[Column] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    indexes: list[Index] = field(default_factory=list)
    query: str | None = None  # a view's SELECT
    sources: list[str] = field(default_factory=list)  # tables and views a view reads, as written
    ddl: list[str] = field(default_factory=list)  # CREATE, then ALTER/COMMENT statements, as written
    samples: list[str] = field(default_factory=list)  # INSERT statements or formatted rows
    statistics: list[str] = field(default_factory=list)
    row_estimate: int | None = None
    comment: str | None = None
    span: Span | None = None

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name.lower() == name.lower()), None)

    def primary_key(self) -> list[str]:
        for constraint in self.constraints:
            if constraint.kind == "PRIMARY KEY":
                return constraint.columns
        return [c.name for c in self.columns if c.primary_key]


@dataclass
class Catalog:
    name: str
    kind: str  # 'database' or 'script': the file node's rendering head
    schemas: dict[str, Span | None] = field(default_factory=dict)  # declared or implied by qualified names
    tables: list[Table] = field(default_factory=list)  # in order; change through add/remove/rename
    indexes: list[Index] = field(default_factory=list)  # on tables this file does not define
    triggers: list[Trigger] = field(default_factory=list)
    routines: list[Routine] = field(default_factory=list)
    ddl: list[tuple[str, str]] = field(default_factory=list)  # (kind, statement) in order; kinds below
    source: str | None = None  # the whole script (FULL_CATALOG of a script is the script itself)

    # ddl kinds: 'ddl' (schemas, tables, views, indexes, ALTER...), 'trigger', 'routine', 'data'

    # Lookups by lower-cased qualified name and ("\0" + bare name): scripts define thousands of tables.
    _index: dict[str, list[Table]] = field(default_factory=dict, repr=False)

    @staticmethod
    def _keys(table: Table) -> tuple[str, str]:
        return table.qualified.lower(), "\0" + table.name.lower()

    def add(self, table: Table) -> None:
        self.tables.append(table)
        for key in self._keys(table):
            self._index.setdefault(key, []).append(table)

    def remove(self, table: Table) -> None:
        self.tables.remove(table)
        for key in self._keys(table):
            self._index[key].remove(table)

    def rename(self, table: Table, name: str, schema: str | None) -> None:
        for key in self._keys(table):
            self._index[key].remove(table)
        table.name, table.schema = name, schema
        for key in self._keys(table):
            self._index.setdefault(key, []).append(table)

    def find(self, name: str) -> Table | None:
        """The table or view ``name`` designates: qualified match first, then by bare name."""
        lowered = name.lower()
        exact = self._index.get(lowered)
        if exact:
            return exact[0]
        matches = self._index.get("\0" + lowered.rsplit(".", 1)[-1], [])
        if "." in lowered:  # 'public.users' for a table written 'users', not for 'other.users'
            matches = [t for t in matches if t.schema is None]
        return matches[0] if len(matches) == 1 else None


# ── Keys ───────────────────────────────────────────────────────────

Node = Catalog | Table | Column | Constraint | Index | Trigger | Routine | str  # str: a schema name


@dataclass
class Keyed:
    key: str
    node: Node
    parent: str | None
    table: Table | None = None  # the owning table of a column, constraint, index or trigger


def constraint_slug(constraint: Constraint) -> str:
    if constraint.name:
        return constraint.name
    cols = ",".join(constraint.columns)
    return {"PRIMARY KEY": "pk", "UNIQUE": f"unique({cols})", "FOREIGN KEY": f"fk({cols})"}.get(
        constraint.kind, constraint.kind.lower()
    )


def keyed_nodes(catalog: Catalog) -> list[Keyed]:
    """Every node with its key (duplicates get ``~2``, ``~3`` in order) and parent key."""
    out: list[Keyed] = []
    used: dict[str, int] = {}

    def add(key: str, node: Node, parent: str | None, table: Table | None = None) -> str:
        key = clean(key)
        count = used.get(key, 0) + 1
        used[key] = count
        final = key if count == 1 else f"{key}~{count}"
        out.append(Keyed(final, node, parent, table))
        return final

    add("", catalog, None)
    schema_keys = {name.lower(): add(name, name, "") for name in catalog.schemas}
    table_keys: dict[int, str] = {}

    def home(schema: str | None) -> str:
        return schema_keys.get(schema.lower(), "") if schema else ""

    def table_home(name: str) -> str:
        target = catalog.find(name)
        if target is not None:
            return table_keys[id(target)]
        return home(name.rsplit(".", 1)[0] if "." in name else None)

    for table in catalog.tables:
        tkey = table_keys[id(table)] = add(table.qualified, table, home(table.schema))
        for column in table.columns:
            add(f"{tkey}.{column.name}", column, tkey, table)
        for constraint in table.constraints:
            add(f"{tkey}/{constraint_slug(constraint)}", constraint, tkey, table)
        for index in table.indexes:
            add(f"{tkey}/{index.name}", index, tkey, table)
    for index in catalog.indexes:
        add(f"{index.table}/{index.name}", index, table_home(index.table))
    for trigger in catalog.triggers:
        owner = catalog.find(trigger.table)
        prefix = table_keys[id(owner)] if owner is not None else trigger.table
        add(f"{prefix}/{trigger.name}", trigger, table_home(trigger.table), owner)
    for routine in catalog.routines:
        add(f"routine/{routine.name}", routine, home(routine.name.rsplit(".", 1)[0] if "." in routine.name else None))
    return out


# ── Entities ───────────────────────────────────────────────────────


_NAME = re.compile(r"[^\s()'\",+*/|<>=-]+")  # a column name, not an expression


def _symbols(*names: str) -> tuple[tuple[str, str], ...]:
    seen: dict[str, None] = {clean(n).lower(): None for n in names if n}
    return tuple((NAMESPACE, n) for n in seen)


def _line(span: Span | None) -> int:
    return span.start_line if span else 0


class _Builder:
    def __init__(self, catalog: Catalog, file_entity: Entity) -> None:
        self.catalog = catalog
        self.nodes = keyed_nodes(catalog)
        self.keys = {id(k.node): k.key for k in self.nodes if not isinstance(k.node, str)}
        self.entities: list[Entity] = [file_entity]
        self.by_key: dict[str, Entity] = {}
        self.references: list[Reference] = []

    def column_key(self, table: Table, column: str) -> str | None:
        found = table.column(column)
        return self.keys[id(found)] if found is not None else None

    def edge(self, source: Entity, predicate: str, table_name: str, column: str | None = None) -> None:
        """A same-file link when the target is here, else a Reference by qualified name."""
        target = self.catalog.find(table_name)
        if target is not None:
            key = self.column_key(target, column) if column else self.keys[id(target)]
            if key is not None:
                source.links.append((predicate, key))
                return
        if column is not None and not _NAME.fullmatch(column):
            return  # an index or key over an expression: no column to point at
        name = clean(table_name).lower()
        bare = name.rsplit(".", 1)[-1]
        if column:
            col = clean(column).lower()
            targets = [(f"{name}.{col}", CONFIDENCE)]
            if bare != name:
                targets.append((f"{bare}.{col}", CONFIDENCE - 0.2))
        else:
            targets = [(name, CONFIDENCE)]
            if bare != name:
                targets.append((bare, CONFIDENCE - 0.2))
        self.references.append(
            Reference(source.key, predicate, NAMESPACE, tuple(targets), simple_name=None, line=_line(source.span))
        )

    def entity(self, keyed: Keyed, types: tuple[str, ...], name: str, span: Span | None, **values: Value) -> Entity:
        made = Entity(keyed.key, types, clean(name), keyed.parent, span)
        for local, value in values.items():
            made.add(UKO_DATA + local, clean(value) if isinstance(value, str) else value)
        self.entities.append(made)
        self.by_key[made.key] = made
        return made

    def build(self) -> tuple[list[Entity], list[Reference]]:
        for keyed in self.nodes[1:]:
            node = keyed.node
            if isinstance(node, str):
                self.entity(keyed, (SCHEMA,), node, self.catalog.schemas[node])
            elif isinstance(node, Table):
                self.table(keyed, node)
            elif isinstance(node, Column) and keyed.table is not None:
                self.column(keyed, node, keyed.table)
            elif isinstance(node, Constraint) and keyed.table is not None:
                self.constraint(keyed, node, keyed.table)
            elif isinstance(node, Index):
                made = self.entity(keyed, (INDEX,), node.name, node.span)
                for column in node.columns:
                    self.edge(made, uko_data.indexesColumn, node.table, column)
            elif isinstance(node, Trigger):
                made = self.entity(keyed, (TRIGGER,), node.name, node.span)
                self.edge(made, uko_data.triggerFires, node.table)
            elif isinstance(node, Routine):
                made = self.entity(keyed, (PROCEDURE,), node.name.rsplit(".", 1)[-1], node.span)
                made.add(uko_data.procedureBody, clean(node.definition))
                made.symbols = _symbols(node.name, node.name.rsplit(".", 1)[-1])
        return self.entities, self.references

    def table(self, keyed: Keyed, table: Table) -> None:
        values: dict[str, Value] = {}
        if table.view and table.query is not None:
            values["viewDefinition"] = table.query
        if table.row_estimate is not None:
            values["rowEstimate"] = table.row_estimate
        made = self.entity(keyed, (VIEW if table.view else TABLE,), table.name, table.span, **values)
        made.symbols = _symbols(table.qualified, table.name)
        for source in dict.fromkeys(table.sources):
            self.edge(made, uko_data.viewReferences, source)

    def column(self, keyed: Keyed, column: Column, table: Table) -> None:
        values: dict[str, Value] = {"isPrimaryKey": column.primary_key}
        if column.nullable is not None:
            values["isNullable"] = column.nullable
        if column.data_type:
            values["dataType"] = column.data_type
        if column.default is not None:
            values["defaultValue"] = column.default
        made = self.entity(keyed, (COLUMN,), column.name, column.span, **values)
        made.symbols = _symbols(f"{table.qualified}.{column.name}", f"{table.name}.{column.name}")

    def constraint(self, keyed: Keyed, constraint: Constraint, table: Table) -> None:
        types = (FOREIGN_KEY, CONSTRAINT) if constraint.kind == "FOREIGN KEY" else (CONSTRAINT,)
        made = self.entity(keyed, types, constraint_slug(constraint), constraint.span, constraintKind=constraint.kind)
        for column in constraint.columns:
            key = self.column_key(table, column)
            if key is not None:
                made.links.append((uko_data.constrainsColumn, key))
        if constraint.kind != "FOREIGN KEY" or constraint.ref_table is None:
            return
        ref_columns = constraint.ref_columns
        target = self.catalog.find(constraint.ref_table)
        if not ref_columns and target is not None:
            ref_columns = target.primary_key()
        for position, column in enumerate(constraint.columns):
            source = self.by_key.get(self.column_key(table, column) or "")
            if source is None:
                continue
            ref = ref_columns[position] if position < len(ref_columns) else None
            self.edge(source, uko_data.foreignKeyTo, constraint.ref_table, ref)


def build_entities(catalog: Catalog, file_entity: Entity) -> tuple[list[Entity], list[Reference]]:
    """The file node (given), then schemas, tables, views, columns, constraints, indexes, triggers, routines."""
    return _Builder(catalog, file_entity).build()


# ── Rendering ──────────────────────────────────────────────────────


def level_depth(level: str, depth: int) -> int:
    return LEVELS.index(level) if level in LEVELS else max(0, min(depth, len(LEVELS) - 1))


def _indent(lines: list[str], by: str = "  ") -> list[str]:
    return [by + line if line else line for line in lines]


class _Renderer:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.nodes = keyed_nodes(catalog)
        # Reverse edges inside the file, per target table: (referencing 'table.column', referenced column).
        self.referencing: dict[int, list[tuple[str, str | None]]] = {}
        self.readers: dict[int, list[str]] = {}
        for other in catalog.tables:
            for fk in other.constraints:
                target = catalog.find(fk.ref_table) if fk.kind == "FOREIGN KEY" and fk.ref_table else None
                if target is None:
                    continue
                refs = fk.ref_columns or target.primary_key()
                for position, col in enumerate(fk.columns):
                    ref = refs[position] if position < len(refs) else None
                    self.referencing.setdefault(id(target), []).append((f"{other.qualified}.{col}", ref))
            for source in dict.fromkeys(other.sources):
                target = catalog.find(source)
                if target is not None:
                    self.readers.setdefault(id(target), []).append(other.qualified)

    def incoming(self, table: Table, column: str | None = None) -> list[str]:
        """'orders.user_id' for each foreign key in this file that points at ``table`` (or its column)."""
        return [
            source
            for source, ref in self.referencing.get(id(table), [])
            if column is None or (ref is not None and ref.lower() == column.lower())
        ]

    def column_line(self, column: Column, depth: int) -> str:
        if depth < TYPED:
            return column.name
        parts = [column.name, column.data_type or "(untyped)"]
        if column.nullable is not None:
            parts.append("NULL" if column.nullable else "NOT NULL")
        if depth >= CONSTRAINTS:
            if column.default is not None:
                parts.append(f"DEFAULT {column.default}")
            if column.comment:
                parts.append(f"-- {column.comment}")
        return " ".join(parts)

    def table_summary(self, table: Table, depth: int) -> list[str]:
        """A table or view up to INDEXES_AND_STATS: its head line, then indented details."""
        kind = "view" if table.view else "table"
        head = f"{kind} {table.qualified}"
        if depth >= STATS and table.row_estimate is not None:
            head += f" (~{table.row_estimate} rows)"
        lines = [head]
        if depth < 2:
            return lines
        body = [self.column_line(c, depth) for c in table.columns]
        if depth >= CONSTRAINTS:
            body += [c.summary() for c in table.constraints if c.kind != "FOREIGN KEY"]
            if table.comment:
                body.append(f"-- {table.comment}")
        if depth >= RELATIONSHIPS:
            body += [c.summary() for c in table.constraints if c.kind == "FOREIGN KEY"]
            if table.sources:
                body.append("reads " + ", ".join(dict.fromkeys(table.sources)))
            referenced = self.incoming(table)
            if referenced:
                body.append("referenced by " + ", ".join(referenced))
            if self.readers.get(id(table)):
                body.append("read by " + ", ".join(self.readers[id(table)]))
        if depth >= STATS:
            body += [i.summary() for i in self.indexes_of(table)]
            body += table.statistics
        return lines + _indent(body)

    def indexes_of(self, table: Table) -> list[Index]:
        return table.indexes + [i for i in self.catalog.indexes if self.catalog.find(i.table) is table]

    def triggers_of(self, table: Table) -> list[Trigger]:
        return [t for t in self.catalog.triggers if self.catalog.find(t.table) is table]

    def routines_of(self, table: Table) -> list[Routine]:
        """Routines whose definition names the table, or that its triggers run (a word match)."""
        name = table.name.lower()
        triggers = [t.definition for t in self.triggers_of(table)]
        return [
            r
            for r in self.catalog.routines
            if _mentions(r.definition, name) or any(_mentions(t, r.name.rsplit(".", 1)[-1].lower()) for t in triggers)
        ]

    def table_text(self, table: Table, depth: int) -> str:
        if depth < DDL:
            return "\n".join(self.table_summary(table, depth))
        parts = list(table.ddl) + [i.definition for i in self.indexes_of(table) if i.definition]
        if depth >= TRIGGERS:
            parts += [t.definition for t in self.triggers_of(table)]
            routines = self.routines_of(table)
            parts += [r.definition if depth >= PROCEDURES else r.signature for r in routines]
        if depth >= SAMPLES and table.samples:
            parts.append("\n".join(table.samples))
        if depth >= CATALOG and table.statistics:
            parts.append("\n".join(f"-- {line}" for line in table.statistics))
        return "\n\n".join(p for p in parts if p)

    def column_text(self, column: Column, table: Table, depth: int) -> str:
        head = f"{table.qualified}.{self.column_line(column, depth)}"
        lines = [head] if depth < DDL else [column.definition or head]
        if depth >= CONSTRAINTS:
            lines += [
                c.summary()
                for c in table.constraints
                if c.kind != "FOREIGN KEY" and any(x.lower() == column.name.lower() for x in c.columns)
            ]
        if depth >= RELATIONSHIPS:
            for fk in table.constraints:
                if fk.kind == "FOREIGN KEY" and any(x.lower() == column.name.lower() for x in fk.columns):
                    lines.append(fk.summary())
            referenced = self.incoming(table, column.name)
            if referenced:
                lines.append("referenced by " + ", ".join(referenced))
        if depth >= STATS:
            lines += [
                i.summary() for i in self.indexes_of(table) if any(x.lower() == column.name.lower() for x in i.columns)
            ]
        if depth >= SAMPLES:
            lines += [f"sample: {v}" for v in column.samples] or table.samples
        if depth >= CATALOG:
            lines += column.statistics
        return "\n".join(lines)

    def catalog_text(self, depth: int, schema: str | None = None) -> str:
        catalog = self.catalog
        if depth >= CATALOG and schema is None and catalog.source is not None:
            return catalog.source
        tables = [t for t in catalog.tables if schema is None or (t.schema or "").lower() == schema.lower()]
        if depth >= DDL:
            return self.catalog_ddl(depth, tables, schema)
        if schema is not None:
            return "\n".join([f"schema {schema}", *_indent(self.summaries(tables, depth) if depth else [])])
        lines = [f"{catalog.kind} {catalog.name}"]
        if depth > 0:
            lines += _indent(self.summaries([t for t in tables if t.schema is None], depth))
        for name in catalog.schemas:
            lines.append(f"  schema {name}")
            if depth > 0:
                members = [t for t in tables if (t.schema or "").lower() == name.lower()]
                lines += _indent(self.summaries(members, depth), "    ")
        return "\n".join(lines)

    def summaries(self, tables: list[Table], depth: int) -> list[str]:
        return [line for table in tables for line in self.table_summary(table, depth)]

    def catalog_ddl(self, depth: int, tables: list[Table], schema: str | None) -> str:
        if schema is None and self.catalog.ddl:
            wanted = {"ddl"} | ({"trigger", "routine"} if depth >= TRIGGERS else set())
            wanted |= {"data"} if depth >= SAMPLES else set()
            parts = []
            for kind, text in self.catalog.ddl:
                if kind not in wanted:
                    continue
                if kind == "routine" and depth < PROCEDURES:
                    text = next((r.signature for r in self.catalog.routines if r.definition == text), text)
                parts.append(text)
            if depth >= SAMPLES and not any(kind == "data" for kind, _ in self.catalog.ddl):
                parts += ["\n".join(t.samples) for t in tables if t.samples]
            if depth >= CATALOG:
                parts += ["\n".join(f"-- {t.qualified}: {s}" for s in t.statistics) for t in tables if t.statistics]
            return "\n\n".join(p for p in parts if p)
        text = "\n\n".join(self.table_text(t, depth) for t in tables)
        return text or (f"schema {schema}" if schema else f"{self.catalog.kind} {self.catalog.name}")

    def render(self, key: str, depth: int) -> str:
        keyed = next((k for k in self.nodes if k.key == key), None)
        if keyed is None:
            return ""
        node = keyed.node
        if isinstance(node, Catalog):
            return self.catalog_text(depth)
        if isinstance(node, str):
            return self.catalog_text(depth, node)
        if isinstance(node, Table):
            return self.table_text(node, depth)
        if isinstance(node, Column) and keyed.table is not None:
            return self.column_text(node, keyed.table, depth)
        if isinstance(node, Constraint):
            return node.definition if depth >= DDL and node.definition else node.summary()
        if isinstance(node, Index | Trigger):
            return node.definition if depth >= DDL and node.definition else node.summary()
        if isinstance(node, Routine):
            if depth >= PROCEDURES:
                return node.definition
            return node.signature if depth >= TYPED else f"{node.kind.lower()} {node.name}"
        return ""


def _mentions(text: str, name: str) -> bool:
    lowered = text.lower()
    start = lowered.find(name)
    while start >= 0:
        before = lowered[start - 1] if start else " "
        end = start + len(name)
        after = lowered[end] if end < len(lowered) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = lowered.find(name, start + 1)
    return False


def render(catalog: Catalog, key: str, level: str, depth: int) -> str:
    """The node ``key`` of ``catalog`` at one uko-data level (empty when the key is unknown)."""
    return clean(_Renderer(catalog).render(key, level_depth(level, depth)))
