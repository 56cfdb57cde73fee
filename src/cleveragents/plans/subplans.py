"""Subplans: the parent's Execute realizes its ``subplan_spawn`` decisions as child plans.

A ``subplan_spawn`` decision (recorded in Strategize) names an action and its arguments. In
Execute the ``create-subplan`` tool realizes it, or realizes a ``subplan_parallel_spawn``
decision: every current ``subplan_spawn`` under it, concurrently.

- A child plan is a plan of its own (its parent, its root, the decision that spawned it),
  with its own sandbox of each resource, forked from the parent's sandbox (the parent's
  work is checkpointed first, so the child starts from it).
- The child runs Strategize and Execute by itself; the parent merges the child's sandbox
  into its own (three-way for git, the fork as base): that is the child's Apply. A child
  never applies to a real resource; the parent's Apply does, after the user's review.
- Sequential children (a lone ``subplan_spawn``) stop the parent's step at the first that
  fails. Parallel children run with at most ``max_parallel`` at once; a failure does not
  stop the others unless ``fail_fast``. A failed child is resumed up to ``max_retries``
  times when ``retry_failed``.
- A child already spawned by the same decision is continued, not spawned again, so a
  parent resumed after a paused child picks up where it stopped.

Threads share one store: a child holds the ``StoreTurn`` while it reads or writes the
graph and gives it up while a tool handler works in its sandbox (a command, a file
edit), which is where parallel children overlap. Merges into the parent run one at a
time, in the order of the spawn decisions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from cleveragents.errors import ValidationError

from .decisions import Decision
from .vocabulary import ulid_of

SPAWN_TYPES: Final = ("subplan_spawn", "subplan_parallel_spawn")


@dataclass(frozen=True)
class SubplanConfig:
    """The spec's SubplanConfig. ``timeout_per_subplan_seconds`` is not supported: a child
    running in a thread cannot be stopped from outside (its commands have their own timeout)."""

    max_parallel: int = 5
    fail_fast: bool = False
    retry_failed: bool = True
    max_retries: int = 2
    merge_strategy: str = "git_three_way"

    def __post_init__(self) -> None:
        if not 1 <= self.max_parallel <= 50:
            raise ValidationError(f"max_parallel {self.max_parallel} is not between 1 and 50")
        if self.max_retries < 0:
            raise ValidationError(f"max_retries {self.max_retries} is negative")
        if self.merge_strategy != "git_three_way":
            raise ValidationError(f"merge strategy '{self.merge_strategy}' is not supported; use git_three_way")


@dataclass
class ChildOutcome:
    """What became of one child: ``merged`` (its changes are in the parent's sandbox),
    ``unchanged`` (it changed nothing), ``failed`` (errored, cancelled or in conflict with
    the parent), ``awaiting`` (a decision waits for approval) or ``skipped`` (not started:
    an earlier sequential child failed, or fail_fast)."""

    decision: str
    status: str
    plan: str | None = None
    phase: str = ""
    state: str = ""
    runs: int = 0
    message: str = ""
    changed_files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in {"merged", "unchanged"}

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": ulid_of(self.decision),
            "subplan_id": ulid_of(self.plan) if self.plan else None,
            "status": self.status,
            "phase": self.phase,
            "state": self.state,
            "runs": self.runs,
            "message": self.message,
            "changed_files": self.changed_files,
        }


class StoreTurn:
    """One thread at a time uses the store; a thread that holds the turn may give it up
    for a while (``released``). Re-entrant per thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()

    def held(self) -> bool:
        return bool(getattr(self._local, "held", False))

    @contextmanager
    def hold(self) -> Iterator[None]:
        if self.held():
            yield
            return
        self._lock.acquire()
        self._local.held = True
        try:
            yield
        finally:
            self._local.held = False
            self._lock.release()

    @contextmanager
    def released(self) -> Iterator[None]:
        if not self.held():
            yield
            return
        self._local.held = False
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._local.held = True


def children_of(group: Decision, current: Sequence[Decision]) -> list[Decision]:
    """The spawn decisions a spawn decision realizes: itself, or a parallel group's current
    ``subplan_spawn`` children in sequence order."""
    if group.type == "subplan_spawn":
        return [group]
    return sorted((d for d in current if d.parent == group.iri and d.type == "subplan_spawn"), key=lambda d: d.sequence)


def realize(
    group: Decision,
    children: Sequence[Decision],
    config: SubplanConfig,
    *,
    run_child: Callable[[Decision], ChildOutcome],
    merge_child: Callable[[ChildOutcome], ChildOutcome],
    turn: StoreTurn,
) -> list[ChildOutcome]:
    """Run the children (one after another, or in parallel for a group), then merge each
    finished one into the parent, in order."""
    if not children:
        raise ValidationError(
            f"decision {group.id} ({group.type}) has no current subplan_spawn decision under it: nothing to spawn"
        )
    parallel = group.type == "subplan_parallel_spawn"
    if not parallel:
        outcomes: list[ChildOutcome] = []
        for child in children:
            if outcomes and not outcomes[-1].ok:
                outcomes.append(ChildOutcome(child.iri, "skipped", message="an earlier subplan failed"))
                continue
            outcome = run_child(child)
            outcomes.append(merge_child(outcome) if outcome.status == "ready" else outcome)
        return outcomes
    stop = threading.Event()

    def work(child: Decision) -> ChildOutcome:
        if stop.is_set():
            return ChildOutcome(child.iri, "skipped", message="fail_fast: a sibling subplan failed")
        with turn.hold():
            outcome = run_child(child)
        if outcome.status not in {"ready", "unchanged"} and config.fail_fast:
            stop.set()
        return outcome

    workers = min(config.max_parallel, len(children))
    # The spawning thread gives up its turn while it waits, so the children can take it.
    with turn.released(), ThreadPoolExecutor(max_workers=workers, thread_name_prefix="subplan") as pool:
        ran = list(pool.map(work, children))
    with turn.hold():
        return [merge_child(outcome) if outcome.status == "ready" else outcome for outcome in ran]
