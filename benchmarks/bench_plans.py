"""Plans: record_decision (one decision and its edges, one commit with SHACL), plan tree
of a plan with N decisions, and the affected set of a correction (--dry-run) over an
influence DAG of M decisions. Large trees are loaded in one commit built here (the same
triples the recorder writes), so the measurement is the read path.

    python benchmarks/bench_plans.py --tree 2000 --dag 10000 --records 30 [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from cleveragents.errors import ConflictError
from cleveragents.graph.commit import CommitRequest
from cleveragents.graph.workspace import Workspace
from cleveragents.plans import corrections, decisions, records, tree
from cleveragents.plans.decisions import DecisionInput
from cleveragents.plans.engine import PlanEngine
from cleveragents.plans.vocabulary import TYPE, ca, decision_iri, integer, new_ulid, text, time_literal
from cleveragents.services import plans, projects

ACTION = """name: local/bench
definition_of_done: done
strategy_actor: scripted:script.yaml
execution_actor: scripted:script.yaml
"""


def _bulk_plan(session, engine: PlanEngine, n: int, fan: int, seed: int) -> tuple[str, list[str]]:
    """A plan whose tree has ``n`` decisions below its root, each with a random earlier
    parent and up to ``fan`` extra influences, in one commit."""
    rng = random.Random(seed)
    plan = engine.create("local/bench", ["bench"], {})
    root = decisions.current_root(session.store, plan.node)
    ids = [root.value]
    triples = []
    stamp = time_literal()
    for i in range(1, n + 1):
        ulid = new_ulid()
        node = decision_iri(ulid)
        parent = ox.NamedNode(ids[rng.randrange(len(ids))])
        ups = {parent.value, *(ids[rng.randrange(len(ids))] for _ in range(rng.randrange(fan + 1)))}
        triples += [
            (node, TYPE, ca("Decision")),
            (node, ca("ulid"), text(ulid)),
            (node, ca("belongsToPlan"), plan.node),
            (node, ca("decisionType"), ca("implementation_choice")),
            (node, ca("sequenceNumber"), integer(i)),
            (node, ca("chosenOption"), text(f"choice {i}")),
            (node, ca("approvalStatus"), text("auto")),
            (node, ca("createdAt"), stamp),
            (node, ca("parentDecision"), parent),
        ]
        triples += [(node, ca("influencedBy"), ox.NamedNode(u)) for u in ups]
        ids.append(node.value)
    session.commit(CommitRequest(add=triples, message=f"bench: {n} decisions", cause="bench"))
    return plan.id, ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=int, default=2000)
    parser.add_argument("--dag", type=int, default=10000)
    parser.add_argument("--records", type=int, default=30)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base = args.data_dir or Path(tempfile.mkdtemp())
    ws = Workspace(base / "data", writer_wait=0)
    if not ws.exists():
        ws.initialize()
    with ws.reader() as store:
        has = bool(store.query('ASK { ?p a ca:Project ; ca:name "local/bench" }'))
        head = store.head
    if not has:
        projects.create(ws, "local/bench", agent="bench")
    folder = base / "action"
    folder.mkdir(exist_ok=True)
    (folder / "script.yaml").write_text("strategize: []\n")
    (folder / "action.yaml").write_text(ACTION)
    with contextlib.suppress(ConflictError):  # already there from an earlier run on this data dir
        plans.create_action(ws, folder / "action.yaml", {}, agent="bench")
    out: dict[str, object] = {"store_head_before": head}
    with ws.writer() as session:
        engine = PlanEngine(session, ws.data_dir, plans.resolve_actor, agent="bench")
        plan = engine.create("local/bench", ["bench"], {})
        times = []
        for i in range(args.records):
            clock = time.perf_counter()
            decisions.record(
                session,
                plan.node,
                DecisionInput(type="strategy_choice", chosen=f"c{i}", confidence=0.9),
                run=None,
                agent="bench",
            )
            times.append((time.perf_counter() - clock) * 1000)
        out["record_decision_ms_p50"] = statistics.median(times)
        tree_plan, _ = _bulk_plan(session, engine, args.tree, 2, 1)
        _, dag_ids = _bulk_plan(session, engine, args.dag, 3, 2)
    with ws.reader() as store:
        runs = []
        for _ in range(5):
            clock = time.perf_counter()
            node = records.resolve(store, tree_plan)
            found = decisions.load(store, [node])
            tree.build(records.read(store, node), found, {node.value: records.read(store, node)})
            runs.append((time.perf_counter() - clock) * 1000)
        out[f"plan_tree_{args.tree}_ms_median"] = statistics.median(runs)
        runs = []
        for k in range(5):
            target = dag_ids[1 + k * 7]
            clock = time.perf_counter()
            impact = corrections.impact(store, target)
            runs.append((time.perf_counter() - clock) * 1000)
        out[f"correct_dry_run_{args.dag}_ms_median"] = statistics.median(runs)
        out["last_impact"] = impact.summary()
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
