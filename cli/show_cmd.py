"""``agents show IRI --depth LEVEL [--as-of X]``: one node rendered at a DetailDepth."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.indexing import renderings
from cleveragents.services import indexing

from .graph_cmd import workspace
from .invocation import get_context
from .rendering import is_structured


def show_command(
    ctx: typer.Context,
    iri: Annotated[str, typer.Argument(help="IRI of an indexed file or entity.")],
    depth: Annotated[
        str | None,
        typer.Option(
            "--depth",
            "-d",
            help="A level name of the node's DetailLevelMap, or an integer. Default: the type's deepest "
            "level (FULL_SOURCE for code, FULL_CONFIG for configuration, ...).",
            show_default=False,
        ),
    ] = None,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Revision number, ISO time or external id (git sha).")
    ] = None,
) -> None:
    """Render one node from stored content, at a detail level, now or at a past revision."""
    app_ctx = get_context(ctx)
    with app_ctx.session("show") as out:
        rendering = renderings.render(
            workspace(app_ctx),
            iri.strip("<>"),
            depth,
            indexing.analyzer_set(str(app_ctx.config.value("analyzers.path"))),
            as_of=as_of,
        )
        if is_structured(app_ctx):
            out.data("rendering", rendering.as_dict())
        else:
            out.status(
                f"{rendering.path} {rendering.range or ''} · {rendering.level} (depth {rendering.depth}) "
                f"at revision {rendering.revision}"
            )
            out.text(rendering.text, key="text")
