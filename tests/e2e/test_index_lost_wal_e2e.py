"""Issue 32, point 8: the daemon is killed (SIGKILL) and the index's `-wal` file is then lost.
The stale `metadata.db` left behind must not be trusted: the next start rebuilds the index from the
journals, so the newest conversation is in the list and in search (docs/storage.md, "Durability
order")."""

from __future__ import annotations

import asyncio

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


async def _until_listed(client: Client, cid: str) -> None:
    """The index commits behind the durable journal append: wait for it to have this one."""
    for _ in range(600):
        listed = await client.request("conversation/list", {"search": "lostwal"})
        if cid in [c["conversationId"] for c in listed["conversations"]]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the index never listed the new conversation")


async def test_a_lost_wal_after_a_kill_rebuilds_the_index(daemon: Daemon) -> None:
    client = await daemon.client(reconnect=False)
    older = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, older, "an older conversation")
    await client.close()
    daemon.stop()  # a clean stop: metadata.db itself now says "closed cleanly"

    daemon.start()
    client = await daemon.client(reconnect=False)
    newest = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, newest, "the newest lostwal words")
    await _until_listed(client, newest)
    await client.close()
    daemon.kill()
    wal = daemon.data_dir.root / "metadata.db-wal"
    assert wal.exists(), "the index kept no write-ahead log to lose"
    wal.unlink()

    daemon.start()
    client = await daemon.client(reconnect=False)
    try:
        listed = await client.request("conversation/list")
        assert {c["conversationId"] for c in listed["conversations"]} == {older, newest}
        found = await client.request("conversation/list", {"search": "lostwal"})
        assert [c["conversationId"] for c in found["conversations"]] == [newest]
    finally:
        await client.close()
    assert "rebuil" in daemon.log().lower()
