"""The index after `kill -9` in the middle of a burst of appends: every record the daemon
acknowledged is found by search after the restart (docs/storage.md, "Durability order").

Index writes commit behind the durable journal append, batched (`store/index.py`), so a kill
lands with index writes queued or mid-commit; the journal is the truth and the restart must
make the index agree with it."""

from __future__ import annotations

import asyncio
from typing import Any

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import new_conversation

CONVERSATIONS = 4
ENOUGH = 24  # acknowledged user messages across the conversations before the kill


async def _burst(
    client: Client, cid: str, tag: str, acked: list[tuple[str, str]], enough: asyncio.Event
) -> None:
    """Turns back to back; each user message's word is recorded once `item/completed` says it
    is durable (clients are told only after the journal's fsync)."""
    n = 0

    async def send() -> None:
        nonlocal n
        text = f"remember crash{tag}x{n}"
        n += 1
        await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})

    await send()
    async for note in client.notifications():
        params: Any = note["params"]
        if note["method"] == "item/completed" and params["item"]["type"] == "user_message":
            acked.append((params["item"]["text"].removeprefix("remember "), cid))
            if len(acked) >= ENOUGH:
                enough.set()
        if note["method"] == "turn/ended":
            await send()


async def test_search_finds_every_acknowledged_record_after_a_kill_mid_burst(
    daemon: Daemon,
) -> None:
    clients = [await daemon.client(reconnect=False) for _ in range(CONVERSATIONS)]
    cids = [await new_conversation(c, str(daemon.workdir)) for c in clients]
    acked: list[tuple[str, str]] = []
    enough = asyncio.Event()
    bursts = [
        asyncio.ensure_future(_burst(c, cid, f"c{i}", acked, enough))
        for i, (c, cid) in enumerate(zip(clients, cids, strict=True))
    ]
    try:
        await asyncio.wait_for(enough.wait(), 60)
        assert daemon.process is not None
        daemon.process.kill()  # mid-burst: the turns are still running
        seen = list(acked)
    finally:
        for burst in bursts:
            burst.cancel()
        await asyncio.gather(*bursts, return_exceptions=True)
        for c in clients:
            await c.close()
    daemon.stop()
    daemon.start()
    client = await daemon.client(reconnect=False)
    try:
        missing = []
        for word, cid in seen:
            listed = await client.request("conversation/list", {"search": word, "limit": 10})
            if [s["conversationId"] for s in listed["conversations"]] != [cid]:
                missing.append(word)
        assert missing == []
        # The counts agree with the journals too: each conversation lists at least the user
        # messages acknowledged in it.
        listed = await client.request("conversation/list", {"limit": 50})
        counts = {s["conversationId"]: s["messageCount"] for s in listed["conversations"]}
        for cid in cids:
            assert counts[cid] >= sum(1 for _, c in seen if c == cid)
    finally:
        await client.close()


async def test_another_client_sees_a_record_as_soon_as_it_is_acknowledged(daemon: Daemon) -> None:
    """Index writes are batched and wait up to 10 ms for company, but a read waits for every
    write queued before it: the moment one client is told of a message, another finds it."""
    writer = await daemon.client(reconnect=False)
    reader = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(writer, str(daemon.workdir))
        for n in range(5):
            word = f"seen{n}now"
            await writer.request(
                "input/send", {"conversationId": cid, "text": f"note {word}", "mode": "queue"}
            )
            async for note in writer.notifications():
                item: Any = note["params"].get("item", {})
                if note["method"] == "item/completed" and item.get("type") == "user_message":
                    break
            listed = await reader.request("conversation/list", {"search": word})
            assert [s["conversationId"] for s in listed["conversations"]] == [cid]
            async for note in writer.notifications():
                if note["method"] == "turn/ended":
                    break
    finally:
        await writer.close()
        await reader.close()
