"""The MCP server in process, through the SDK's own client: every tool listed with a
valid JSON Schema input and an output schema, called with example arguments, answering
what the indexed requests sources say; bad input answered with errors while the server
keeps serving; writes only when read-write, each one audited."""

from __future__ import annotations

import json
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from cleveragents.config import Config
from cleveragents.servers.mcp_server import build_mcp_server
from cleveragents.servers.security import ServerSettings
from cleveragents.services.serving import workspace_operations

from .support import Corpus


def server_for(corpus: Corpus, **settings: Any):
    read_only = settings.get("read_only", True)
    ops = workspace_operations(corpus.data_dir, Config(corpus.data_dir), read_only=read_only)
    return build_mcp_server(ops, ServerSettings(**settings))


PLAN_TOOLS = {"plan_status", "plan_tree", "explain_decision"}


def examples(corpus: Corpus) -> dict[str, dict[str, Any]]:
    send = corpus.send
    return {
        "graph_query": {"sparql": 'SELECT ?n WHERE { ?n uko:name "send" } ORDER BY ?n'},
        "find_symbol": {"name": "Session.send"},
        "callers": {"iri": send},
        "callees": {"iri": send},
        "references": {"iri": send},
        "implementations": {"iri": corpus.iri("requests/adapters.py", "BaseAdapter")},
        "show": {"iri": send, "depth": "SIGNATURES"},
        "history": {"iri": send},
        "blame": {"iri": send},
        "changes_between": {"from_revision": "0", "to_revision": "head"},
        "assemble_context": {"query": "send a prepared request", "focus": ["Session.send"], "budget": 2000},
        "index": {"resources": ["local/requests"]},
    }


def call_all(corpus: Corpus) -> tuple[list[Any], dict[str, Any]]:
    async def main() -> tuple[list[Any], dict[str, Any]]:
        async with Client(server_for(corpus), cache=None) as client:
            tools = (await client.list_tools()).tools
            results = {}
            for tool in tools:
                if tool.name in PLAN_TOOLS:  # this store has no plan: test_mcp_plans.py calls them
                    continue
                results[tool.name] = await client.call_tool(tool.name, examples(corpus)[tool.name])
            return tools, results

    return anyio.run(main)


def test_every_tool_has_valid_schemas_and_answers_from_the_graph(corpus: Corpus) -> None:
    tools, results = call_all(corpus)
    assert {t.name for t in tools} == set(examples(corpus)) | PLAN_TOOLS
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        if tool.name in PLAN_TOOLS:
            assert tool.output_schema
            continue
        jsonschema.validate(examples(corpus)[tool.name], tool.input_schema)
        assert tool.output_schema, f"{tool.name} has no output schema"
        result = results[tool.name]
        assert not result.is_error, (tool.name, result.content)
        jsonschema.validate(result.structured_content, tool.output_schema)
    out = {name: r.structured_content for name, r in results.items()}
    names = {row["n"] for row in out["graph_query"]["rows"]}
    assert f"<{corpus.send}>" in names and out["graph_query"]["form"] == "select"
    assert out["find_symbol"]["matches"][0]["qualified_name"] == "requests.sessions.Session.send"
    assert "requests.sessions.Session.request" in {e["symbol"]["qualified_name"] for e in out["callers"]["edges"]}
    callees = {e["symbol"]["qualified_name"]: e for e in out["callees"]["edges"]}
    assert "requests.hooks.dispatch_hook" in callees and callees["requests.hooks.dispatch_hook"]["confidence"]
    assert {"uko-code:calls"} <= {e["relation"] for e in out["references"]["edges"]}
    impls = {(e["symbol"]["name"], e["relation"]) for e in out["implementations"]["edges"]}
    assert ("HTTPAdapter", "uko-oo:inheritsFrom") in impls
    assert out["show"]["text"].startswith("def send(self, request, **kwargs)")
    assert out["show"]["level"] == "SIGNATURES"
    assert any(e["predicate"] == "uko:name" and e["object"] == '"send"' for e in out["history"]["entries"])
    assert any(line["predicate"] == "uko-code:signature" for line in out["blame"]["lines"])
    changed = {e["entity"]: e["change"] for e in out["changes_between"]["entities"]}
    assert changed[corpus.send] == "added"  # revision 0 is the empty store
    ctx = out["assemble_context"]
    assert ctx["fragments"] and ctx["total_tokens"] <= 2000 and not ctx["recorded"]  # read-only: not recorded
    assert corpus.send in {f["uko_node"] for f in ctx["fragments"]}
    assert out["index"]["resources"][0]["analyzed"] == 0  # unchanged tree: nothing re-read, nothing written
    assert out["index"]["audit_event"] is None


def test_resources_and_prompts(corpus: Corpus) -> None:
    async def main() -> None:
        async with Client(server_for(corpus), cache=None) as client:
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            expected = {"cleveragents://ontology/uko", "cleveragents://ontology/ca", "cleveragents://queries/blame"}
            assert expected <= listed
            uko = await client.read_resource("cleveragents://ontology/uko-py")
            assert "uko-py:Method" in uko.contents[0].text
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["cleveragents://entity/{depth}/{iri}"]
            from urllib.parse import quote

            rendered = await client.read_resource(f"cleveragents://entity/SIGNATURES/{quote(corpus.send, safe='')}")
            assert rendered.contents[0].text.startswith("def send(self, request, **kwargs)")
            with pytest.raises(MCPError):
                await client.read_resource(f"cleveragents://entity/SIGNATURES/{quote('urn:nowhere', safe='')}")
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            assert prompts == {"explain_module", "review_change"}
            got = await client.get_prompt("explain_module", {"module": "requests.sessions"})
            assert "find_symbol" in got.messages[0].content.text

    anyio.run(main)


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return result.content[0].text


def test_bad_input_gets_errors_and_the_server_keeps_serving(corpus: Corpus) -> None:
    server = server_for(corpus, request_timeout=1.0, max_request_bytes=50_000)

    async def main() -> None:
        async with Client(server, cache=None) as client:
            assert "Unknown tool" in error_text(await client.call_tool("no_such_tool", {}))
            assert "sparql" in error_text(await client.call_tool("graph_query", {}))
            assert "limit" in error_text(await client.call_tool("graph_query", {"sparql": "ASK {}", "limit": 0}))
            refused = error_text(await client.call_tool("graph_query", {"sparql": "INSERT DATA { <urn:a> <urn:b> 1 }"}))
            assert "[403] FORBIDDEN" in refused and "read-only" in refused
            remote = "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }"
            assert "SERVICE is refused" in error_text(await client.call_tool("graph_query", {"sparql": remote}))
            assert "[403] FORBIDDEN" in error_text(
                await client.call_tool("graph_query", {"sparql": "LOAD <http://127.0.0.1:1/x.ttl>"})
            )
            bad = error_text(await client.call_tool("graph_query", {"sparql": "SELEC ?x WHERE {}"}))
            assert "SYNTAX_ERROR" in bad
            slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
            timed_out = error_text(await client.call_tool("graph_query", {"sparql": slow}))
            assert "[408] TIMEOUT" in timed_out
            with pytest.raises(MCPError, match="REQUEST_TOO_LARGE"):
                await client.call_tool("find_symbol", {"name": "x" * 60_000})
            missing = error_text(await client.call_tool("callers", {"iri": "https://cleveragents.ai/id/src/nowhere"}))
            assert "[404] NOT_FOUND" in missing
            good = await client.call_tool("find_symbol", {"name": "Session.send"})
            assert not good.is_error and good.structured_content["matches"]

    anyio.run(main)


def test_read_write_update_is_one_audited_commit(fresh_corpus: Corpus) -> None:
    corpus = fresh_corpus
    server = server_for(corpus, read_only=False, user="alice")
    update = 'INSERT DATA { <urn:ex:app> a uko-code:Module ; uko:name "app" }'

    async def main() -> dict[str, Any]:
        async with Client(server, cache=None) as client:
            result = await client.call_tool("graph_query", {"sparql": update})
            assert not result.is_error, result.content
            return result.structured_content

    out = anyio.run(main)
    assert out["form"] == "update" and out["commit"]["changed"]
    event = out["commit"]["audit_event"]
    with corpus.ws.reader() as store:
        rows = list(
            store.query(
                f"SELECT ?type ?who ?details ?rev WHERE {{ <{event}> a ca:AuditEvent ; ca:eventType ?type ; "
                "ca:userIdentity ?who ; ca:details ?details . <urn:ex:app> uko:name ?n }"
            )
        )
        head = store.head
    assert len(rows) == 1
    assert rows[0]["type"].value == "graph_update" and rows[0]["who"].value == "mcp:alice:stdio"
    assert json.loads(rows[0]["details"].value) == {"sparql": update}
    assert head == out["commit"]["revision"]  # the write and its audit record are one commit
