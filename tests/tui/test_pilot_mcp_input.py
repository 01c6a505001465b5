"""MCP prompts and resources from the terminal UI, against a real daemon and a real SDK-built
server: `/mcp__t__review file=app.py` sends the server's filled-in prompt as the message, and
`@t:notes://today` sends the resource's text with it."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_tui.app import VaalaApp
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import daemon_config
from tests.tui.conftest import Clients, ready, type_and_send, wait_for


def last_user_text(fake: FakeProvider) -> str:
    messages = fake.requests[-1].json["messages"]
    return str([m for m in messages if m["role"] == "user"][-1]["content"])


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
        await type_and_send(pilot, "What does @t:notes://today say?")
        await wait_for(pilot, lambda: len(fake.requests) == 2, 90, "the mention's turn")
        sent = last_user_text(fake)
        assert sent.startswith("What does @t:notes://today say?")
        assert "```t:notes://today\nWater the ficus at noon.\n```" in sent
