"""Editing config.toml while the daemon runs: a real daemon, the file rewritten on disk, every
client told over the real websocket; the model faked at the wire (two fakes: the old and the new
address of one configured model)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from openvaala_server.client import Client
from openvaala_server.protocol.display import METHOD
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    run_turn,
    turn_ended,
)
from tests.support.json import j

DemoFactory = Callable[..., Daemon]

AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeProvider, FakeProvider]]:
    with FakeProvider(wire=CHAT) as old, FakeProvider(wire=CHAT) as new:
        for key, value in old.env.items():  # both use the same key
            monkeypatch.setenv(key, value)
        yield old, new


async def reloaded(client: Client) -> dict[str, Any]:
    notes = await collect_until(client, method_is("config/reloaded"))
    return notes[-1]["params"]  # type: ignore[no-any-return]


async def test_a_running_turn_keeps_its_model_and_the_next_turn_uses_the_new_one(
    daemon_factory: DemoFactory, fakes: tuple[FakeProvider, FakeProvider]
) -> None:
    old, new = fakes
    d = daemon_factory(old.config_toml("fake") + AGENT)
    (d.workdir / "notes.txt").write_text("hello\n")
    gate = Gate()
    old.enqueue(
        Reply().wait(gate).tool_call("read_file", {"path": "notes.txt"}),
        Reply().text("answered by the old address"),
    )
    new.enqueue(Reply().text("answered by the new address"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "read the notes"})
        assert await gate.wait_reached()
        # The user points the model at another address while the turn runs.
        d.config_path.write_text(new.config_toml("fake") + AGENT + "\n[server]\nport = 0\n")
        note = await reloaded(client)
        assert note["changed"] == ["models"] and note["state"] == "ok"
        gate.open()
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "completed"
        # Both model calls of the running turn went to the model it started with.
        assert len(old.requests) == 2 and new.requests == []
        texts = [i["text"] for i in completed_items(notes, "agent_message")]
        assert texts == ["answered by the old address"]

        notes = await run_turn(client, cid, "and now?")
        assert [i["text"] for i in completed_items(notes, "agent_message")] == [
            "answered by the new address"
        ]
        assert len(old.requests) == 2 and len(new.requests) == 1
        # The new model saw the whole conversation, the old turn's tool result included.
        sent = new.last_request.json["messages"]
        assert any(m["role"] == "tool" and "hello" in str(m["content"]) for m in sent)
    finally:
        await client.close()


async def test_a_typo_is_shown_to_every_client_and_the_last_good_config_is_kept(
    daemon_factory: DemoFactory,
) -> None:
    d = daemon_factory()
    watcher, later = await d.client("watcher"), None
    try:
        cid = await new_conversation(watcher, str(d.workdir))
        good = d.config_path.read_text()
        d.config_path.write_text(good.replace('model = "demo"', 'modle = "demo"'))
        notes = await collect_until(watcher, method_is("config/error"))
        error = notes[-1]["params"]
        assert error["state"] == "error" and error["key"] == "agents.default.modle"
        assert "did you mean `model`" in error["message"]
        assert str(d.config_path) in error["message"] and "last good" in error["message"]

        # Still served with the last good configuration.
        models = await watcher.request("models/list")
        assert [m["name"] for m in models["models"]] == ["demo"]
        notes = await run_turn(watcher, cid, "still working?")
        assert notes[-1]["params"]["status"] == "completed"

        # A client that connects now learns of the error at once.
        later = await d.client("later")
        assert j(later.server_info)["config"]["state"] == "error"
        assert j(later.server_info)["config"]["key"] == "agents.default.modle"

        # Fixed, with a model added: everyone hears it, and the new model is there.
        d.config_path.write_text(good + '\n[models.second]\nprovider = "demo"\n')
        for client in (watcher, later):
            note = await reloaded(client)
            assert note["changed"] == ["models"]
        models = await later.request("models/list")
        assert [m["name"] for m in models["models"]] == ["demo", "second"]
        third = await d.client("third")
        assert j(third.server_info)["config"]["state"] == "ok"
        await third.close()
    finally:
        await watcher.close()
        if later is not None:
            await later.close()


async def test_agents_and_permissions_reload_for_new_conversations(
    daemon_factory: DemoFactory,
) -> None:
    d = daemon_factory()
    client = await d.client()
    try:
        d.config_path.write_text(
            d.config_path.read_text()
            + '\n[agents.reviewer]\ndescription = "reads only"\nmodel = "demo"\n'
            + 'sandbox = "read-only"\napproval = "never"\n'
        )
        note = await reloaded(client)
        assert note["changed"] == ["agents"]
        agents = await client.request("agents/list")
        assert "reviewer" in [a["name"] for a in agents["agents"]]
        cid = await new_conversation(client, str(d.workdir), agent="reviewer")
        notes = await run_turn(client, cid, "run: touch made-here")
        assert notes[-1]["params"]["status"] == "completed"
        assert not (d.workdir / "made-here").exists()  # the new agent's read-only sandbox
    finally:
        await client.close()


async def test_a_turn_queued_before_its_model_was_removed_fails_saying_what_to_do(
    daemon_factory: DemoFactory, fakes: tuple[FakeProvider, FakeProvider]
) -> None:
    old, _new = fakes
    d = daemon_factory(old.config_toml("fake") + AGENT)
    gate = Gate()
    old.enqueue(Reply().text("first ").wait(gate).text("answer"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "one"})
        assert await gate.wait_reached()
        await client.request("input/send", {"conversationId": cid, "text": "two", "mode": "queue"})
        # The model goes away while the first turn runs and the second waits.
        d.config_path.write_text(
            '[agents.default]\ndescription = "test"\nmodel = "demo"\n\n[server]\nport = 0\n'
        )
        await reloaded(client)
        gate.open()
        first = await collect_until(client, turn_ended())
        assert first[-1]["params"]["status"] == "completed"  # it kept its model
        second = await collect_until(client, turn_ended())
        assert second[-1]["params"]["status"] == "failed"
        [notice] = completed_items(second, "notice")
        assert "model 'fake' is not configured" in notice["text"]
        assert "choose another model" in notice["text"] and "(available: demo)" in notice["text"]
        assert not METHOD.search(notice["text"])  # every client shows it as it is
    finally:
        await client.close()
