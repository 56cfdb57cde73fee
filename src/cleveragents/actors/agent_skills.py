"""Agent Skills (agentskills.io): a folder with a ``SKILL.md``, loaded by progressive disclosure.

``SKILL.md`` is YAML front matter (``name``, ``description``; optional ``license``,
``compatibility``, ``metadata``, ``allowed-tools``) then Markdown instructions. As the
standard orders it, a run sees three levels:

1. **Metadata** of every skill the actor may use, in its system prompt
   (``<available_agent_skills>``), ~50-100 tokens each;
2. **Instructions**, the Markdown body, when the model calls ``activate_skill``;
3. **Resources**, the folder's other files (``scripts/``, ``references/``, ``assets/``),
   read one at a time with ``read_skill_file``, confined to the skill's folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import yaml

from cleveragents.actors.runtime import ToolBelt, ToolDescription
from cleveragents.errors import NotFoundError, ValidationError

SKILL_FILE = "SKILL.md"
ACTIVATE = "activate_skill"
READ_FILE = "read_skill_file"
MAX_FILE_BYTES = 200_000
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


@dataclass(frozen=True)
class AgentSkill:
    name: str
    description: str
    instructions: str
    root: Path
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()

    def files(self) -> list[str]:
        """The folder's other files (its resources), relative to the folder."""
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in self.root.rglob("*")
            if p.is_file() and p.name != SKILL_FILE and not any(part.startswith(".") for part in p.parts)
        )

    def front_matter(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.license:
            out["license"] = self.license
        if self.compatibility:
            out["compatibility"] = self.compatibility
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        if self.allowed_tools:
            out["allowed-tools"] = " ".join(self.allowed_tools)
        return out


def _split(text: str, where: Path) -> tuple[str, str, int]:
    """Front matter, body, and the line the body starts on."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValidationError(f"{where}:1: SKILL.md starts with YAML front matter between '---' lines")
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2
    raise ValidationError(f"{where}:1: the front matter is not closed by a '---' line")


def load(folder: Path) -> AgentSkill:
    """Parse and check a skill folder as the agentskills.io specification defines it."""
    folder = folder.expanduser().resolve()
    where = folder / SKILL_FILE
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValidationError(f"{folder}: not an Agent Skill folder (no {SKILL_FILE})") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {where}: {exc.strerror}") from None
    head, body, _ = _split(text, where)
    try:
        data = yaml.safe_load(head) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise ValidationError(f"{where}:{line}: the front matter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"{where}:2: the front matter is a mapping (name:, description:)")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ValidationError(f"{where}: unknown front matter field(s) {unknown} (allowed: {sorted(_FIELDS)})")
    name = data.get("name")
    if not isinstance(name, str) or not (1 <= len(name) <= 64) or not _NAME.match(name):
        raise ValidationError(
            f"{where}: name: 1-64 lowercase letters, digits and single hyphens, not starting or ending with one "
            f"(got {name!r})"
        )
    if name != folder.name:
        raise ValidationError(f"{where}: name '{name}' must match the folder's name '{folder.name}'")
    description = data.get("description")
    if not isinstance(description, str) or not (1 <= len(description.strip()) <= 1024):
        raise ValidationError(f"{where}: description: 1-1024 characters saying what the skill does and when to use it")
    compatibility = data.get("compatibility", "")
    if not isinstance(compatibility, str) or len(compatibility) > 500:
        raise ValidationError(f"{where}: compatibility: a string of at most 500 characters")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValidationError(f"{where}: metadata: a mapping of strings to strings")
    allowed = data.get("allowed-tools", "")
    if not isinstance(allowed, str):
        raise ValidationError(f"{where}: allowed-tools: a space-separated string of tool names")
    return AgentSkill(
        name=name,
        description=description.strip(),
        instructions=body.strip(),
        root=folder,
        license=str(data.get("license") or ""),
        compatibility=compatibility,
        metadata={str(k): str(v) for k, v in metadata.items()},
        allowed_tools=tuple(allowed.split()),
    )


def catalog(skills: Iterable[AgentSkill]) -> str:
    """Level 1: the skills' metadata for the system prompt."""
    rows = [
        "<available_agent_skills>",
        *(
            f"  <agent_skill>\n    <name>{escape(s.name)}</name>\n"
            f"    <description>{escape(s.description)}</description>\n  </agent_skill>"
            for s in skills
        ),
        "</available_agent_skills>",
    ]
    return (
        "You can use these Agent Skills. When a task matches one, call activate_skill with its name "
        "to get its instructions, and follow them; read_skill_file reads the files they mention.\n" + "\n".join(rows)
    )


ACTIVATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "The skill's name."}},
    "required": ["name"],
    "additionalProperties": False,
}
READ_FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's name."},
        "path": {"type": "string", "description": "A file of the skill's folder, e.g. references/REFERENCE.md."},
    },
    "required": ["name", "path"],
    "additionalProperties": False,
}
TOOLS = [
    ToolDescription(ACTIVATE, "Load an Agent Skill's instructions (and the list of its files).", ACTIVATE_SCHEMA),
    ToolDescription(READ_FILE, "Read one file of an activated Agent Skill's folder.", READ_FILE_SCHEMA),
]


class SkillBox:
    """The Agent Skills of one run: the prompt catalog and the two tools that disclose them."""

    def __init__(self, skills: Iterable[AgentSkill]) -> None:
        self.skills: Mapping[str, AgentSkill] = {s.name: s for s in skills}
        self.activated: list[str] = []

    def prompt(self) -> str:
        return catalog(self.skills.values()) if self.skills else ""

    def tools(self) -> list[ToolDescription]:
        return list(TOOLS) if self.skills else []

    def handles(self, tool: str) -> bool:
        return tool in (ACTIVATE, READ_FILE) and bool(self.skills)

    def _skill(self, name: str) -> AgentSkill:
        skill = self.skills.get(name)
        if skill is None:
            raise NotFoundError(f"no Agent Skill '{name}' (available: {', '.join(sorted(self.skills))})")
        return skill

    def call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        skill = self._skill(str(arguments["name"]))
        if tool == ACTIVATE:
            self.activated.append(skill.name)
            return {"name": skill.name, "instructions": skill.instructions, "files": skill.files()}
        path = (skill.root / str(arguments["path"])).resolve()
        if not path.is_relative_to(skill.root) or not path.is_file():
            raise NotFoundError(f"skill '{skill.name}' has no file '{arguments['path']}' (files: {skill.files()})")
        data = path.read_bytes()[:MAX_FILE_BYTES]
        return {"path": path.relative_to(skill.root).as_posix(), "content": data.decode("utf-8", errors="replace")}


def with_skills(belt: ToolBelt, box: SkillBox) -> ToolBelt:
    """``belt`` plus the tools disclosing ``box``'s skills (the same belt when there are none)."""
    if not box.skills:
        return belt

    def call(name: str, arguments: dict[str, Any]) -> Any:
        return box.call(name, arguments) if box.handles(name) else belt.call(name, arguments)

    return ToolBelt([*belt.tools, *box.tools()], call)
