"""``agents diagnostics``: the health of this installation, one line per check."""

from __future__ import annotations

import typer

from cleveragents.output import ColumnDef
from cleveragents.services import diagnostics

from .graph_cmd import workspace
from .invocation import get_context

COLUMNS = [ColumnDef("name", "Check"), ColumnDef("status", "Status"), ColumnDef("detail", "Detail")]


def diagnostics_command(ctx: typer.Context) -> None:
    """Check the config, the store (opens, reads back, publication state), the content
    store's hashes, disk space, language servers and providers. Exit 1 if a check fails."""
    app_ctx = get_context(ctx)
    with app_ctx.session("diagnostics") as out:
        checks = diagnostics.run(workspace(app_ctx), app_ctx.config)
        out.table("Diagnostics", COLUMNS, rows=[c.as_dict() for c in checks], key="checks")
        failed = [c.name for c in checks if c.status == "fail"]
        warned = [c.name for c in checks if c.status == "warn"]
        if failed:
            out.status(f"{len(failed)} check(s) failed: {', '.join(failed)}", "error")
            out.exit_code = 1
        elif warned:
            out.status(f"healthy, with warnings: {', '.join(warned)}", "warn")
        else:
            out.status("every check passed", "ok")
