"""Steering into a running tool call and Esc, against a real daemon. (Queueing, editing and
withdrawing waiting inputs from the panel: test_inbox_fake_client.py.)"""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.inbox import InboxPanel
from openvaala_tui.widgets.items import ToolBlock, UserMessage
from tests.tui.conftest import Clients, demo_config, notices, ready, type_and_send, wait_for


def user_texts(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def start_sleep(pilot: Any, app: VaalaApp, seconds: float) -> None:
    await type_and_send(pilot, f"run: sleep {seconds}")
    await wait_for(
        pilot,
        lambda: any(b.status == "running" for b in app.transcript.query(ToolBlock)),
        what="the tool to run",
    )


async def test_steer_while_a_tool_runs(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        # The steer must reach the daemon while the tool still runs: leave a loaded machine time.
        await start_sleep(pilot, app, 4)
        assert "steer" in str(app.composer.border_title)
        await type_and_send(pilot, "also say hi")  # Enter while running: steer
        panel = app.query_one(InboxPanel)
        await wait_for(pilot, lambda: panel.display, what="the waiting panel")
        assert panel.inputs[0]["mode"] == "steer"
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: "also say hi" in user_texts(app), timeout=15)
        await wait_for(pilot, lambda: not root.running, timeout=15, what="the turn to end")
        assert not panel.display
        types = [i["type"] for i in root.items]
        # The steering message joined the same turn after the tool result.
        assert types.index("tool_result") < len(types) - 1 - types[::-1].index("user_message")
        assert len({i.get("turnId") for i in root.items if i.get("turnId")}) == 1


async def test_escape_interrupts_the_running_turn(daemon_factory: Any, clients: Clients) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await start_sleep(pilot, app, 20)
        await pilot.press("escape")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the interrupt")
        assert root.status == "interrupted"
        block = app.transcript.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status in ("interrupted", "error"), what="tool end")
        assert any("interrupted" in text for text in notices(app))
