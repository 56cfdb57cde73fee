"""The one tool router and the built-in resource tools.

Every tool call of a plan (built-in resource tools in the sandbox, tools other packages
register such as plans' ``record_decision``) goes through ``ToolRouter.call``, which
validates the arguments against the tool's JSON Schema, enforces the context's access
policy, keeps paths inside the sandbox and records the call and its changes.

    router = default_router()
    router.register(ToolSpec("record_decision", ..., schema, READ_ONLY, source="plans"), handler)
    ctx = ToolContext(plan=plan_iri, sandboxes={"local/repo": Sandbox.open(data_dir, plan_id, res)},
                      read_only=action.read_only, recorder=GraphRecorder(session.commit))
    result = router.call("write_file", {"path": "src/a.py", "content": "..."}, ctx)
"""

from .builtin import BUILTIN_TOOLS
from .model import (
    FILE_WRITE,
    READ_ONLY,
    CallRecorder,
    Capability,
    Change,
    Handler,
    ToolCallRecord,
    ToolContext,
    ToolOutput,
    ToolResult,
    ToolSpec,
    plan_iri,
)
from .recording import GraphRecorder, change_set_iri
from .router import ToolRouter, register_all


def default_router() -> ToolRouter:
    """A router with the built-in resource tools registered."""
    return register_all(ToolRouter(), BUILTIN_TOOLS)


__all__ = [
    "BUILTIN_TOOLS",
    "FILE_WRITE",
    "READ_ONLY",
    "CallRecorder",
    "Capability",
    "Change",
    "GraphRecorder",
    "Handler",
    "ToolCallRecord",
    "ToolContext",
    "ToolOutput",
    "ToolResult",
    "ToolRouter",
    "ToolSpec",
    "change_set_iri",
    "default_router",
    "plan_iri",
]
