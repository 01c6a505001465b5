"""The agent's plan: a checklist the `update_plan` tool replaces whole (docs/protocol.md, "Plan").

Pure: `parse_plan` turns the tool's arguments into a `Plan` or says what is wrong with them, and
`render_plan` is the text the model gets back. Like Codex's `update_plan`, each call sends the
whole list and at most one step is in progress.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Final, Literal, NotRequired, TypedDict, cast

StepStatus = Literal["pending", "in_progress", "completed"]
STEP_STATUSES: Final[tuple[StepStatus, ...]] = ("pending", "in_progress", "completed")
MAX_STEPS: Final = 50
MAX_STEP_CHARS: Final = 500
MAX_EXPLANATION_CHARS: Final = 2000
_MARKS: Final = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class PlanStep(TypedDict):
    step: str
    status: StepStatus


class Plan(TypedDict):
    steps: list[PlanStep]
    explanation: NotRequired[str]


class PlanError(ValueError):
    """The arguments are not a plan; the message says what to change."""


def parse_plan(arguments: Mapping[str, object]) -> Plan:
    raw_steps = arguments.get("plan")
    if not isinstance(raw_steps, list):
        raise PlanError('"plan" must be a list of {"step", "status"} objects.')
    if len(raw_steps) > MAX_STEPS:
        raise PlanError(f'"plan" has {len(raw_steps)} steps; at most {MAX_STEPS} are allowed.')
    steps: list[PlanStep] = []
    for number, raw in enumerate(raw_steps, start=1):
        if not isinstance(raw, dict):
            raise PlanError(f'step {number} must be an object {{"step", "status"}}.')
        text, status = raw.get("step"), raw.get("status")
        if not isinstance(text, str) or not text.strip():
            raise PlanError(f'step {number}: "step" must be a non-empty string.')
        if len(text) > MAX_STEP_CHARS:
            raise PlanError(f"step {number} is longer than {MAX_STEP_CHARS} characters.")
        if status not in STEP_STATUSES:
            raise PlanError(
                f'step {number}: "status" must be one of {", ".join(STEP_STATUSES)} '
                f"(got {status!r})."
            )
        steps.append({"step": " ".join(text.split()), "status": cast(StepStatus, status)})
    running = [i for i, s in enumerate(steps, start=1) if s["status"] == "in_progress"]
    if len(running) > 1:
        raise PlanError(
            f"at most one step may be in_progress; steps {', '.join(map(str, running))} are."
        )
    plan: Plan = {"steps": steps}
    explanation = arguments.get("explanation")
    if explanation is not None:
        if not isinstance(explanation, str):
            raise PlanError('"explanation" must be a string.')
        if len(explanation) > MAX_EXPLANATION_CHARS:
            raise PlanError(f'"explanation" is longer than {MAX_EXPLANATION_CHARS} characters.')
        if explanation.strip():
            plan["explanation"] = explanation.strip()
    return plan


def plan_from_record(value: object) -> Plan | None:
    """A plan read back from a journal record, or None when it is damaged."""
    if not isinstance(value, dict):
        return None
    try:
        return parse_plan({"plan": value.get("steps"), "explanation": value.get("explanation")})
    except PlanError:
        return None


def plan_in(items: Iterable[Mapping[str, object]]) -> Plan | None:
    """The plan as of the end of `items`: the last `update_plan` call whose result is not an
    error (a fork or rewind starts with the plan of the point it copies)."""
    calls: dict[str, Mapping[str, object]] = {}
    plan: Plan | None = None
    for item in items:
        if item.get("name") != "update_plan":
            continue
        if item.get("type") == "tool_call":
            calls[str(item.get("callId"))] = item
        elif item.get("type") == "tool_result" and not item.get("isError"):
            call = calls.get(str(item.get("callId")))
            arguments = call.get("arguments") if call is not None else None
            if isinstance(arguments, dict):
                with contextlib.suppress(PlanError):  # it was accepted: it parses again
                    plan = parse_plan(arguments)
    return plan


def render_plan(plan: Plan) -> str:
    """The plan as a checklist: `[x]` completed, `[~]` in progress, `[ ]` pending."""
    lines = [f"{_MARKS[s['status']]} {s['step']}" for s in plan["steps"]]
    if "explanation" in plan:
        lines.insert(0, plan["explanation"])
    return "\n".join(lines) if lines else "(empty plan)"
