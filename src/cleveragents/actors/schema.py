"""The JSON Schema of an actor file (the spec's v3 multi-actor configuration).

Unknown keys are errors, so a typo (``sytem_prompt``) is caught with its line and key
path instead of being ignored. Keys the spec defines for features this runtime does not
execute (stream routes, merges, splits, pipelines, templates) are accepted and kept;
``actors/definition.py`` refuses to *run* them.
"""

from __future__ import annotations

from typing import Any

NAME_PATTERN = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
LOCAL_NAME = r"^[A-Za-z_][A-Za-z0-9_-]*$"

_string_list: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

_argument: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["string", "integer", "number", "boolean", "array", "object"]},
        "description": {"type": "string"},
        "required": {"type": "boolean"},
        "default": {},
    },
}

_inline_tool: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "parameters": {"type": "array"},
        "input_schema": {"type": "object"},
        "code": {"type": "string"},
        "capability": {"type": "object"},
    },
    "additionalProperties": False,
}

_llm_config: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "provider": {"type": "string"},
        "model": {"type": "string"},
        "actor": {"type": "string"},
        "system_prompt": {"type": "string"},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "max_tokens": {"type": "integer", "minimum": 1},
        "memory_enabled": {"type": "boolean"},
        "max_history": {"type": "integer", "minimum": 0},
        "unsafe": {"type": "boolean"},
        "options": {"type": "object"},
        "tools": {"type": "array", "items": {"anyOf": [{"type": "string"}, _inline_tool]}},
        "response_format": {"type": "object"},
        # CleverAgents additions: endpoint, window sizing, call policy, tool-failure limit.
        "base_url": {"type": "string"},
        "api_key_env": {"type": "string"},
        "context_window": {"type": "integer", "minimum": 1},
        "reserved_output": {"type": "integer", "minimum": 0},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "max_retries": {"type": "integer", "minimum": 0},
        "max_tool_failures": {"type": "integer", "minimum": 1},
    },
}

_lsp: dict[str, Any] = {
    "anyOf": [
        _string_list,
        {
            "type": "object",
            "required": ["languages"],
            "additionalProperties": False,
            "properties": {"languages": _string_list},
        },
        {
            "type": "object",
            "required": ["auto"],
            "additionalProperties": False,
            "properties": {"auto": {"type": "boolean"}},
        },
    ]
}

_actor: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["llm", "agent", "graph", "tool"]},
        "description": {"type": "string"},
        "config": _llm_config,
        "skills": _string_list,
        "tools": {"type": "array", "items": {"anyOf": [{"type": "string"}, _inline_tool]}},
        "lsp": _lsp,
        "lsp_capabilities": {"anyOf": [{"const": "all"}, _string_list]},
        "lsp_context_enrichment": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "diagnostics": {"type": "boolean"},
                "type_annotations": {"type": "boolean"},
                "max_diagnostics_per_file": {"type": "integer", "minimum": 0},
            },
        },
        "context_view": {"enum": ["strategist", "executor", "reviewer", "full"]},
        "memory": {"type": "object"},
        "context": {"type": "object"},
        "env_vars": {"type": "object"},
        "arguments": {"type": "object", "additionalProperties": _argument},
        # A graph actor runs one of the file's routes.
        "route": {"type": "string"},
    },
}

_condition: dict[str, Any] = {
    "type": "object",
    "required": ["context_value"],
    "additionalProperties": False,
    "properties": {"context_value": {"type": "string"}, "equals": {}, "not_equals": {}},
}

_rule: dict[str, Any] = {
    "type": "object",
    "required": ["type", "match", "target"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["prefix", "contains", "suffix"]},
        "match": {"type": "string"},
        "target": {"type": "string"},
        "strip_match": {"type": "boolean"},
    },
}

_node: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "additionalProperties": False,
    "properties": {
        "type": {
            "enum": [
                "agent",
                "tool",
                "subgraph",
                "start",
                "START",
                "end",
                "END",
                "message_router",
                "conditional",
                "function",
            ]
        },
        "agent": {"type": "string"},
        "tool": {"type": "string"},
        "tools": _string_list,
        "arguments": {"type": "object"},
        "override": {"type": "object"},
        "subgraph": {"type": "string"},
        "rules": {"type": "array", "items": _rule},
        "function": {"type": "string"},
        "condition": {"type": "object"},
        "description": {"type": "string"},
        "metadata": {"type": "object"},
    },
}

_route: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"enum": ["graph", "stream"]},
        "entry_point": {"type": "string"},
        "nodes": {"type": "object", "additionalProperties": _node},
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["source", "target"],
                "additionalProperties": False,
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "condition": _condition,
                    "priority": {"type": "integer"},
                },
            },
        },
        "checkpointing": {"type": "boolean"},
        "checkpoint_dir": {"type": ["string", "null"]},
        "enable_time_travel": {"type": "boolean"},
        "parallel_execution": {"type": "boolean"},
        "state_class": {"type": ["string", "null"]},
    },
    # Stream routes carry operators, publications and subscriptions this runtime keeps as data.
    "if": {"properties": {"type": {"const": "graph"}}},
    "then": {"required": ["entry_point", "nodes", "edges"]},
}

ACTOR_FILE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "CleverAgents actor file (v3)",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": NAME_PATTERN},
        "description": {"type": "string"},
        "cleveragents": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "version": {"type": "string", "pattern": r"^3(\.\d+)?$"},
                "logging": {"type": "object"},
                "template_engine": {"enum": ["JINJA2", "NONE"]},
                "unsafe": {"type": "boolean"},
                "default_actor": {"type": "string"},
            },
        },
        "actors": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": _actor,
            "propertyNames": {"pattern": LOCAL_NAME},
        },
        "agents": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": _actor,
            "propertyNames": {"pattern": LOCAL_NAME},
        },
        "routes": {"type": "object", "additionalProperties": _route},
        "global_context": {"type": "object"},
        "context": {"type": "object", "additionalProperties": False, "properties": {"global": {"type": "object"}}},
        "arguments": {"type": "object", "additionalProperties": _argument},
        "prompts": {"type": "object"},
        "templates": {"type": "object"},
        "instances": {"type": "object"},
        "merges": {"type": "array"},
        "splits": {"type": "array"},
        "publications": _string_list,
        "pipelines": {"type": "object"},
    },
    "oneOf": [{"required": ["actors"]}, {"required": ["agents"]}],
}
