"""MCP prompts and resources from the terminal UI, against a real daemon and a real SDK-built
server: `/mcp__t__review file=app.py` sends the server's filled-in prompt as the message, and
`@t:notes://today` sends the resource's text with it; a call's progress shows live."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Static

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import ToolBlock
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import daemon_config, last_user_text
from tests.tui.conftest import Clients, ready, type_and_send, wait_for


@pytest.mark.timeout(180)
async def test_a_prompt_as_a_slash_command_and_a_resource_mention(
    daemon_factory: Any, clients: Clients, fake: FakeProvider
) -> None:
    daemon = daemon_factory(
        daemon_config(fake, tools='["mcp:t"]', extra="startup_timeout_s = 45\n")
    )
    fake.enqueue(Reply().text("reviewed"), Reply().text("noted"))
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/mcp__t__review file=app.py")
        await wait_for(pilot, lambda: len(fake.requests) == 1, 90, "the prompt's turn")
        assert last_user_text(fake) == "Review app.py for bugs, briefly."

        await wait_for(pilot, lambda: not app.view.root or not app.view.root.running, 30)
        # Once the server is ready the composer completes its prompts and resources.
        composer = app.composer
        await wait_for(pilot, lambda: bool(composer.mcp_offers.prompts), 30, "the offers")
        for typed, expected in (("/mcp__t__re", "/mcp__t__review"), ("@t:no", "@t:notes://today")):
            composer.set_text(typed)
            composer.update_completion()
            assert composer.popup is not None and composer.popup.completion is not None
            assert composer.popup.completion.candidates[0][0] == expected
        composer.set_text("")
        await type_and_send(pilot, "What does @t:notes://today say?")
        await wait_for(pilot, lambda: len(fake.requests) == 2, 90, "the mention's turn")
        sent = last_user_text(fake)
        assert sent.startswith("What does @t:notes://today say?")
        assert "```t:notes://today\nWater the ficus at noon.\n```" in sent


@pytest.mark.timeout(180)
async def test_an_mcp_calls_progress_shows_live_in_its_tool_block(
    daemon_factory: Any, clients: Clients, fake: FakeProvider
) -> None:
    # Each step waits for a file the test writes once it saw the step before: no timing.
    daemon = daemon_factory(daemon_config(fake, extra="startup_timeout_s = 45\n"))
    gate = daemon.workdir / "gate"
    fake.enqueue(
        Reply().tool_call("mcp__t__gated_steps", {"count": 3, "gate": str(gate)}),
        Reply().text("done"),
    )
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(110, 44)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "go")

        def live() -> str:
            # A block mounted but not yet composed has no output widget: it shows nothing.
            return "".join(
                str(output.render())
                for block in app.transcript.query(ToolBlock)
                for output in block.query(".tool-output").results(Static)
            )

        await wait_for(pilot, lambda: "[progress 1/3] step 1 of 3" in live(), 90, "step 1")
        assert "[progress 2/3]" not in live()  # the call is still running
        gate.write_text("go on")
        await wait_for(pilot, lambda: "3 steps" in live(), 60, "the result")
