"""The app against a real daemon: a turn streams, steering, queueing, interrupting."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import AgentMessage, Reasoning, ToolBlock, UserMessage
from tests.tui.conftest import Clients, demo_config, ready, type_and_send, wait_for


def types(app: VaalaApp) -> list[str]:
    return [str(w.item.get("type")) for w in app.transcript.item_widgets]


async def test_send_and_watch_a_turn_stream(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config(pace_ms=5))
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "think: about tests")
        root = app.view.root
        assert root is not None
        await wait_for(
            pilot,
            lambda: (
                types(app) == ["user_message", "reasoning", "agent_message"] and not root.running
            ),
            what="the turn to end",
        )
        assert app.transcript.query(UserMessage)
        reasoning = app.transcript.query_one(Reasoning)
        assert reasoning.query_one("Collapsible").collapsed
        message = app.transcript.query_one(AgentMessage)
        await wait_for(
            pilot,
            lambda: "offline demo model" in message.source,
            what="the markdown",
        )
        assert app.composer.is_empty
        assert app.view.title != "New conversation"


async def test_tool_call_shows_status_and_output(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config(pace_ms=0))
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "run: echo hello-tui")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: bool(app.transcript.query(ToolBlock)), what="a tool block")
        await wait_for(pilot, lambda: not root.running, what="the turn to end")
        block = app.transcript.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "done", what="tool done")
        assert "echo hello-tui" in str(block.query_one(".tool-header").render())
        assert "hello-tui" in block._output()
        assert block.has_class("-done")
