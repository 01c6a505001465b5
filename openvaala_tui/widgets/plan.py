"""The agent's plan (docs/protocol.md, "Plan"): a checklist above the transcript, hidden until the
session followed has one, redrawn on every `plan/updated`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from openvaala_server.domain.plan import Plan

MARKS = {"completed": ("✓", "green"), "in_progress": ("▸", "bold yellow"), "pending": ("○", "dim")}


def plan_text(plan: Plan) -> Text:
    """`Plan 1/3` and the explanation, then one line per step with its mark."""
    steps = [s for s in plan.get("steps") or [] if isinstance(s, dict)]
    done = sum(1 for s in steps if s.get("status") == "completed")
    text = Text()
    text.append(f"Plan {done}/{len(steps)}", style="bold")
    explanation = plan.get("explanation")
    if isinstance(explanation, str) and explanation:
        text.append(f"  {explanation}", style="italic dim")
    for step in steps:
        status = str(step.get("status") or "pending")
        mark, style = MARKS.get(status, MARKS["pending"])
        text.append("\n")
        text.append(f"{mark} ", style=style)
        body = {"completed": "dim strike", "in_progress": "bold"}.get(status, "")
        text.append(str(step.get("step") or ""), style=body)
    return text


class PlanPanel(Static):
    DEFAULT_CSS = """
    PlanPanel {
        height: auto;
        max-height: 12;
        overflow-y: auto;
        padding: 0 1;
        border-left: thick $accent;
        display: none;
    }
    PlanPanel.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan: Plan | None = None

    def show_plan(self, plan: Plan | None) -> None:
        self.plan = plan if isinstance(plan, dict) and plan.get("steps") else None
        self.set_class(self.plan is not None, "-shown")
        self.update(plan_text(self.plan) if self.plan is not None else "")
