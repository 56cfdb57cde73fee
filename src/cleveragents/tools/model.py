"""The tool model shared by every tool source: specs, capabilities, contexts, results.

A tool is a ``ToolSpec`` (name, description, JSON-Schema input, ``Capability``) and a
handler ``(arguments, ctx) -> content | ToolOutput``. The router (router.py) is the only
caller of handlers. A handler reports the changes it made to resources as ``Change``
records in a ``ToolOutput``; the router records them in the plan's ChangeSet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from cleveragents.errors import AccessDeniedError, ValidationError
from cleveragents.terms import ID

if TYPE_CHECKING:
    from cleveragents.sandbox import Sandbox

CHECKPOINT_SCOPES: Final = ("file", "transaction", "commit", "snapshot")


@dataclass(frozen=True)
class Capability:
    """What a tool may do (spec: Tool Capability Metadata).

    ``read_only`` tools never modify a resource; ``writes`` tools may. A read-only plan
    gets only read-only tools. ``checkpoint_scope`` says what a rollback restores for the
    tool's effects; ``side_effects`` names effects no rollback undoes; ``environment`` is
    where the tool can run (any, host, container)."""

    read_only: bool = True
    writes: bool = False
    checkpointable: bool = False
    checkpoint_scope: str | None = None
    side_effects: tuple[str, ...] = ()
    environment: str = "any"

    def __post_init__(self) -> None:
        if self.read_only and self.writes:
            raise ValueError("a capability cannot be both read_only and writes")
        if self.checkpoint_scope is not None and self.checkpoint_scope not in CHECKPOINT_SCOPES:
            raise ValueError(f"checkpoint_scope must be one of {CHECKPOINT_SCOPES}")

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "side_effects": list(self.side_effects)}


READ_ONLY: Final = Capability()
FILE_WRITE: Final = Capability(read_only=False, writes=True, checkpointable=True, checkpoint_scope="file")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    capability: Capability = READ_ONLY
    source: str = "builtin"  # builtin | plans | mcp | lsp | custom

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "capability": self.capability.as_dict(),
            "source": self.source,
        }


@dataclass(frozen=True)
class Change:
    """One change a tool made to a resource in the sandbox (an entry of the ChangeSet).

    ``kind``: create, modify, delete, move, mkdir. Hashes are sha256 of the content before
    and after (None where there is no file)."""

    kind: str
    resource: str
    path: str
    previous_path: str | None = None
    before: str | None = None
    after: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ToolOutput:
    """A handler's result when it changed something: the content for the actor and the changes."""

    content: Any
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class ToolResult:
    """What the actor gets back. A refused or failed call is ``ok=False`` with a readable
    ``error`` (and ``error_code``, the spec's category such as ACCESS_DENIED), never an
    exception."""

    ok: bool
    content: Any = None
    error: str | None = None
    error_code: str | None = None
    changes: tuple[Change, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "content": self.content,
            "error": self.error,
            "error_code": self.error_code,
            "changes": [c.as_dict() for c in self.changes],
        }


@dataclass(frozen=True)
class ToolCallRecord:
    """One call as the recorder sees it (after it ran, or was refused)."""

    plan: str
    tool: str
    arguments: Mapping[str, Any]
    result: ToolResult
    started: str  # ISO time
    duration_ms: float
    decision: str | None = None
    # Resource name -> IRI of the context's sandboxes, for the changes' ca:changedResource.
    resources: Mapping[str, str] = field(default_factory=dict)


class CallRecorder(Protocol):
    """Where calls and their changes go (tools.recording.GraphRecorder writes them to the graph)."""

    def record(self, call: ToolCallRecord) -> None: ...


Handler = Callable[[dict[str, Any], "ToolContext"], Any]


@dataclass
class ToolContext:
    """Everything a call may use: the plan, its sandboxes by resource name (lazy: a
    sandbox is created on its first use), the access policy and the recorder.

    ``allowed_tools``: names the context may call (None: every registered tool the
    policy permits). ``decision``: the Execute decision the calls belong to, if any."""

    plan: str
    sandboxes: Mapping[str, Sandbox] = field(default_factory=dict)
    read_only: bool = False
    allowed_tools: frozenset[str] | None = None
    recorder: CallRecorder | None = None
    decision: str | None = None
    # Free slots for tools other packages register (plans' record_decision needs its recorder).
    extras: dict[str, Any] = field(default_factory=dict)
    # Entered around each handler (not around the recording of the call): a subplan running
    # beside others gives up its turn on the store while a handler works in its sandbox.
    handler_scope: Callable[[ToolSpec], AbstractContextManager[object]] | None = None

    @property
    def plan_iri(self) -> str:
        return plan_iri(self.plan)

    def sandbox(self, resource: str | None = None) -> Sandbox:
        """The sandbox of ``resource`` (by name; optional when the plan has exactly one)."""
        if resource is None:
            if len(self.sandboxes) == 1:
                return next(iter(self.sandboxes.values()))
            names = ", ".join(sorted(self.sandboxes)) or "none"
            raise ValidationError(f"name the resource: this plan has several sandboxes ({names})")
        found = self.sandboxes.get(resource) or self.sandboxes.get(f"local/{resource}")
        if found is None:
            names = ", ".join(sorted(self.sandboxes)) or "none"
            raise AccessDeniedError(f"resource '{resource}' is not in this plan's scope (resources: {names})")
        return found


def plan_iri(plan: str) -> str:
    """A plan's IRI from its IRI or ULID."""
    return plan if "://" in plan else f"{ID}plan/{plan}"
