"""Action arguments: the inputs schema an action declares, checking the values a plan is
used with (one error naming every bad argument and its expected type), and substituting
them into the description and definition of done (Jinja2, sandboxed, strict)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from cleveragents.errors import ValidationError

ARG_TYPES: Final = ("string", "int", "float", "bool", "path")
_ALIASES: Final = {"str": "string", "integer": "int", "number": "float", "boolean": "bool"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


@dataclass(frozen=True)
class ArgumentSpec:
    name: str
    type: str = "string"
    required: bool = False
    description: str = ""
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    choices: tuple[str, ...] = ()
    default: str | None = None

    def expected(self) -> str:
        """The expected type in words, with its bounds and choices."""
        out = self.type
        if self.minimum is not None or self.maximum is not None:
            low = "" if self.minimum is None else f"{self.minimum:g}"
            high = "" if self.maximum is None else f"{self.maximum:g}"
            out += f" in [{low}, {high}]"
        if self.choices:
            out += " (one of " + ", ".join(self.choices) + ")"
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required}
        if self.description:
            out["description"] = self.description
        if self.minimum is not None:
            out["min"] = float(self.minimum)
        if self.maximum is not None:
            out["max"] = float(self.maximum)
        if self.choices:
            out["choices"] = list(self.choices)
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.items.append(text)


def _number(value: Any, what: str) -> Decimal:
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise ValidationError(f"{what}: '{value}' is not a number") from None


def spec_from_mapping(name: str, body: Mapping[str, Any] | str | None) -> ArgumentSpec:
    """One argument of an action YAML's ``args`` (``name: {type, required, min, max,
    choices, default, description}`` or ``name: type``)."""
    if not _NAME.fullmatch(name):
        raise ValidationError(f"argument name '{name}' must be an identifier (letters, digits, '_')")
    if body is None or isinstance(body, str):
        body = {"type": body or "string"}
    unknown = set(body) - {"type", "required", "min", "max", "minimum", "maximum", "choices", "default", "description"}
    if unknown:
        raise ValidationError(f"argument '{name}': unknown keys {', '.join(sorted(unknown))}")
    kind = str(body.get("type", "string")).lower()
    kind = _ALIASES.get(kind, kind)
    if kind not in ARG_TYPES:
        raise ValidationError(f"argument '{name}': type '{kind}' is not one of {', '.join(ARG_TYPES)}")
    low = body.get("min", body.get("minimum"))
    high = body.get("max", body.get("maximum"))
    default = body.get("default")
    return ArgumentSpec(
        name=name,
        type=kind,
        required=bool(body.get("required", False)),
        description=str(body.get("description", "")),
        minimum=None if low is None else _number(low, f"argument '{name}' min"),
        maximum=None if high is None else _number(high, f"argument '{name}' max"),
        choices=tuple(str(c) for c in body.get("choices") or ()),
        default=None if default is None else str(default).lower() if isinstance(default, bool) else str(default),
    )


def spec_from_cli(text: str) -> ArgumentSpec:
    """``name:type[:required|optional[:description]]``, as ``action create --arg`` takes it."""
    parts = text.split(":", 3)
    name = parts[0].strip()
    body: dict[str, Any] = {"type": parts[1].strip() if len(parts) > 1 and parts[1].strip() else "string"}
    if len(parts) > 2:
        flag = parts[2].strip().lower()
        if flag not in {"required", "optional", ""}:
            raise ValidationError(f"argument spec '{text}': the third part is 'required' or 'optional', not '{flag}'")
        body["required"] = flag == "required"
    if len(parts) > 3:
        body["description"] = parts[3].strip()
    return spec_from_mapping(name, body)


def _convert(spec: ArgumentSpec, raw: Any, problems: _Problems) -> Any:
    value: Any
    text = str(raw).strip()
    if spec.type == "int":
        try:
            value = int(text)
        except ValueError:
            problems.add(f"{spec.name}: '{raw}' is not an int (expected {spec.expected()})")
            return None
    elif spec.type == "float":
        try:
            value = float(text)
        except ValueError:
            problems.add(f"{spec.name}: '{raw}' is not a float (expected {spec.expected()})")
            return None
    elif spec.type == "bool":
        if isinstance(raw, bool):
            value = raw
        elif text.lower() in _TRUE | _FALSE:
            value = text.lower() in _TRUE
        else:
            problems.add(f"{spec.name}: '{raw}' is not a bool (expected true or false)")
            return None
    else:
        value = str(raw)
        if spec.type == "path" and not value:
            problems.add(f"{spec.name}: an empty path (expected {spec.expected()})")
            return None
    if spec.type in {"int", "float"}:
        number = Decimal(str(value))
        if (spec.minimum is not None and number < spec.minimum) or (spec.maximum is not None and number > spec.maximum):
            problems.add(f"{spec.name}: {value} is out of bounds (expected {spec.expected()})")
            return None
    if spec.choices and str(value) not in spec.choices:
        problems.add(f"{spec.name}: '{value}' is not allowed (expected {spec.expected()})")
        return None
    return value


def bind(action: str, specs: tuple[ArgumentSpec, ...], given: Mapping[str, Any]) -> dict[str, Any]:
    """The typed values of a plan's arguments, defaults filled in; every missing, unknown
    or ill-typed argument is named in one ValidationError."""
    problems = _Problems()
    known = {s.name: s for s in specs}
    for name in sorted(set(given) - set(known)):
        expected = ", ".join(f"{s.name} ({s.expected()})" for s in specs) or "none"
        problems.add(f"{name}: not an argument of {action} (its arguments: {expected})")
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.name in given:
            converted = _convert(spec, given[spec.name], problems)
            if converted is not None:
                values[spec.name] = converted
        elif spec.default is not None:
            converted = _convert(spec, spec.default, problems)
            if converted is not None:
                values[spec.name] = converted
        elif spec.required:
            problems.add(f"{spec.name}: missing (expected {spec.expected()})")
    if problems.items:
        raise ValidationError(
            f"invalid arguments for action {action}: " + "; ".join(problems.items),
            data={"problems": problems.items},
            suggestions=[f"agents action show {action}"],
        )
    return values


def parse_pairs(pairs: list[str]) -> dict[str, str]:
    """``--arg name=value`` pairs."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValidationError(f"--arg '{pair}' is not name=value")
        out[name.strip()] = value
    return out


_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def substitute(template: str, values: Mapping[str, Any], *, what: str) -> str:
    """``{{ name }}`` placeholders replaced by the plan's argument values."""
    if "{{" not in template and "{%" not in template:
        return template
    try:
        return _ENV.from_string(template).render(**values)
    except TemplateError as exc:
        raise ValidationError(f"cannot substitute the arguments into the {what}: {exc}") from None
