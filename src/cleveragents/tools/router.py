"""The one tool router: every tool call of every actor goes through ``ToolRouter.call``.

A call is resolved by name, allowed by the context (its allowed tools, and a read-only
plan gets only read-only tools), its arguments validated against the tool's JSON Schema,
then the handler runs. Whatever happens, the actor gets a ``ToolResult``: a refusal or a
failure is ``ok=False`` with a message it can read, so the plan goes on. Each call, with
the changes it made, goes to the context's recorder (the plan's ChangeSet in the graph).
A failure of the recorder itself is not the tool's: it propagates.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from cleveragents.errors import AccessDeniedError, CleverAgentsError, ConflictError, NotFoundError, ValidationError

from .model import Handler, ToolCallRecord, ToolContext, ToolOutput, ToolResult, ToolSpec


class ToolRouter:
    def __init__(self) -> None:
        self._tools: dict[str, tuple[ToolSpec, Handler, Draft202012Validator]] = {}
        self._lock = threading.Lock()

    # -- registry ----------------------------------------------------------------------------

    def register(self, spec: ToolSpec, handler: Handler, *, replace: bool = False) -> None:
        """Add a tool. Its input schema must be a valid JSON Schema (2020-12) of an object."""
        try:
            Draft202012Validator.check_schema(spec.input_schema)
        except SchemaError as exc:
            raise ValidationError(f"tool '{spec.name}' has an invalid input schema: {exc.message}") from None
        if spec.input_schema.get("type") != "object":
            raise ValidationError(f"tool '{spec.name}': the input schema must describe an object")
        with self._lock:
            if spec.name in self._tools and not replace:
                raise ConflictError(f"a tool named '{spec.name}' is registered already")
            self._tools[spec.name] = (spec, handler, Draft202012Validator(spec.input_schema))

    def spec(self, name: str) -> ToolSpec:
        entry = self._tools.get(name)
        if entry is None:
            raise NotFoundError(f"no tool named '{name}'", suggestions=[", ".join(sorted(self._tools))])
        return entry[0]

    def specs(self, ctx: ToolContext | None = None) -> list[ToolSpec]:
        """Every tool, or with ``ctx`` the ones that context may call, by name."""
        specs = [entry[0] for _, entry in sorted(self._tools.items())]
        if ctx is None:
            return specs
        return [spec for spec in specs if self._refusal(spec, ctx) is None]

    def names(self) -> list[str]:
        return sorted(self._tools)

    # -- calls -------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        clock = time.perf_counter()
        arguments = {} if arguments is None else arguments
        result = self._dispatch(name, arguments, ctx)
        if ctx.recorder is not None:
            ctx.recorder.record(
                ToolCallRecord(
                    plan=ctx.plan,
                    tool=name,
                    arguments=arguments if isinstance(arguments, dict) else {"value": arguments},
                    result=result,
                    started=started,
                    duration_ms=round((time.perf_counter() - clock) * 1000, 3),
                    decision=ctx.decision,
                    resources={name: sb.resource.iri for name, sb in ctx.sandboxes.items() if sb.resource.iri},
                )
            )
        return result

    def _dispatch(self, name: str, arguments: Any, ctx: ToolContext) -> ToolResult:
        entry = self._tools.get(name)
        if entry is None:
            return _refused(NotFoundError(f"no tool named '{name}'; available: {', '.join(self.names())}"))
        spec, handler, validator = entry
        refusal = self._refusal(spec, ctx)
        if refusal is not None:
            return _refused(AccessDeniedError(refusal))
        if not isinstance(arguments, dict):
            return _refused(ValidationError(f"{name}: arguments must be an object, got {type(arguments).__name__}"))
        problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if problems:
            listed = "; ".join(_describe(problem) for problem in problems)
            return _refused(ValidationError(f"{name}: invalid arguments: {listed}"))
        try:
            with ctx.handler_scope(spec) if ctx.handler_scope is not None else nullcontext():
                value = handler(arguments, ctx)
        except CleverAgentsError as exc:
            return _refused(exc)
        except OSError as exc:
            return ToolResult(ok=False, error=f"{name}: {exc.strerror or exc}", error_code="OS_ERROR")
        except Exception as exc:  # a tool's bug is reported to the actor, not raised into the plan
            return ToolResult(ok=False, error=f"{name} failed: {type(exc).__name__}: {exc}", error_code="TOOL_FAILED")
        if isinstance(value, ToolOutput):
            return ToolResult(ok=True, content=value.content, changes=value.changes)
        if isinstance(value, ToolResult):
            return value
        return ToolResult(ok=True, content=value)

    @staticmethod
    def _refusal(spec: ToolSpec, ctx: ToolContext) -> str | None:
        if ctx.allowed_tools is not None and spec.name not in ctx.allowed_tools:
            return f"tool '{spec.name}' is not allowed in this context"
        if ctx.read_only and not spec.capability.read_only:
            return f"tool '{spec.name}' can modify resources and this plan is read-only"
        return None


def _refused(exc: CleverAgentsError) -> ToolResult:
    text = exc.message if not exc.detail else f"{exc.message} ({exc.detail})"
    return ToolResult(ok=False, error=text, error_code=exc.category)


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where or 'arguments'}: {error.message}"


def register_all(router: ToolRouter, tools: Iterable[tuple[ToolSpec, Handler]]) -> ToolRouter:
    for spec, handler in tools:
        router.register(spec, handler)
    return router
