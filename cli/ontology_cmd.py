"""``agents ontology list | show | levels | check``: the bundled ontology (the TBox).

Human formats show compact names (``uko-py:Module``) and comma-separated lists; json and
yaml get fixed keys with real lists, so scripts can rely on them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import pyoxigraph as ox
import typer

from cleveragents.errors import NotFoundError
from cleveragents.output import ColumnDef, OutputSession
from cleveragents.tbox import (
    TermInfo,
    effective_levels,
    expand_term,
    list_modules,
    module_by_prefix,
    ontology_triples,
    resolve_depth,
    show_term,
)
from cleveragents.terms import PREFIXES, RDF_TYPE, compact

from .invocation import get_context
from .rendering import is_structured, listed

app = typer.Typer(
    help="Inspect the bundled ontology: modules, terms, detail levels, consistency.",
    no_args_is_help=True,
)

# Term kinds that `list --terms` shows, in display order.
_LISTED_KINDS = (
    "class",
    "object property",
    "datatype property",
    "annotation property",
    "property",
)

MODULE_COLUMNS = [
    ColumnDef("prefix", "Prefix"),
    ColumnDef("namespace", "Namespace"),
    ColumnDef("layer", "Layer", type="integer", alignment="right"),
    ColumnDef("imports", "Imports"),
    ColumnDef("label", "Label"),
    ColumnDef("version", "Version"),
    ColumnDef("iri", hidden=True),
    ColumnDef("import_iris", hidden=True),
    ColumnDef("file", hidden=True),
]

TERM_COLUMNS = [
    ColumnDef("term", "Term"),
    ColumnDef("kind", "Kind"),
    ColumnDef("label", "Label"),
    ColumnDef("module", "Module"),
    ColumnDef("iri", hidden=True),
    ColumnDef("supers", hidden=True),
    ColumnDef("comment", hidden=True),
]

LEVEL_COLUMNS = [
    ColumnDef("name", "Name"),
    ColumnDef("depth", "Depth", type="integer", alignment="right"),
    ColumnDef("defined_in", "Defined in"),
]


# --- term names and close matches -------------------------------------------------------


@cache
def _known_terms() -> dict[str, str]:
    """Compact name -> IRI of every named term the ontology types (classes, properties,
    individuals, ontology headers)."""
    out: dict[str, str] = {}
    for t in ontology_triples():
        if t.predicate.value == RDF_TYPE and isinstance(t.subject, ox.NamedNode):
            out.setdefault(compact(t.subject.value), t.subject.value)
    return out


def _did_you_mean(matches: Sequence[str]) -> str:
    """The error-message suffix naming close matches; empty when there are none."""
    return f" (did you mean: {', '.join(matches)}?)" if matches else ""


def _local(name: str) -> str:
    return name.rpartition(":")[2].lower()


def _close_terms(term: str, limit: int = 3) -> list[str]:
    """Terms the user may have meant: same local name in another module first, then
    spelling neighbours (case-insensitive)."""
    names = sorted(_known_terms())
    wanted = compact(expand_term(term))
    same_local = [n for n in names if _local(n) == _local(wanted)]
    by_lower = {n.lower(): n for n in names}
    spelled = [by_lower[m] for m in difflib.get_close_matches(wanted.lower(), by_lower, n=limit, cutoff=0.8)]
    return list(dict.fromkeys([*same_local, *spelled]))[:limit]


def _unknown_term(term: str, command: str = "agents ontology show {}") -> NotFoundError:
    """NotFoundError for ``term`` naming close matches; ``command`` formats a suggestion."""
    matches = _close_terms(term)
    return NotFoundError(
        f"unknown ontology term '{term}'{_did_you_mean(matches)}",
        suggestions=[command.format(m) for m in matches] or ["agents ontology list --terms"],
    )


def _lookup(term: str) -> TermInfo:
    try:
        return show_term(term)
    except NotFoundError as exc:
        raise _unknown_term(term) from exc


def _module_prefix(prefix: str) -> str:
    try:
        return module_by_prefix(prefix).prefix
    except NotFoundError as exc:
        known = [m.prefix for m in list_modules() if m.prefix]
        matches = difflib.get_close_matches(prefix.rstrip(":"), known, n=3, cutoff=0.6)
        raise NotFoundError(
            f"no ontology module with prefix '{prefix.rstrip(':')}'{_did_you_mean(matches)}",
            detail="Known prefixes: " + ", ".join(known),
            suggestions=["agents ontology list"],
        ) from exc


# --- list -------------------------------------------------------------------------------


def _module_rows(structured: bool) -> list[dict[str, Any]]:
    prefix_of = {m.iri: m.prefix or m.iri for m in list_modules()}
    return [
        {
            "prefix": m.prefix,
            "namespace": m.namespace,
            "layer": m.layer,
            "imports": listed([prefix_of.get(i, i) for i in m.imports], structured),
            "label": m.label,
            "version": m.version,
            "iri": m.iri,
            "import_iris": list(m.imports),
            "file": m.path.name,
        }
        for m in list_modules()
    ]


def _term_rows(prefix: str | None, structured: bool) -> list[dict[str, Any]]:
    """Classes and properties declared by one module (``prefix``) or by all of them."""
    order = {m.prefix: i for i, m in enumerate(list_modules())}
    rows: list[tuple[tuple[int, int, str], dict[str, Any]]] = []
    for name, iri in _known_terms().items():
        info = show_term(iri)
        if info.kind not in _LISTED_KINDS or info.module is None:
            continue
        if prefix is not None and info.module != prefix:
            continue
        row = {
            "term": name,
            "kind": info.kind,
            "label": info.label,
            "module": info.module,
            "iri": iri,
            "supers": listed(map(compact, info.supers), structured),
            "comment": info.comment,
        }
        sort_key = (order.get(info.module, len(order)), _LISTED_KINDS.index(info.kind), name)
        rows.append((sort_key, row))
    return [row for _, row in sorted(rows, key=lambda item: item[0])]


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    terms: Annotated[
        bool,
        typer.Option(
            "--terms",
            help="List classes and properties instead of modules: those of the module "
            "PREFIX, or of every module without PREFIX.",
        ),
    ] = False,
    prefix: Annotated[
        str | None,
        typer.Argument(
            metavar="PREFIX",
            help="A module prefix (uko-py) whose terms to list; implies --terms.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """List the ontology modules (prefix, namespace, layer, imports, label, version), or
    with --terms [PREFIX] the classes and properties of a module."""
    app_ctx = get_context(ctx)
    with app_ctx.session("ontology list") as out:
        structured = is_structured(app_ctx)
        if not terms and prefix is None:
            rows = _module_rows(structured)
            out.table(f"Ontology modules ({len(rows)})", MODULE_COLUMNS, rows=rows, key="modules")
            return
        module = _module_prefix(prefix) if prefix is not None else None
        rows = _term_rows(module, structured)
        title = f"Terms of {module}" if module else "Ontology terms"
        out.table(
            f"{title} ({len(rows)})",
            TERM_COLUMNS,
            rows=rows,
            key="terms",
            empty_message=f"{module or 'The ontology'} declares no classes or properties.",
        )


# --- show -------------------------------------------------------------------------------


@app.command("show")
def show_cmd(
    ctx: typer.Context,
    term: Annotated[
        str,
        typer.Argument(help="A term as prefix:Name (uko:Container, uko-code:calls) or a full IRI."),
    ],
) -> None:
    """Describe a class, property or individual: label, comment, kind, domain, range,
    super/sub classes or properties and the module that defines it."""
    app_ctx = get_context(ctx)
    with app_ctx.session("ontology show") as out:
        info = _lookup(term)
        name = compact(info.iri)
        is_class = info.kind == "class"
        is_property = "property" in info.kind
        domains, ranges, supers, subs, types = (
            [compact(i) for i in iris] for iris in (info.domains, info.ranges, info.supers, info.subs, info.types)
        )
        if is_structured(app_ctx):
            out.data(
                "term",
                {
                    "term": name,
                    "iri": info.iri,
                    "kind": info.kind,
                    "label": info.label,
                    "comment": info.comment,
                    "domain": domains,
                    "range": ranges,
                    "supers": supers,
                    "subs": subs,
                    "types": types,
                    "module": info.module,
                },
            )
            return
        fields: dict[str, Any] = {
            "IRI": info.iri,
            "Kind": info.kind,
            "Label": info.label,
            "Comment": info.comment,
        }
        if is_property or domains or ranges:
            fields["Domain"] = ", ".join(domains)
            fields["Range"] = ", ".join(ranges)
        noun = "classes" if is_class else "properties"
        if is_class or is_property:
            fields[f"Super{noun}"] = ", ".join(supers)
            fields[f"Sub{noun}"] = ", ".join(subs)
        if types:
            fields["Types"] = ", ".join(types)
        fields["Defined in"] = info.module
        out.panel(name, fields, key="term")


# --- levels -----------------------------------------------------------------------------


def _check_target(target: str) -> None:
    """A typo in a type name would silently fall back to its namespace's map: refuse
    types the ontology does not know (prefixes, namespaces and map IRIs pass)."""
    bare = target.rstrip(":")
    if bare in PREFIXES or any(m.prefix == bare for m in list_modules()):
        return
    iri = expand_term(target)
    if iri in _known_terms().values() or any(m.namespace == iri for m in list_modules()):
        return
    raise _unknown_term(target, "agents ontology levels {}")


def _resolve(target: str, name: str) -> int:
    """The depth ``name`` (a level name or an integer) resolves to for ``target``."""
    if name.lstrip("-").isdigit():
        return resolve_depth(target, int(name))  # a negative depth is a ValidationError
    effective_levels(target)  # no map for the target: that error, not "unknown level"
    try:
        return resolve_depth(target, name)
    except NotFoundError as exc:
        matches = exc.suggestions
        raise NotFoundError(
            f"unknown detail level '{name}' for {target}{_did_you_mean(matches)}",
            suggestions=[f"agents ontology levels {target} --resolve {m}" for m in matches]
            or [f"agents ontology levels {target}"],
        ) from exc


@app.command("levels")
def levels_cmd(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Argument(
            metavar="TYPE",
            help="A UKO type (uko-py:Module, uko-doc:Section) or a module prefix (uko-py).",
        ),
    ],
    resolve: Annotated[
        str | None,
        typer.Option(
            "--resolve",
            metavar="NAME",
            help="Print only the depth the level NAME (or an integer) resolves to for TYPE.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Show the effective DetailLevelMap of a type or module: name, depth, defined-in."""
    app_ctx = get_context(ctx)
    with app_ctx.session("ontology levels") as out:
        _check_target(target)
        if resolve is not None:
            depth = _resolve(target, resolve)
            out.data("resolved", {"target": target, "name": resolve, "depth": depth}, display=str(depth))
            return
        rows = [{"name": lv.name, "depth": lv.depth, "defined_in": lv.defined_in} for lv in effective_levels(target)]
        out.data("target", target, hidden=True)
        out.table(
            f"Detail levels of {target} ({len(rows)})",
            LEVEL_COLUMNS,
            rows=rows,
            key="levels",
            empty_message=f"{target} has no named detail levels; use integer depths.",
        )


# --- check ------------------------------------------------------------------------------


def _report(out: OutputSession, files: list[Path], structured: bool) -> None:
    # Imported here: owlready2 is slow to import and only this command needs it.
    from cleveragents.tbox.consistency import check_consistency

    # A spinner on a terminal in rich; nothing in other formats or when piped.
    with out.progress("Running the HermiT reasoner"):
        report = check_consistency(files)
    unsatisfiable = [{"class": compact(iri), "iri": iri} for iri in report.unsatisfiable]
    out.data(
        "consistency",
        {
            "consistent": report.consistent,
            "ok": report.ok,
            "triples": report.triples,
            "unsatisfiable": unsatisfiable,
            "files": [str(f) for f in files],
        },
        hidden=True,
    )
    if unsatisfiable and not structured:
        out.table(
            f"Unsatisfiable classes ({len(unsatisfiable)})",
            [ColumnDef("class", "Class"), ColumnDef("iri", hidden=True)],
            rows=unsatisfiable,
            key="unsatisfiable",
        )
    if report.ok:
        out.status(f"The ontology is {report.summary()}", "ok")
    else:
        out.status(report.summary(), "error")
        out.exit_code = 1


@app.command("check")
def check_cmd(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE",
            help="Extra Turtle files (e.g. a module being written) checked with the ontology.",
            exists=True,
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check the ontology with the HermiT reasoner (needs Java): exit 1 when it is
    inconsistent or has unsatisfiable classes."""
    app_ctx = get_context(ctx)
    with app_ctx.session("ontology check") as out:
        _report(out, list(files or []), is_structured(app_ctx))
