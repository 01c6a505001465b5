"""Reconnection with the one backoff, against a real daemon that is stopped and started again
(on a new port, with a new token): the client finds it through the data directory, resubscribes
before anything else goes out, yields a snapshot for what the new daemon cannot replay, and
carries on; while the daemon is down it waits by the backoff's delays."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

from openvaala_server.client import CONNECTION, SNAPSHOT, Client
from openvaala_server.client.backoff import Backoff
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, new_conversation, run_turn


@dataclass(frozen=True)
class CountingBackoff(Backoff):
    """The client's own backoff, noting each delay it hands out."""

    given: list[float] = field(default_factory=list, compare=False)
    six_given: asyncio.Event = field(default_factory=asyncio.Event, compare=False)

    def delays(self) -> Iterator[float]:
        for delay in super().delays():
            self.given.append(delay)
            if len(self.given) >= 6:
                self.six_given.set()
            yield delay


async def test_reconnects_by_the_backoff_to_a_restarted_daemon(daemon: Daemon) -> None:
    backoff = CountingBackoff(first=0.05, factor=2.0, cap=0.4)
    client = await Client.connect(data_dir=daemon.data_dir, start=False, backoff=backoff)
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, "hello")
        old = (client.address, client.token)
        plain = await Client.connect(data_dir=daemon.data_dir, start=False, reconnect=False)

        daemon.stop()
        notes = await collect_until(client, method_is(CONNECTION), timeout=20)
        assert notes[-1]["params"] == {"state": "reconnecting"}
        # A client told not to reconnect just ends its notifications.
        assert [n async for n in plain.notifications()] == []
        await plain.close()
        # Down for a while: the client waits by the backoff, doubling up to its cap.
        await asyncio.wait_for(backoff.six_given.wait(), 20)
        assert not client.connected
        assert backoff.given[:6] == [0.05, 0.1, 0.2, 0.4, 0.4, 0.4]

        # A request made meanwhile waits for the connection instead of failing.
        pending = asyncio.create_task(client.request("conversation/list", {}, timeout=60))
        daemon.start()
        notes = await collect_until(
            client, lambda n: n["method"] == CONNECTION and n["params"]["state"] == "connected"
        )
        assert (client.address, client.token) != old  # found again through the data directory
        assert notes[-1]["params"].get("restarted") is True
        # The new daemon cannot replay what the old one sent: the view redraws from a snapshot,
        # which came before the connection was announced (no request went out unsubscribed).
        snapshots = [n for n in notes if n["method"] == SNAPSHOT]
        assert [s["params"]["conversationId"] for s in snapshots] == [cid]
        items = snapshots[0]["params"]["snapshot"]["sessions"][0]["items"]
        assert [i["type"] for i in items][:2] == ["user_message", "agent_message"]
        listed = await asyncio.wait_for(pending, 30)
        assert cid in [c["conversationId"] for c in listed["conversations"]]

        # And the conversation goes on over the new connection, its events heard.
        events = await run_turn(client, cid, "again")
        assert any(n["method"] == "item/delta" for n in events)
        ended = [n for n in events if n["method"] == "turn/ended"]
        assert ended[-1]["params"]["status"] == "completed"

        # Closing the client ends its notifications for whoever iterates them.
        closing = asyncio.create_task(collect_until(client, method_is("never"), timeout=20))
        await asyncio.sleep(0)
        await client.close()
        rest = await asyncio.wait_for(closing, 10)  # returns, instead of waiting for ever
        assert all(n["method"] != "never" for n in rest)
    finally:
        await client.close()
