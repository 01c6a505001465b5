"""The `update_plan` tool: the agent replaces its session's checklist, which every client shows.

Bound to the conversation and session that uses it, like the collaboration tools: the plan is
conversation state (a `plan_updated` metadata record, then `plan/updated` to every subscriber;
docs/protocol.md, "Plan"), not a file. It touches nothing the sandbox guards, so it never asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

from openvaala_server import errors
from openvaala_server.domain import tool_names
from openvaala_server.domain.plan import STEP_STATUSES, PlanError, parse_plan, render_plan
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from openvaala_server.domain.plan import Plan

# Replaces the session's plan where it lives: the conversation (`LiveConversation.set_plan`,
# bound to the session by the runtime), durable first.
SetPlan = Callable[["Plan"], Awaitable[None]]


UPDATE_PLAN_TOOL: Final = tool_names.UPDATE_PLAN

_SPEC = ToolSpec(
    name=UPDATE_PLAN_TOOL,
    description=(
        "Keep a short plan of the task as a checklist the user sees next to the conversation. "
        "Send the whole list each time (it replaces the previous one): each step a few words, "
        "with status pending, in_progress or completed; at most one step in_progress. Mark a "
        "step completed as soon as it is done and the next one in_progress. Use it for tasks of "
        "several steps, not for simple questions. `explanation` may say why the plan changed."
    ),
    parameters={
        "type": "object",
        "properties": {
            "explanation": {"type": "string", "description": "Optional: why the plan changed."},
            "plan": {
                "type": "array",
                "description": "The steps, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string"},
                        "status": {"type": "string", "enum": list(STEP_STATUSES)},
                    },
                    "required": ["step", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
)


class UpdatePlanTool:
    def __init__(self, set_plan: SetPlan) -> None:
        self.set_plan = set_plan

    @property
    def spec(self) -> ToolSpec:
        return _SPEC

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        try:
            plan = parse_plan(arguments)
        except PlanError as exc:
            return ToolResult(f"update_plan: {exc} The plan was not changed.", is_error=True)
        try:
            await self.set_plan(plan)
        except errors.OpenVaalaError as exc:
            return ToolResult(f"update_plan: {exc.message}", is_error=True)
        return ToolResult("Plan updated:\n" + render_plan(plan))
