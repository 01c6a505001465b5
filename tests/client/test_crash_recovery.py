"""A daemon killed mid-reply (kill -9): a client made to restart daemons starts a new one at
once — the crash freed the lock, so nobody else is starting one and the grace period does not
apply (docs/editors.md) — resubscribes, and its view keeps the partial reply it had shown,
marked interrupted, though the new daemon's snapshot lacks it. Real daemons, the provider faked
at the wire."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

import pytest

from openvaala_server.client import CONNECTION, Client, connection
from openvaala_server.client.view import ConversationView
from tests.e2e.test_approvals_e2e import fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon


async def _fold_until(
    client: Client, view: ConversationView, done: Any, timeout: float = 30
) -> None:
    async def pump() -> None:
        async for note in client.notifications():
            view.apply(note)
            if done(note):
                return

    await asyncio.wait_for(pump(), timeout)


async def test_a_killed_daemon_is_replaced_at_once_and_the_partial_reply_kept(
    daemon_factory: Any, fake_openai: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai, "never"))
    for name in ("OPENVAALA_HOME", "OPENVAALA_CONFIG"):
        monkeypatch.setenv(name, daemon.env[name])  # the daemon the client starts: the same
    # Were the client to wait out the grace period, the test would time out long before.
    monkeypatch.setattr(connection, "RESTART_GRACE_S", 3600.0)
    fake_openai.enqueue(Reply().text("a partial ", "reply").hang())
    client = await Client.connect(data_dir=daemon.data_dir, start=False, restart=True)
    try:
        created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        subscribed = await client.subscribe(cid)
        assert subscribed["snapshot"] is not None
        view = ConversationView.from_snapshot(subscribed["snapshot"], subscribed["seq"])
        await client.request("input/send", {"conversationId": cid, "text": "hello"})
        root = view.root
        assert root is not None

        def streamed(_note: Any) -> bool:
            return any(i.get("text") == "a partial reply" for i in view.root.items)  # type: ignore[union-attr]

        await _fold_until(client, view, streamed)
        old = client.token
        await asyncio.to_thread(daemon.stop, signal.SIGKILL)

        def reconnected(note: Any) -> bool:
            return bool(note["method"] == CONNECTION and note["params"]["state"] == "connected")

        await _fold_until(client, view, reconnected)
        assert client.token != old  # a new daemon, started by this client
        items = view.root.items  # type: ignore[union-attr]
        messages = [i for i in items if i["type"] == "agent_message"]
        assert [(m["text"], m["status"]) for m in messages] == [("a partial reply", "interrupted")]
        kinds = [i["type"] for i in items]
        # Where it was: after the message it answered, before the note of the crash.
        assert kinds.index("user_message") < kinds.index("agent_message") < kinds.index("notice")
    finally:
        await client.close()
