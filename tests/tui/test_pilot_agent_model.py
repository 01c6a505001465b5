"""The TUI's header shows the agent and the model, and whether the model was chosen by the user
(it then stays when the agent changes) or came with the agent (docs/protocol.md, setAgent)."""

from __future__ import annotations

from typing import Any

from textual.widgets import Label

from openvaala_tui.app import VaalaApp
from tests.e2e.test_agent_brings_model_e2e import CONFIG
from tests.tui.conftest import Clients, ready, type_and_send, wait_for


def header(app: VaalaApp) -> str:
    return str(app.query_one("#status-model", Label).render())


async def test_the_header_shows_the_agents_model_and_a_chosen_one(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(CONFIG)
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: header(app) == "default · demo", what="the header")
        await type_and_send(pilot, "/agent coder")
        await wait_for(pilot, lambda: header(app) == "coder · fast", what="the agent's model")
        await type_and_send(pilot, "/model big")
        await wait_for(pilot, lambda: header(app) == "coder · big (chosen)", what="the choice")
        await type_and_send(pilot, "/agent default")
        await wait_for(pilot, lambda: header(app) == "default · big (chosen)", what="it stays")
