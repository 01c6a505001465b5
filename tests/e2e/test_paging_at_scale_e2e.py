"""Paging a 50k-item history backwards with `conversation/read` + `beforeItem` through the real
daemon (docs/design.md, "Performance at scale"): every item exactly once, in order — also when a
turn appends items while a client is paging, and when the cursor names an unknown item.

The conversation is written with the store's own writer before the daemon starts (as a daemon
would have written it turn by turn, only faster). How long a page takes is measured by
bench/paging.py, not here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import RpcError
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.daemon import Daemon
from tests.support.events import run_turn

ITEMS = 50_000


async def write_conversation(
    home: Path, cwd: Path, count: int, reply: Callable[[int], str] = "reply {}".format
) -> tuple[str, list[str]]:
    """A conversation of `count` completed items (a user message and a reply per turn); item `n`
    is the user's "message n" or the answer `reply(n)`."""
    store = await Store.open(DataDir(home))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "demo",
            "title": "Fifty thousand items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    # Distinct valid ids without 100k calls to the random source: a random prefix, a counter.
    prefix = new_id()[:20]
    ids = [f"{prefix}{n:012x}" for n in range(count)]
    batch: list[r.Item] = []
    turn = ""
    for n, item_id in enumerate(ids):
        if n % 2 == 0:
            turn = f"{prefix[::-1]}{n:012x}"
        base: r.Item = {
            "itemId": item_id,
            "sessionId": sid,
            "turnId": turn,
            "createdAt": r.utc_now(),
            "status": r.COMPLETED,
        }
        if n % 2 == 0:
            batch.append({**base, "type": r.USER_MESSAGE, "text": f"message {n}", "origin": "user"})
        else:
            batch.append({**base, "type": r.AGENT_MESSAGE, "text": reply(n)})
        if len(batch) == 25_000:
            await store.append_items(cid, sid, batch)
            batch = []
    if batch:
        await store.append_items(cid, sid, batch)
    await store.close()
    return cid, ids


async def test_paging_back_through_50k_items_returns_each_once_in_order(
    daemon_factory: Callable[..., Daemon],
) -> None:
    d = daemon_factory(start=False)
    cid, ids = await write_conversation(d.home, d.workdir, ITEMS)
    d.start()
    client = await d.client()
    try:
        await client.subscribe(cid)
        seen: list[str] = []
        before: str | None = None
        pages = 0
        while True:
            params: dict[str, Any] = {"conversationId": cid, "limit": 1000}
            if before is not None:
                params["beforeItem"] = before
            page = await client.request("conversation/read", params)
            seen[:0] = [item["itemId"] for item in page["items"]]
            pages += 1
            if pages == 2:
                # A turn appends items while the client pages: the pages already taken and
                # the ones still to come are not disturbed by it.
                await run_turn(client, cid, "one more")
            if not page["hasMore"]:
                break
            before = page["items"][0]["itemId"]
        assert pages == ITEMS // 1000
        assert seen == ids

        # The newest page now ends with the turn's items; paging from before them lands on
        # the written history's end.
        newest = await client.request("conversation/read", {"conversationId": cid, "limit": 4})
        added = [item["itemId"] for item in newest["items"] if item["itemId"] not in set(ids)]
        assert len(added) >= 2
        page = await client.request(
            "conversation/read", {"conversationId": cid, "beforeItem": added[0], "limit": 3}
        )
        assert [item["itemId"] for item in page["items"]] == ids[-3:]
        assert page["hasMore"] is True

        with pytest.raises(RpcError) as caught:
            await client.request(
                "conversation/read", {"conversationId": cid, "beforeItem": new_id(), "limit": 5}
            )
        assert "no item" in str(caught.value)
    finally:
        await client.close()
