"""The toolbox in the terminal UI, against a real daemon: the agent's plan above the transcript,
an apply_patch result drawn as a coloured diff, and `/mcp` listing the MCP servers' state."""

from __future__ import annotations

from typing import Any

import pytest
from textual.content import Content
from textual.widgets import Static

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import ToolBlock
from openvaala_tui.widgets.plan import PlanPanel
from tests.fakes.providers import FakeProvider
from tests.support.toolbox import ORIGINAL, plan_and_patch, toolbox_config
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for


def styles_of(content: Content, fragment: str) -> set[str]:
    """The styles of the spans covering `fragment` in what a widget draws."""
    start = content.plain.index(fragment)
    return {str(s.style) for s in content.spans if s.start <= start < s.end}


@pytest.mark.timeout(180)
async def test_plan_diff_and_mcp_status(
    daemon_factory: Any, clients: Clients, fake: FakeProvider
) -> None:
    daemon = daemon_factory(toolbox_config(fake))
    (daemon.workdir / "greet.py").write_text(ORIGINAL)
    plan_and_patch(fake)
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        panel = app.query_one(PlanPanel)
        assert not panel.display  # no plan yet: nothing shown
        await type_and_send(pilot, "fix greet")
        await wait_for(pilot, lambda: panel.plan is not None, 90, "the plan")
        assert panel.display
        shown = panel.render()
        assert isinstance(shown, Content)
        assert "Plan 1/3" in shown.plain and "Small fix" in shown.plain
        assert "✓ Read the code" in shown.plain and "▸ Patch greet.py" in shown.plain
        assert "○ Run the tests" in shown.plain

        root = app.view.root
        assert root is not None

        def patched() -> ToolBlock | None:
            for block in app.transcript.query(ToolBlock):
                if block.result is not None and block.result.get("changes"):
                    return block
            return None

        await wait_for(pilot, lambda: patched() is not None and not root.running, 60, "diff")
        block = patched()
        assert block is not None
        body = block.query_one(".tool-output", Static).render()
        assert isinstance(body, Content)
        assert "-    return 'hi'" in body.plain and "+    return 'hello'" in body.plain
        assert "ansi_green" in styles_of(body, "+    return 'hello'")
        assert "ansi_red" in styles_of(body, "-    return 'hi'")

        await type_and_send(pilot, "/mcp")
        await wait_for(pilot, lambda: any("MCP servers:" in t for t in notices(app)), 10, "/mcp")
        report = next(t for t in notices(app) if "MCP servers:" in t)
        assert "● t — ready, " in report and "echo" in report
        assert "✗ gone — failed: cannot run 'openvaala-no-such-mcp-server'" in report

    # A client opening the conversation later (or after a restart) shows the same plan.
    again = VaalaApp(conversation_id=app.view.conversation_id, client=await clients(daemon, "b"))
    async with again.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        later = again.query_one(PlanPanel)
        await wait_for(pilot, lambda: later.plan is not None, 10, "the plan from the snapshot")
        assert later.display
