"""``agents init [--reset --yes]``: create the data dir and store, (re)load ontology and shapes."""

from __future__ import annotations

from typing import Annotated

import typer

from cleveragents.errors import UsageError

from .graph_cmd import workspace
from .invocation import get_context
from .rendering import record


def init(
    ctx: typer.Context,
    reset: Annotated[
        bool, typer.Option("--reset", help="Wipe the store (every graph, commit and history) first.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm --reset.")] = False,
) -> None:
    """Create the data dir and store, and load the ontology and shapes.

    An existing store keeps its data and history and gets the current ontology and shapes;
    --reset --yes wipes it first."""
    app_ctx = get_context(ctx)
    ws = workspace(app_ctx)
    if reset and not yes:
        raise UsageError(
            f"--reset deletes every graph, commit and history in {ws.store_dir}; add --yes to confirm",
            suggestions=["agents init --reset --yes"],
        )
    with app_ctx.session("init") as out:
        existed = ws.exists()
        counts = ws.initialize(reset=reset)
        record(
            out,
            app_ctx,
            "CleverAgents store",
            "init",
            [
                ("data_dir", "Data dir", str(ws.data_dir)),
                ("store", "Store", str(ws.store_dir)),
                ("config", "Config", str(ws.config_file)),
                ("ontology_triples", "Ontology triples", counts["ontology_triples"]),
                ("closure_pairs", "Closure pairs", counts["closure_pairs"]),
                ("shape_triples", "Shape triples", counts["shape_triples"]),
                ("head", "Head revision", counts["head"]),
                ("reset", "Reset", reset),
            ],
        )
        if reset:
            out.status(f"Store reset: {ws.store_dir} was wiped and re-created", "ok")
        elif existed:
            out.status("Store exists: ontology and shapes reloaded, data and history kept", "ok")
        else:
            out.status(f"Initialized a new store in {ws.store_dir}", "ok")
        out.status("Ready for use", "ok")
