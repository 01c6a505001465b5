"""`inbox/updated` lists waiting input in the order the agent will take it, through the real
daemon and a provider faked at the wire."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation, tool_started, turn_ended


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


async def _send(client: Client, cid: str, text: str, mode: str) -> str:
    result = await client.request("input/send", {"conversationId": cid, "text": text, "mode": mode})
    disposition: str = result["disposition"]
    return disposition


def _last_inbox(notes: list[Note]) -> list[str]:
    [*_, last] = (n for n in notes if n["method"] == "inbox/updated")
    return [i["text"] for i in last["params"]["inputs"]]


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_a_steer_is_listed_before_an_earlier_queued_message(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    go = d.workdir / "go"
    wait = f"while [ ! -f {go} ]; do sleep 0.02; done; echo released"
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": wait}),
        Reply().text("steered"),
        Reply().text("queued turn"),
    )
    await _send(client, cid, "start", "queue")
    await collect_until(client, tool_started)
    assert await _send(client, cid, "Q1", "queue") == "queued"
    assert await _send(client, cid, "S1", "steer") == "steering"
    notes = await collect_until(
        client, lambda n: n["method"] == "inbox/updated" and len(n["params"]["inputs"]) == 2
    )
    assert _last_inbox(notes) == ["S1", "Q1"]
    go.touch()
    await collect_until(client, turn_ended())
    await collect_until(client, turn_ended())
    # Taken in the listed order: S1 by the running turn's next call, Q1 by the next turn.
    _first, second, third = (r.json for r in fake_openai.requests)
    assert _user_texts(second)[-1] == "S1" and "Q1" not in _user_texts(second)
    assert _user_texts(third)[-1] == "Q1"
    await client.close()
