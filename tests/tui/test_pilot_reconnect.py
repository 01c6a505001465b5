"""A lost daemon, live: the daemon stops and starts again on the same data directory (a new
port); the TUI says it is reconnecting, finds the new address through the data directory's
runtime.lock, resubscribes, and the conversation goes on with nothing lost or doubled."""

from __future__ import annotations

import asyncio
from typing import Any

from openvaala_server.client import Client
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import AgentMessage, UserMessage
from tests.tui.conftest import demo_config, ready, type_and_send, wait_for


async def test_the_tui_reconnects_to_a_restarted_daemon(daemon_factory: Any) -> None:
    daemon = daemon_factory(demo_config())
    client = await Client.connect(data_dir=daemon.data_dir, start=False, client_name="tui")
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            root = app.view.root
            assert root is not None
            await type_and_send(pilot, "before the restart")
            await wait_for(pilot, lambda: len(app.transcript.query(AgentMessage)) == 1)
            await wait_for(pilot, lambda: not root.running, what="the first turn")
            old_address = daemon.address
            connection = app.query_one("#status-connection")

            stopping = asyncio.create_task(asyncio.to_thread(daemon.stop))
            await wait_for(
                pilot, lambda: app.view.connection == "reconnecting", what="reconnecting"
            )
            assert connection.display and "reconnecting" in str(connection.render())
            await stopping
            await asyncio.to_thread(daemon.start)
            assert daemon.address != old_address
            await wait_for(
                pilot, lambda: app.view.connection == "connected", timeout=15, what="reconnected"
            )
            assert not connection.display

            await type_and_send(pilot, "after the restart")
            await wait_for(
                pilot,
                lambda: (
                    len(app.transcript.query(AgentMessage)) == 2
                    and app.view.root is not None
                    and not app.view.root.running
                ),
                what="a turn on the restarted daemon",
            )
            texts = [w.item["text"] for w in app.transcript.query(UserMessage)]
            assert texts == ["before the restart", "after the restart"]
    finally:
        await client.close()
