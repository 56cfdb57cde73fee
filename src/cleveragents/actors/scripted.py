"""The scripted actor: a built-in actor whose behaviour is a YAML script, so the whole plan
lifecycle runs (and is tested) without a model. It implements plans' ``Actor`` protocol
and acts only the way an LLM actor does: decisions through the decision recorder, work
through the tool router.

    strategize:                       # decisions to record, in order
      - key: approach                 # how later steps name this decision (default: question)
        decision: strategy_choice
        question: How to rename?
        chosen: "Rename {{ old_name }} and every caller the graph knows"
        alternatives: [Rename the definition only]
        confidence: 0.9
        rationale: ...
        influenced_by: [approach]     # keys of earlier decisions (the influence DAG)
      - decision: validation_response # written from the graph: a SPARQL query's rows are `rows`
        query: SELECT ?name WHERE { ... }
        chosen: "{% for r in rows %}{{ r.name }} {% endfor %}"
      - key: parts                    # a group of child plans run concurrently
        decision: subplan_parallel_spawn
        max_parallel: 2
      - decision: subplan_spawn       # one child plan: an action and its arguments
        parent: parts
        action: local/rename-function
        arguments: {old_name: a, new_name: b}
    execute:
      - decision: implementation_choice ...
      - tool: edit_file               # a call through the tool router
        decision_key: approach        # the decision the call belongs to
        for_each: |                   # optional SPARQL; each row's variables fill the templates
          SELECT ?path WHERE { ... }
        arguments: {path: "{{ path }}", old: "{{ old_name }}", new: "{{ new_name }}"}
      - tool: create-subplan          # realize the spawn decision: run the children, merge them
        decision_key: parts
        required: true
      - revert: "findings"            # revert to Strategize (only on the attempts listed in `on_attempt`)
        on_attempt: [1]

As the plan's Invariant Reconciliation Actor (``invariant_actor: scripted:PATH``) the
script names the invariants that contradict each other; the precedence keeps one of each:

    invariants:
      - conflict: ["Keep a deprecated alias", "Remove old names completely"]
        reason: an alias is an old name

A ``required`` tool step fails the phase when the call is refused or when its result says
``ok: false`` (``run_command`` with a non-zero exit code or a timeout; ``create-subplan``
with a failed child), with the tool's own account in the phase's error.

Templates are Jinja2 (sandboxed, strict) over the plan's arguments, the row's variables
and ``plan`` (id, description). A decision step already in the plan's current tree (same
type and question) is not recorded again, so a paused or interrupted phase resumes where
it stopped, and a corrected decision's replacement stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import yaml
from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from cleveragents.errors import ValidationError
from cleveragents.plans.actor import PhaseOutcome, PlanContext
from cleveragents.plans.decisions import Decision, DecisionInput
from cleveragents.plans.invariants import Invariant, InvariantConflict
from cleveragents.plans.records import PlanRecord
from cleveragents.plans.vocabulary import DECISION_TYPES

PREFIX: Final = "scripted:"
_STEP_KINDS: Final = ("decision", "tool", "revert", "fail")
_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def _render(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        try:
            return _ENV.from_string(value).render(**variables)
        except TemplateError as exc:
            raise ValidationError(f"script template {value!r}: {exc}") from None
    if isinstance(value, list):
        return [_render(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _render(v, variables) for k, v in value.items()}
    return value


def load_script(path: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        body = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ValidationError(f"cannot read the script {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ValidationError(f"the script {path} is not valid YAML: {exc}") from None
    if not isinstance(body, dict) or set(body) - {"strategize", "execute", "invariants"}:
        raise ValidationError(
            f"the script {path} has the keys strategize and execute (each a list of steps) and invariants"
        )
    out: dict[str, list[dict[str, Any]]] = {}
    rules = body.get("invariants") or []
    if not isinstance(rules, list) or not all(
        isinstance(r, dict) and isinstance(r.get("conflict"), list) and len(r["conflict"]) == 2 for r in rules
    ):
        raise ValidationError(f"{path}: invariants is a list of {{conflict: [TEXT, TEXT], reason: TEXT}}")
    out["invariants"] = rules
    for phase in ("strategize", "execute"):
        steps = body.get(phase) or []
        if not isinstance(steps, list):
            raise ValidationError(f"{path}: {phase} is a list of steps")
        for i, step in enumerate(steps):
            kinds = [k for k in _STEP_KINDS if isinstance(step, dict) and k in step]
            if len(kinds) != 1:
                raise ValidationError(f"{path}: {phase} step {i + 1} needs exactly one of {', '.join(_STEP_KINDS)}")
            if kinds[0] == "decision" and step["decision"] not in DECISION_TYPES:
                raise ValidationError(f"{path}: {phase} step {i + 1}: unknown decision type '{step['decision']}'")
        out[phase] = steps
    return out


class ScriptedActor:
    """Plays a script; see the module docstring for the format."""

    def __init__(self, script: Path) -> None:
        self.path = script
        self.script = load_script(script)

    def strategize(self, ctx: PlanContext) -> PhaseOutcome:
        return self._play(ctx, self.script.get("strategize", []))

    def find_invariant_conflicts(self, plan: PlanRecord, candidates: Sequence[Invariant]) -> list[InvariantConflict]:
        """As an Invariant Reconciliation Actor: the script's ``invariants`` rules whose two
        texts (compared without case and spacing) both apply to the plan."""
        by_text = {_normal(inv.text): inv for inv in candidates}
        found = []
        for rule in self.script.get("invariants", []):
            first, second = (by_text.get(_normal(str(t))) for t in rule["conflict"])
            if first is not None and second is not None:
                found.append(InvariantConflict(first.iri, second.iri, str(rule.get("reason", ""))))
        return found

    def execute(self, ctx: PlanContext) -> PhaseOutcome:
        return self._play(ctx, self.script.get("execute", []))

    def _play(self, ctx: PlanContext, steps: list[dict[str, Any]]) -> PhaseOutcome:
        variables: dict[str, Any] = {
            **ctx.plan.arguments,
            "plan": {"id": ctx.plan.id, "description": ctx.plan.description, "attempt": ctx.attempt},
            "findings": ctx.findings,
            "guidance": list(ctx.guidance),
        }
        by_key = self._recorded(ctx)
        for step in steps:
            if "on_attempt" in step and ctx.attempt not in step["on_attempt"]:
                continue
            if "decision" in step:
                key = str(step.get("key") or step.get("question") or step["decision"])
                question = _render(step.get("question", ""), variables)
                # A current decision answering the same question (recorded by an earlier run
                # of this phase, or put in place by a correction) is not decided again.
                found = next(
                    (d for d in ctx.decisions() if d.type == step["decision"] and d.question == question), None
                )
                if found is None and step.get("query"):
                    # The decision is written from the graph: the query's rows are `rows`.
                    rows = ctx.query(str(_render(step["query"], variables)))
                    found = self._decide(ctx, step, question, {**variables, "rows": rows}, by_key)
                by_key[key] = found or self._decide(ctx, step, question, variables, by_key)
            elif "tool" in step:
                error = self._call(ctx, step, variables, by_key)
                if error:
                    return PhaseOutcome(status="error", error=error)
            elif "revert" in step:
                return PhaseOutcome(status="revert", findings=str(_render(step["revert"], variables)))
            else:
                return PhaseOutcome(status="error", error=str(_render(step["fail"], variables)))
        return PhaseOutcome()

    def _recorded(self, ctx: PlanContext) -> dict[str, Decision]:
        """The plan's current decisions that earlier steps of the script (of any phase)
        recorded, by the steps' keys, so that influence keys cross phases."""
        variables = {**ctx.plan.arguments, "plan": {"id": ctx.plan.id, "description": ctx.plan.description}}
        current = {(d.type, d.question): d for d in ctx.decisions()}
        out: dict[str, Decision] = {}
        for steps in self.script.values():
            for step in steps:
                if "decision" not in step:
                    continue
                try:
                    question = _render(step.get("question", ""), variables)
                except ValidationError:
                    continue
                found = current.get((step["decision"], question))
                if found is not None:
                    out[str(step.get("key") or step.get("question") or step["decision"])] = found
        return out

    @staticmethod
    def _decide(
        ctx: PlanContext, step: dict[str, Any], question: str, variables: dict[str, Any], by_key: dict[str, Decision]
    ) -> Decision:
        upstream = []
        for key in step.get("influenced_by") or []:
            if key not in by_key:
                raise ValidationError(f"script step '{question}': influenced_by names '{key}', not an earlier decision")
            upstream.append(by_key[key].iri)
        parent = step.get("parent")
        if parent is not None and parent not in by_key:
            raise ValidationError(f"script step '{question}': parent '{parent}' is not an earlier decision")
        confidence = step.get("confidence")
        return ctx.record(
            DecisionInput(
                type=step["decision"],
                chosen=str(_render(step.get("chosen", ""), variables)),
                question=question,
                alternatives=tuple(str(a) for a in _render(step.get("alternatives") or [], variables)),
                confidence=float(confidence) if confidence is not None else None,
                rationale=str(_render(step.get("rationale", ""), variables)),
                parent=by_key[parent].iri if parent is not None else None,
                influenced_by=tuple(upstream),
                context_hash=step.get("context_hash"),
                max_parallel=step.get("max_parallel"),
                subplan_action=_render(step["action"], variables) if step.get("action") else None,
                subplan_arguments=_render(step.get("arguments"), variables) if step.get("arguments") else None,
            )
        )

    @staticmethod
    def _call(ctx: PlanContext, step: dict[str, Any], variables: dict[str, Any], by_key: dict[str, Decision]) -> str:
        """Run a tool step (once, or once per row of its SPARQL); a refused call is told to
        the script's author in the phase's error only if the step says ``required: true``."""
        if ctx.call_tool is None:
            return f"tool step '{step['tool']}': this plan has no tool router (the tools package is not available)"
        rows: list[dict[str, Any]] = [{}]
        if step.get("for_each"):
            rows = ctx.query(str(_render(step["for_each"], variables)))
        for row in rows:
            arguments = _render(step.get("arguments") or {}, {**variables, **row})
            decision = by_key.get(step["decision_key"]) if step.get("decision_key") else None
            result = ctx.call_tool(step["tool"], {**arguments, **({"_decision": decision.iri} if decision else {})})
            if step.get("required", False):
                failure = _failure(step["tool"], result)
                if failure:
                    return failure
        return ""


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _failure(tool: str, result: Any) -> str:
    """Why a call failed: refused, or its result says ``ok: false`` (a command's exit code,
    a timeout, a failed subplan); "" when it succeeded."""
    if not getattr(result, "ok", True):
        return f"tool {tool} failed: {getattr(result, 'error', '')}"
    content = getattr(result, "content", None)
    if not isinstance(content, dict) or content.get("ok", True):
        return ""
    if "exit_code" in content:
        how = "timed out" if content.get("timed_out") else f"exited with {content.get('exit_code')}"
        output = (str(content.get("stderr") or "").strip() or str(content.get("stdout") or "").strip())[-800:]
        return f"tool {tool}: `{content.get('command', '')}` {how}" + (f": {output}" if output else "")
    if "subplans" in content:
        failed = [s for s in content["subplans"] if s.get("status") not in {"merged", "unchanged"}]
        listed = "; ".join(
            f"subplan {s.get('subplan_id') or '-'} {s['status']}: {s.get('message', '')}" for s in failed
        )
        return f"tool {tool}: {len(failed)} of {len(content['subplans'])} subplans did not finish: {listed}"
    return f"tool {tool} reported failure: {content}"
