"""An agent brings its model (docs/protocol.md, conversation/setAgent), through the real daemon:
switching to an agent that names a model switches the conversation to it, unless the user chose a
model for this conversation; which of the two it is survives a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn, snapshot_of

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[models.fast]
provider = "demo"
pace_ms = 0
context_window = 20000
max_output_tokens = 2000

[models.big]
provider = "demo"
pace_ms = 0

[agents.default]
model = "demo"

[agents.coder]
description = "Writes code on its own model"
model = "fast"

[agents.plain]
description = "Names no model"
"""


async def root_of(client: Client, cid: str) -> dict[str, Any]:
    await client.unsubscribe(cid)
    snapshot: Any = await snapshot_of(client, cid)
    session: dict[str, Any] = snapshot["sessions"][0]
    return session


async def after_restart(d: Daemon, cid: str, switch_to: str | None = None) -> dict[str, Any]:
    """The root session of `cid` as a restarted daemon reads it (after a switch of agent)."""
    d.stop()
    d.start()
    client = await d.client()
    try:
        if switch_to is not None:
            await client.request(
                "conversation/setAgent", {"conversationId": cid, "agent": switch_to}
            )
        return await root_of(client, cid)
    finally:
        await client.close()


async def test_switching_agent_switches_to_its_model(
    daemon_factory: Callable[..., Daemon],
) -> None:
    d = daemon_factory(CONFIG)
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "hello")  # saved: the switch is recorded on disk
        await client.request("conversation/setAgent", {"conversationId": cid, "agent": "coder"})
        root = await root_of(client, cid)
        assert (root["agent"], root["model"], root["modelChosen"]) == ("coder", "fast", False)
        assert root["usage"]["contextWindow"] == 20_000

        # An agent naming no model keeps the one the conversation has.
        await client.request("conversation/setAgent", {"conversationId": cid, "agent": "plain"})
        assert (await root_of(client, cid))["model"] == "fast"
        await client.request("conversation/setAgent", {"conversationId": cid, "agent": "default"})
        assert (await root_of(client, cid))["model"] == "demo"
    finally:
        await client.close()

    root = await after_restart(d, cid)
    assert (root["agent"], root["model"], root["modelChosen"]) == ("default", "demo", False)


async def test_a_model_the_user_chose_stays(daemon_factory: Callable[..., Daemon]) -> None:
    d = daemon_factory(CONFIG)
    client = await d.client()
    try:
        chosen = await new_conversation(client, str(d.workdir))
        await client.request("conversation/setModel", {"conversationId": chosen, "model": "big"})
        await run_turn(client, chosen, "hello")
        created = await new_conversation(client, str(d.workdir), model="big")  # at creation
        for cid in (chosen, created):
            await client.request("conversation/setAgent", {"conversationId": cid, "agent": "coder"})
            root = await root_of(client, cid)
            assert (root["agent"], root["model"], root["modelChosen"]) == ("coder", "big", True)
    finally:
        await client.close()

    root = await after_restart(d, chosen, switch_to="default")
    assert (root["agent"], root["model"], root["modelChosen"]) == ("default", "big", True)
