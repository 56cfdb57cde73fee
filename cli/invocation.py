"""The per-invocation context every command shares (config, data dir, output format), and the output-session helper.

A command gets it with ``app_ctx = get_context(ctx)`` and writes its output with
``with app_ctx.session("group verb") as out: ...``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import typer

from cleveragents.config import Config, resolve_data_dir
from cleveragents.output import OutputSession, resolve_format
from cleveragents.output.formats import AUTO

DEBUG_ENV = "CLEVERAGENTS_DEBUG"


class AppContext:
    """Resolved global options. ``run()`` creates it empty and passes it as the click
    context object, so it can still render an error after the command has failed."""

    def __init__(self) -> None:
        self.command = "agents"  # updated by the root callback and by session()
        self.format_flag: str | None = None
        self.format: str | None = None  # concrete format, once resolved
        self._config: Config | None = None

    def resolve(
        self,
        *,
        data_dir: Path | None = None,
        config_path: Path | None = None,
        format_flag: str | None = None,
        writer_wait: float | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.format_flag = format_flag
        env = os.environ if env is None else env
        self._config = Config(
            resolve_data_dir(data_dir, env),
            config_path=config_path,
            cwd=cwd,
            env=env,
            flags={"format": format_flag, "store.writer_wait": writer_wait},
        )
        self.format = resolve_format(self._config.value("format"), sys.stdout)

    @property
    def config(self) -> Config:
        if self._config is None:
            raise RuntimeError("the CLI context is used before the root callback resolved it")
        return self._config

    @property
    def data_dir(self) -> Path:
        return self.config.data_dir

    @property
    def debug(self) -> bool:
        return os.environ.get(DEBUG_ENV, "").lower() in {"1", "true", "yes", "on"}

    def error_format(self) -> str:
        """The format for an error that may have happened before (or while) resolving:
        the resolved one, else the flag or env var when valid, else terminal detection."""
        if self.format is not None:
            return self.format
        for candidate in (self.format_flag, os.environ.get("CLEVERAGENTS_FORMAT")):
            try:
                return resolve_format(candidate or AUTO, sys.stdout)
            except ValueError:
                continue
        return resolve_format(AUTO, sys.stdout)

    @contextmanager
    def session(self, command: str) -> Iterator[OutputSession]:
        """An OutputSession in the resolved format. Errors raised inside are rendered by
        the session and re-raised (``run()`` maps them to exit codes). To end with a
        non-zero exit code without an error, set ``out.exit_code`` or raise typer.Exit."""
        self.command = command
        out = OutputSession(command, self.format or self.error_format())
        with out:
            try:
                yield out
            except typer.Exit as exc:  # a deliberate exit code, not a failure to render
                out.exit_code = exc.exit_code
        if out.exit_code:
            raise typer.Exit(out.exit_code)


def get_context(ctx: typer.Context) -> AppContext:
    """The AppContext of this invocation (set up by the root callback in main.py)."""
    app_ctx = ctx.find_object(AppContext)
    if app_ctx is None or app_ctx.format is None:
        raise RuntimeError("the CLI context is used before the root callback resolved it")
    return app_ctx
