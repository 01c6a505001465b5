"""The TUI's header shows the agent and the model, and whether the model was chosen by the user
(it then stays when the agent changes) or came with the agent (docs/protocol.md, setAgent).

On a fake client (tests/tui/fake_client.py) answering as the daemon does: which model an agent
brings, and that a chosen one stays, is the daemon's decision, tested against the real daemon in
tests/e2e/test_agent_brings_model_e2e.py (the same agents: coder brings `fast`)."""

from __future__ import annotations

from textual.widgets import Label

from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import EmptyResult
from openvaala_tui.app import VaalaApp
from tests.tui.conftest import ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD

AGENT_MODELS = {"default": "demo", "coder": "fast"}


def header(app: VaalaApp) -> str:
    return str(app.query_one("#status-model", Label).render())


def switching(fake: FakeClient) -> FakeClient:
    """`fake` answering setAgent and setModel with the root session's `session/updated`."""
    chosen: dict[str, bool] = {}

    def set_agent(params: JsonObject) -> EmptyResult:
        cid, name = str(params["conversationId"]), str(params["agent"])
        root = fake.snapshot(cid)["sessions"][0]
        model = root["model"] if chosen.get(cid) else AGENT_MODELS[name]
        fake.update_session(cid, agent=name, model=model)
        return {}

    def set_model(params: JsonObject) -> EmptyResult:
        cid = str(params["conversationId"])
        chosen[cid] = True
        fake.update_session(cid, model=str(params["model"]), modelChosen=True)
        return {}

    fake.answers.update({"conversation/setAgent": set_agent, "conversation/setModel": set_model})
    return fake


async def test_the_header_shows_the_agents_model_and_a_chosen_one() -> None:
    app = VaalaApp(cwd=CWD, client=switching(FakeClient(models=("demo", "fast", "big"))))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: header(app) == "default · demo", what="the header")
        await type_and_send(pilot, "/agent coder")
        await wait_for(pilot, lambda: header(app) == "coder · fast", what="the agent's model")
        await type_and_send(pilot, "/model big")
        await wait_for(pilot, lambda: header(app) == "coder · big (chosen)", what="the choice")
        await type_and_send(pilot, "/agent default")
        await wait_for(pilot, lambda: header(app) == "default · big (chosen)", what="it stays")
