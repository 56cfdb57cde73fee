"""Validation results: one row per violated constraint, and their readable rendering."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from cleveragents.terms import SH, compact

SEVERITY_ORDER = {SH + "Violation": 0, SH + "Warning": 1, SH + "Info": 2}


@dataclass(frozen=True, order=True)
class Violation:
    """One SHACL validation result.

    ``focus_node`` is a bare IRI, ``_:label`` for a blank node, or an N-Triples literal;
    ``result_path`` is a SPARQL property path (``<p>``, ``^<p>``, ``<a>/<b>`` ...);
    ``value`` is in N-Triples form; ``constraint`` and ``severity`` are full IRIs.
    """

    focus_node: str
    result_path: str | None
    constraint: str
    message: str
    value: str | None
    shape: str
    severity: str = SH + "Violation"

    @property
    def is_violation(self) -> bool:
        """True for sh:Violation (warnings and infos do not reject a commit)."""
        return self.severity == SH + "Violation"

    def key(self) -> tuple[str, str, str, str]:
        """What two validators must agree on: focus, path, component, value."""
        return (self.focus_node, self.result_path or "", self.constraint, self.value or "")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sort_violations(violations: Iterable[Violation]) -> list[Violation]:
    return sorted(violations, key=lambda v: (SEVERITY_ORDER.get(v.severity, 3), v.key(), v.shape, v.message))


def _short(text: str) -> str:
    """IRIs (bare or in <...>) shortened with the known prefixes, for reading."""
    if re.fullmatch(r"[a-z][a-z0-9+.-]*:[^\s<>\"]*", text):
        return compact(text)
    return re.sub(r"<([^<>\s]*)>", lambda m: c if (c := compact(m.group(1))) != m.group(1) else m.group(0), text)


def render_report(violations: Iterable[Violation]) -> str:
    """Readable multi-line text: a headline, then one block per result."""
    rows = sort_violations(set(violations))
    if not rows:
        return "Conforms: no SHACL violations."
    counts: dict[str, int] = {}
    for v in rows:
        name = v.severity.removeprefix(SH)
        counts[name] = counts.get(name, 0) + 1
    summary = ", ".join(f"{n} {name.lower()}{'s' if n != 1 else ''}" for name, n in counts.items())
    lines = [f"SHACL report: {summary}"]
    for v in rows:
        lines.append("")
        lines.append(f"[{v.severity.removeprefix(SH)}] {v.message}")
        lines.append(f"  focus node: {_short(v.focus_node)}")
        if v.result_path:
            lines.append(f"  path:       {_short(v.result_path)}")
        lines.append(f"  constraint: {compact(v.constraint)}")
        if v.value is not None:
            lines.append(f"  value:      {_short(v.value)}")
        lines.append(f"  shape:      {_short(v.shape)}")
    return "\n".join(lines)
