"""The ``agents`` (alias ``cleveragents``) command line: global options, sub-command
registration and the entry point that turns every failure into output and an exit code.

Exit codes: 0 ok; 1 error (the error class decides, e.g. UsageError is 2); 2 usage error
from the command line parser; 130 cancelled (Ctrl+C).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from cleveragents import __version__
from cleveragents.errors import Interrupted, UsageError
from cleveragents.output import OutputSession, available_formats
from cleveragents.output.failures import (
    exit_code_for,
    is_cancellation,
    mark_rendered,
    system_exit_code,
    was_rendered,
)
from cleveragents.output.human import CANCELLED_MESSAGE
from cleveragents.processes import terminate_as_interrupt

from .invocation import AppContext

# Recent typer vendors click as typer._click; older typer depends on click itself.
try:
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException  # type: ignore[no-redef]

PROG = "agents"


# Every command: its name, then the module under cli/ and the attribute there (a Typer
# group or a command function). A module is imported only when its command runs or a help
# page lists it, so `agents graph query` does not pay for the plan, actor and server stacks.
COMMANDS: dict[str, tuple[str, str]] = {
    "config": ("config_cmd", "app"),
    "init": ("init_cmd", "init"),
    "project": ("project_cmd", "app"),
    "resource": ("resource_cmd", "app"),
    "graph": ("graph_cmd", "app"),
    "query": ("query_cmd", "app"),
    "ontology": ("ontology_cmd", "app"),
    "lsp": ("lsp_cmd", "app"),
    "context": ("context_cmd", "app"),
    "action": ("action_cmd", "app"),
    "plan": ("plan_cmd", "app"),
    "invariant": ("invariant_cmd", "app"),
    "providers": ("providers_cmd", "app"),
    "actor": ("actor_cmd", "app"),
    "tool": ("tool_cmd", "app"),
    "validation": ("tool_cmd", "validation_app"),
    "session": ("session_cmd", "app"),
    "skill": ("skill_cmd", "app"),
    "mcp": ("mcp_cmd", "app"),
    "serve": ("serve_cmd", "serve_command"),
    "index": ("index_cmd", "index_command"),
    "show": ("show_cmd", "show_command"),
    "diagnostics": ("diagnostics_cmd", "diagnostics_command"),
}


def load_command(name: str) -> Any:
    """The click command for ``name`` of COMMANDS, its module imported now."""
    module, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    if isinstance(target, typer.Typer):
        command = typer.main.get_group(target)  # a group even when it holds one command
    else:
        single = typer.Typer()
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class AgentsGroup(TyperGroup):
    """Root group: commands load on first use (see COMMANDS); Ctrl+C inside any command
    becomes ``Interrupted`` so that ``run()`` sees it (typer would otherwise swallow it
    into a bare exit code 130); ``--format`` is accepted after any command (see
    ``hoist_format``)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(name for name in COMMANDS if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(load_command(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_format(self, ctx, args))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            cancelled = Interrupted(CANCELLED_MESSAGE)
            if was_rendered(exc):
                mark_rendered(cancelled)
            raise cancelled from exc


# Global options that may also be written after the command.
HOISTED_OPTIONS = ("--format", "--wait")


def hoist_format(root: Any, ctx: Any, args: list[str]) -> list[str]:
    """Move ``--format X`` (and ``--wait S``) written after a command without an option of
    that name to the global options, where it is read (after any given there, so the one
    written last wins, and a bad value is rejected as such): the spec writes both
    ``agents --format json project list`` and ``agents project list --format json``."""
    command, end, first = root, 0, 0
    for i, token in enumerate(args):
        if token == "--":
            break
        sub = command.get_command(ctx, token) if hasattr(command, "get_command") else None
        if sub is not None:
            first = i if command is root else first
            command, end = sub, i + 1
    if command is root:
        return args
    own = {opt for p in command.params for opt in getattr(p, "opts", ())}
    hoisted = [name for name in HOISTED_OPTIONS if name not in own]
    head, tail, moved = args[:end], [], []
    rest = iter(args[end:])
    for token in rest:
        if token == "--":
            tail += [token, *rest]
        elif token in hoisted:
            moved += [token, next(rest, "")]
        elif any(token.startswith(name + "=") for name in hoisted):
            moved.append(token)
        else:
            tail.append(token)
    # Placed after the global options already given, so the one written later wins.
    return [*head[:first], *moved, *head[first:], *tail] if moved else args


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"CleverAgents version {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Data directory (store, global config). Default: $CLEVERAGENTS_DATA_DIR, else ~/.cleveragents.",
            show_default=False,
        ),
    ] = None,
    config_path: Annotated[
        Path | None,
        typer.Option("--config-path", help="Global config file. Default: <data-dir>/config.toml."),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="Output format: auto, "
            + ", ".join(available_formats())
            + ". Default: $CLEVERAGENTS_FORMAT, config 'format', else rich on a "
            "terminal and plain when piped.",
            show_default=False,
        ),
    ] = None,
    wait: Annotated[
        float | None,
        typer.Option(
            "--wait",
            min=0,
            help="Seconds a writer waits for another writer to finish before STORE_LOCKED. "
            "Default: config store.writer_wait (300).",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """CleverAgents KG: a knowledge graph of code, documents, plans and decisions."""
    app_ctx = ctx.ensure_object(AppContext)
    app_ctx.command = ctx.invoked_subcommand or PROG
    app_ctx.resolve(data_dir=data_dir, config_path=config_path, format_flag=output_format, writer_wait=wait)


def build_app() -> typer.Typer:
    """A fresh app; its commands (COMMANDS) load when first used (tests build their own)."""
    app = typer.Typer(
        name=PROG,
        cls=AgentsGroup,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,
    )
    app.callback()(_root)
    return app


app = build_app()


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass


def _fail(state: AppContext, exc: BaseException) -> int:
    """Render ``exc`` unless a session already did; return its exit code."""
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
        return 1
    if not was_rendered(exc):
        OutputSession(state.command, state.error_format()).abort(exc)
    if state.debug and not is_cancellation(exc):
        traceback.print_exception(exc, file=sys.stderr)
    return exit_code_for(exc)


def _usage_error(exc: ClickException) -> UsageError:
    """The parser's complaint in the spec's form (``Error [400] USAGE: ...``), with the
    help command of the command it was parsing as the suggestion."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else PROG
    return UsageError(exc.format_message(), suggestions=[f"{command} --help"])


def _format_in(args: list[str]) -> str | None:
    """The ``--format`` value written anywhere on a command line that did not parse."""
    for i, token in enumerate(args):
        if token == "--":
            break
        if token == "--format" and i + 1 < len(args):
            return args[i + 1]
        if token.startswith("--format="):
            return token.split("=", 1)[1]
    return None


def run(argv: Sequence[str] | None = None, *, cli: typer.Typer | None = None) -> int:
    """Console-script entry point (``agents``/``cleveragents``); returns the exit code."""
    command = typer.main.get_command(cli or app)
    state = AppContext()
    if argv is None:  # the real command, not a test calling run(): SIGTERM unwinds like Ctrl+C
        terminate_as_interrupt()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = command.main(args=args, prog_name=PROG, standalone_mode=False, obj=state)
    except ClickException as exc:  # usage errors (exit 2) and other parser errors
        written = _format_in(args)
        if written and written != state.format_flag:  # a --format the parser never reached
            state.format, state.format_flag = None, written
        # typer vendors click in some versions: the caught class is one of two of the same shape
        return _fail(state, _usage_error(exc))  # pyright: ignore[reportArgumentType]
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        return 1
    except SystemExit as exc:
        return system_exit_code(exc)
    except BaseException as exc:  # the one place every failure is mapped
        return _fail(state, exc)
    # Non-standalone click returns the exit code of typer.Exit, or the command's value.
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


if __name__ == "__main__":
    sys.exit(run())
