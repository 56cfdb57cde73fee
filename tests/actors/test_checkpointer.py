"""The store-backed LangGraph checkpointer: the conformance suite, graph records, a real graph run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TypedDict

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.graph import END, START, StateGraph

from cleveragents.actors.checkpointer import StoreCheckpointSaver
from cleveragents.graph.workspace import Workspace


@pytest.fixture(scope="module")
def template_store(tmp_path_factory) -> Path:
    """One initialized data dir (ontology and shapes loaded), copied per test."""
    data = tmp_path_factory.mktemp("template") / "data"
    Workspace(data).initialize()
    return data


def fresh_workspace(template: Path, target: Path) -> Workspace:
    import shutil

    shutil.copytree(template, target)
    return Workspace(target)


def test_the_langgraph_conformance_suite_passes(template_store: Path, tmp_path: Path):
    counter = iter(range(100))

    @checkpointer_test(name="StoreCheckpointSaver")
    async def store_saver():
        ws = fresh_workspace(template_store, tmp_path / f"data{next(counter)}")
        with ws.writer() as session:
            yield StoreCheckpointSaver(session, ws.data_dir / "checkpoints")

    report = asyncio.run(validate(store_saver))
    summary = {name: (r.tests_passed, r.tests_failed, r.failures[:3]) for name, r in report.results.items()}
    base = ["put", "put_writes", "get_tuple", "list", "delete_thread"]
    assert all(summary[name][1] == 0 and summary[name][0] > 0 for name in base), summary
    assert report.passed_all_base(), summary


class Counter(TypedDict):
    total: int
    log: list[str]


def _graph():
    def add(state: Counter) -> dict:
        return {"total": state["total"] + 1, "log": [*state["log"], f"add{state['total']}"]}

    def double(state: Counter) -> dict:
        return {"total": state["total"] * 2, "log": [*state["log"], "double"]}

    builder = StateGraph(Counter)
    builder.add_node("add", add)
    builder.add_node("double", double)
    builder.add_edge(START, "add")
    builder.add_edge("add", "double")
    builder.add_edge("double", END)
    return builder


def test_a_run_is_recorded_in_the_graph_and_resumes_in_a_new_process_state(template_store: Path, tmp_path: Path):
    ws = fresh_workspace(template_store, tmp_path / "data")
    config = {"configurable": {"thread_id": "plan-01/execute"}}
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        graph = _graph().compile(checkpointer=saver)
        assert graph.invoke({"total": 1, "log": []}, config) == {"total": 4, "log": ["add1", "double"]}
        history = list(graph.get_state_history(config))
        assert len(history) == 4 and saver.commits == 0  # batched: recorded at the flush
        saver.flush()
        assert saver.commits == 1
        # Two more checkpoints written and never flushed, as when the process is killed.
        graph.invoke({"total": 10, "log": []}, {"configurable": {"thread_id": "killed"}})
        assert saver.commits == 1
    # A new saver on the same store (as after a restart) sees the same thread.
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, ws.data_dir / "checkpoints")
        graph = _graph().compile(checkpointer=saver)
        assert graph.get_state(config).values == {"total": 4, "log": ["add1", "double"]}
        # The killed thread's checkpoints reach the graph on the thread's first use.
        assert not bool(session.store.query("ASK { ?c ca:threadId 'killed' }"))
        assert graph.get_state({"configurable": {"thread_id": "killed"}}).values["total"] == 22
        killed = session.store.query("SELECT (COUNT(?c) AS ?n) WHERE { ?c ca:threadId 'killed' }")
        assert int(next(iter(killed))["n"].value) == 4
        rows = list(session.store.query(
            "SELECT ?id ?parent ?step WHERE { ?c a ca:ActorCheckpoint ; ca:threadId 'plan-01/execute' ; "
            "ca:checkpointId ?id ; ca:checkpointStep ?step . OPTIONAL { ?c prov:wasDerivedFrom ?p . "
            "?p ca:checkpointId ?parent } } ORDER BY ?id"))
        assert [int(r["step"].value) for r in rows] == [-1, 0, 1, 2]
        assert rows[0]["parent"] is None
        assert all(rows[i]["parent"].value == rows[i - 1]["id"].value for i in range(1, 4))
        # Replaying from the checkpoint after "add" (a fork, as a correction replays) runs only "double".
        after_add = next(s for s in graph.get_state_history(config) if s.next == ("double",))
        forked = graph.invoke(None, after_add.config)
        assert forked == {"total": 4, "log": ["add1", "double"]}
        saver.delete_thread("plan-01/execute")
        assert graph.get_state(config).values == {}
        assert not bool(session.store.query("ASK { ?c ca:threadId 'plan-01/execute' }"))


class Chat(TypedDict):
    messages: list[str]
    turns: int


def test_a_growing_list_is_stored_as_what_each_step_added(template_store: Path, tmp_path: Path):
    """The messages channel grows by appending: each version is stored as its new items over
    the previous one, so storage per step stays flat, and a cold saver rebuilds every version."""

    def speak(state: Chat) -> dict:
        return {"messages": [*state["messages"], f"message {state['turns']} " + "x" * 2000],
                "turns": state["turns"] + 1}

    builder = StateGraph(Chat)
    builder.add_node("speak", speak)
    builder.add_edge(START, "speak")
    builder.add_conditional_edges("speak", lambda s: END if s["turns"] >= 40 else "speak", ["speak", END])
    ws = fresh_workspace(template_store, tmp_path / "data")
    config = {"configurable": {"thread_id": "chat"}, "recursion_limit": 100}
    root = ws.data_dir / "checkpoints"
    with ws.writer() as session:
        saver = StoreCheckpointSaver(session, root, full_every=16)
        final = _compiled(builder, saver).invoke({"messages": [], "turns": 0}, config)
        saver.flush()
    blobs = sorted((root / "chat" / "blobs").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    sizes = [p.stat().st_size for p in blobs]
    # 41 message versions of up to 40 x 2 KB: whole each time would be ~1.6 MB; deltas and a
    # whole copy every 16th version stay far below.
    assert sum(sizes) < 500_000, sum(sizes)
    del saver, session  # the writer's lock goes when its session ends (graph/workspace.py)
    with ws.writer() as session:
        cold = StoreCheckpointSaver(session, root)
        graph = _compiled(builder, cold)
        assert graph.get_state(config).values == final and len(final["messages"]) == 40
        history = list(graph.get_state_history(config))
        assert [len(s.values.get("messages", [])) for s in history][:3] == [40, 39, 38]
        assert all(s.values["messages"] == final["messages"][: len(s.values["messages"])] for s in history if s.values)


def _compiled(builder: StateGraph, saver: StoreCheckpointSaver):
    return builder.compile(checkpointer=saver)
