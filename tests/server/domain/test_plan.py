"""domain/plan.py: what `update_plan` accepts, what the model reads back, and the plan at a point
of a history (forks and rewinds)."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.domain.plan import (
    PlanError,
    parse_plan,
    plan_from_record,
    plan_in,
    render_plan,
)


def test_a_plan_is_normalized_and_rendered_as_a_checklist() -> None:
    plan = parse_plan(
        {
            "explanation": "  Why  ",
            "plan": [
                {"step": "Read\n the   code", "status": "completed"},
                {"step": "Fix it", "status": "in_progress"},
                {"step": "Test", "status": "pending"},
            ],
        }
    )
    assert plan["explanation"] == "Why" and plan["steps"][0]["step"] == "Read the code"
    assert render_plan(plan) == "Why\n[x] Read the code\n[~] Fix it\n[ ] Test"
    assert render_plan(parse_plan({"plan": []})) == "(empty plan)"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, '"plan" must be a list'),
        ({"plan": ["x"]}, "step 1 must be an object"),
        ({"plan": [{"step": " ", "status": "pending"}]}, 'step 1: "step" must be a non-empty'),
        ({"plan": [{"step": "a", "status": "done"}]}, 'step 1: "status" must be one of'),
        (
            {"plan": [{"step": "a", "status": "in_progress"}] * 2},
            "at most one step may be in_progress; steps 1, 2 are",
        ),
        ({"plan": [{"step": "a", "status": "pending"}] * 51}, "at most 50 are allowed"),
        ({"plan": [], "explanation": 3}, '"explanation" must be a string'),
    ],
)
def test_a_bad_plan_says_what_is_wrong(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(PlanError, match=problem.replace("(", r"\(")):
        parse_plan(arguments)


def test_a_damaged_record_reads_as_no_plan() -> None:
    assert plan_from_record({"steps": [{"step": "a", "status": "pending"}]}) is not None
    assert plan_from_record({"steps": "x"}) is None and plan_from_record(None) is None


def call(call_id: str, steps: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "name": "update_plan",
        "callId": call_id,
        "arguments": {"plan": steps},
    }


def result(call_id: str, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "name": "update_plan", "callId": call_id, "isError": error}


def test_the_plan_at_a_point_is_the_last_accepted_call() -> None:
    first = [{"step": "a", "status": "in_progress"}]
    refused = [{"step": "b", "status": "in_progress"}] * 2
    items = [call("1", first), result("1"), call("2", refused), result("2", error=True)]
    assert plan_in(items) == {"steps": first}
    assert plan_in(items[:1]) is None  # a call without its result (cut off) counts for nothing
    assert plan_in([]) is None
