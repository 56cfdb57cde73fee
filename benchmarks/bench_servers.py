"""The servers' cost: MCP over stdio against the same operation in process, and MCP over
HTTP and A2A under 32 concurrent clients.

    python benchmarks/bench_servers.py --data-dir DIR [--calls 100] [--context-calls 100]
        [--clients 32] [--seconds 30]

DIR is an indexed store (RESULTS.md says which). Part 1 times, for each operation, N calls
through ``WorkspaceOperations`` (what the tool runs, no protocol) and N calls of the MCP
tool through the SDK's client to ``agents mcp serve`` over stdio, interleaved one by one;
the protocol's overhead is the median of the paired differences. Part 2 starts ``agents
serve`` (A2A and MCP on one port) and runs C clients for S seconds against each surface:
calls, errors, throughput, p50/p95.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from cleveragents.config import Config
from cleveragents.services.serving import workspace_operations

AGENTS = str(Path(sys.executable).with_name("agents"))


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples) * 1000, 2), "p95_ms": round(pct(samples, 0.95) * 1000, 2)}


def pick_target(ops: Any) -> str:
    """The function with the most callers: a callers call that returns a real list."""
    result = ops.graph_query(
        "SELECT ?f (COUNT(?c) AS ?n) WHERE { ?c uko-code:calls ?f . ?f uko:sourcePath ?p } "
        "GROUP BY ?f ORDER BY DESC(?n) LIMIT 1",
        as_of=None,
        limit=1,
        timeout=600,
        read_only=True,
        identity="bench",
    )
    return result.rows[0]["f"].strip("<>")


def operations(target: str) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        "graph_query (point lookup)": ("graph_query", {"sparql": f"SELECT ?p ?o WHERE {{ <{target}> ?p ?o }}"}),
        "callers": ("callers", {"iri": target}),
        "assemble_context (4k)": (
            "assemble_context",
            {"query": "how are database migrations applied", "budget": 4000},
        ),
    }


def in_process(ops: Any, tool: str, args: dict[str, Any]) -> Callable[[], Any]:
    if tool == "graph_query":
        return lambda: ops.graph_query(
            args["sparql"], as_of=None, limit=1000, timeout=60.0, read_only=True, identity="bench"
        )
    if tool == "callers":
        return lambda: ops.related("callers", args["iri"], as_of=None)
    return lambda: ops.assemble_context(
        query=args["query"],
        focus=[],
        budget=args["budget"],
        depth=None,
        as_of=None,
        record=False,
        identity="bench",
        progress=None,
    )


def part_one(data_dir: Path, calls: int, context_calls: int) -> dict[str, Any]:
    """Each call in process and through MCP over stdio, interleaved (in process, then stdio,
    N times), so both see the same load; the overhead is the median of the N paired
    differences (and, beside it, the difference of the two medians)."""
    ops = workspace_operations(data_dir, Config(data_dir))
    target = pick_target(ops)
    out: dict[str, Any] = {"target": target}
    plan = operations(target)

    async def paired() -> None:
        params = StdioServerParameters(
            command=AGENTS, args=["--data-dir", str(data_dir), "mcp", "serve"], env=dict(os.environ)
        )
        async with Client(params, cache=None) as client:
            for label, (tool, args) in plan.items():
                n = context_calls if tool == "assemble_context" else calls
                fn = in_process(ops, tool, args)
                fn()  # warm: imports, caches
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                local, remote, checks = [], [], []
                for _ in range(n):
                    start = time.perf_counter()
                    fn()
                    local.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    remote.append(time.perf_counter() - start)
                    assert not result.is_error, result.content
                    # The SDK client checks every result against the tool's output schema
                    # (jsonschema); timed again here to tell it apart from server and transport.
                    start = time.perf_counter()
                    await client.session.validate_tool_result(tool, result)
                    checks.append(time.perf_counter() - start)
                differences = [r - q for q, r in zip(local, remote, strict=True)]
                beyond_check = [d - c for d, c in zip(differences, checks, strict=True)]
                out[label] = {
                    "calls": n,
                    "in_process": summary(local),
                    "stdio": summary(remote),
                    "overhead_p50_ms": round(statistics.median(differences) * 1000, 2),
                    "difference_of_medians_ms": round((statistics.median(remote) - statistics.median(local)) * 1000, 2),
                    "ratio_p50": round(statistics.median(remote) / statistics.median(local), 3),
                    "client_output_check_p50_ms": round(statistics.median(checks) * 1000, 2),
                    "overhead_without_output_check_p50_ms": round(statistics.median(beyond_check) * 1000, 2),
                }
                print(label, json.dumps(out[label]), flush=True)

    anyio.run(paired)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cause(exc: BaseException) -> str:
    """The first leaf of an exception group (a task group's failure wraps the real one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"[:200]


async def load(clients: int, seconds: float, connect: Callable[[], Any]) -> dict[str, Any]:
    """``clients`` loops, each in its own connection (``connect()`` is an async context
    manager yielding ``call() -> bool``), calling until ``seconds`` pass; False or an
    exception is an error (a failed connection too)."""
    samples: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def client(i: int) -> None:
        try:
            async with connect() as call:
                while time.perf_counter() < deadline:
                    start = time.perf_counter()
                    try:
                        ok = await call()
                    except Exception as exc:  # counted, not fatal: the run measures errors
                        ok = False
                        errors.append(cause(exc))
                    else:
                        if not ok:
                            errors.append("error result")
                    samples.append(time.perf_counter() - start)
        except Exception as exc:  # a connection that failed or broke
            errors.append("connection: " + cause(exc))

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for i in range(clients):
            tasks.start_soon(client, i)
    elapsed = time.perf_counter() - started
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "calls": len(samples),
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:3],
        "calls_per_s": round(len(samples) / elapsed, 1),
        **summary(samples),
    }


def part_two(data_dir: Path, target: str, clients: int, seconds: float) -> dict[str, Any]:
    port = free_port()
    proc = subprocess.Popen(
        [AGENTS, "--data-dir", str(data_dir), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(base + "/.well-known/agent-card.json", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)

        @asynccontextmanager
        async def mcp_connection() -> AsyncIterator[Callable[[], Awaitable[bool]]]:
            async with (
                create_mcp_http_client() as http,
                Client(streamable_http_client(base + "/mcp", http_client=http), cache=None) as session,
            ):

                async def call() -> bool:
                    result = await session.call_tool("callers", {"iri": target})
                    return not result.is_error

                yield call

        @asynccontextmanager
        async def a2a_connection() -> AsyncIterator[Callable[[], Awaitable[bool]]]:
            async with httpx.AsyncClient(timeout=300) as http:

                async def call() -> bool:
                    body = {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "SendMessage",
                        "params": {
                            "message": {
                                "messageId": f"b-{time.monotonic_ns()}",
                                "role": "ROLE_USER",
                                "parts": [{"data": {"tool": "callers", "arguments": {"iri": target}}}],
                            }
                        },
                    }
                    answer = (await http.post(base + "/a2a", json=body, headers={"A2A-Version": "1.0"})).json()
                    state = answer.get("result", {}).get("task", {}).get("status", {}).get("state")
                    return state == "TASK_STATE_COMPLETED"

                yield call

        async def mcp_run() -> dict[str, Any]:
            return await load(clients, seconds, mcp_connection)

        async def a2a_run() -> dict[str, Any]:
            return await load(clients, seconds, a2a_connection)

        return {"mcp_http callers": anyio.run(mcp_run), "a2a SendMessage callers": anyio.run(a2a_run)}
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--context-calls", type=int, default=100)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--load-only", metavar="TARGET_IRI", help="run part 2 only, on this target")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.load_only:
        results["part_one"] = {"target": args.load_only}
    else:
        results["part_one"] = part_one(args.data_dir, args.calls, args.context_calls)
        print(json.dumps(results, indent=2), flush=True)
    if not args.skip_load:
        results["part_two"] = part_two(args.data_dir, results["part_one"]["target"], args.clients, args.seconds)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
