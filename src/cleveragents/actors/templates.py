"""Jinja2 for actor files, in a sandbox (ADR-032).

Templates may read the context they are given and use the standard filters, the spec's
``yaml``/``indent``/``sum``/``selectattr`` filters and a few safe built-ins; they cannot
reach attributes outside the sandbox (``{{ ''.__class__ }}``), and a variable the context
does not define is an error rather than an empty string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import yaml
from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, UndefinedError
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from cleveragents.errors import ValidationError

MARKERS = ("{{", "{%", "{#")


def has_template(text: str) -> bool:
    return any(marker in text for marker in MARKERS)


def _yaml_filter(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False).rstrip("\n")


def _select_attribute(items: Iterable[Any], name: str) -> list[Any]:
    """The spec's ``selectattr('name')``: the named attribute (or key) of each item."""
    return [item.get(name) if isinstance(item, Mapping) else getattr(item, name, None) for item in items]


@lru_cache(maxsize=1)
def environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["yaml"] = _yaml_filter
    env.filters["selectattr"] = _select_attribute
    env.globals.update({"range": range, "abs": abs, "round": round, "len": len, "min": min, "max": max, "sum": sum})
    return env


def render(template: str, context: Mapping[str, Any], *, where: str) -> str:
    """Render ``template`` with ``context`` exposed as ``context`` (and its keys at top level).

    Every failure is a :class:`ValidationError` naming ``where`` (a file, a key path).
    """
    variables = {**context, "context": dict(context)}
    try:
        return environment().from_string(template).render(variables)
    except SecurityError as exc:
        raise ValidationError(f"{where}: the template reaches outside the sandbox ({exc})") from None
    except UndefinedError as exc:
        raise ValidationError(f"{where}: template variable undefined ({exc.message})") from None
    except TemplateSyntaxError as exc:
        raise ValidationError(f"{where}: template syntax error on line {exc.lineno}: {exc.message}") from None
    except TemplateError as exc:
        raise ValidationError(f"{where}: template error: {exc}") from None
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ValidationError(f"{where}: template error: {exc}") from None


def check(template: str, *, where: str) -> None:
    """Compile ``template`` (syntax only); rendering waits for the runtime context."""
    try:
        environment().parse(template)
    except TemplateSyntaxError as exc:
        raise ValidationError(f"{where}: template syntax error on line {exc.lineno}: {exc.message}") from None
