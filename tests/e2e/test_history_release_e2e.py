"""A conversation nobody uses lets go of its history, and nothing of it is lost (docs/design.md,
"Performance at scale", runtime/residency.py).

A real daemon opens a 10,000-item conversation written with the store's own writer. Once its
client unsubscribes (and, for a reader that never subscribed, a moment after its last page) the
daemon keeps only the last page in memory and says so in its log. Read back page by page from
the journal, the history is the same, item for item, and is not read whole again for it (the
daemon logs every whole read); a turn on the released conversation sends the model the whole
history, as before. The model is faked at the wire. How much memory
that saves is measured by bench/memory.py, not here."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from openvaala_server.client import Client
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, turn_ended

ITEMS = 10_000
AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'
RELEASED = "history released from memory"
WHOLE = "read whole"


async def write_conversation(home: Path, cwd: Path, count: int) -> tuple[str, list[str]]:
    """A conversation of `count` completed items (a user message and a reply per turn)."""
    store = await Store.open(DataDir(home))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "fake",
            "title": "Ten thousand items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    prefix = new_id()[:20]
    items: list[dict[str, Any]] = []
    for n in range(count):
        base = {
            "itemId": f"{prefix}{n:012x}",
            "sessionId": sid,
            "turnId": f"{prefix[::-1]}{n // 2:012x}",
            "createdAt": r.utc_now(),
            "status": r.COMPLETED,
        }
        if n % 2 == 0:
            items.append({**base, "type": r.USER_MESSAGE, "text": f"message {n}", "origin": "user"})
        else:
            items.append({**base, "type": r.AGENT_MESSAGE, "text": f"reply {n}"})
    await store.append_items(cid, sid, cast("list[r.Item]", items))
    await store.close()
    return cid, [i["itemId"] for i in items]


async def read_every_page(client: Client, cid: str) -> list[dict[str, Any]]:
    """The whole history, read backwards by pages of 700 (`beforeItem`)."""
    items: list[dict[str, Any]] = []
    before: str | None = None
    while True:
        params: dict[str, Any] = {"conversationId": cid, "limit": 700}
        if before is not None:
            params["beforeItem"] = before
        page = await client.request("conversation/read", params)
        items[:0] = page["items"]
        if not page["hasMore"]:
            return items
        before = page["items"][0]["itemId"]


async def released(d: Daemon, cid: str, times: int, timeout: float = 15.0) -> None:
    """Wait until the daemon has logged `times` releases of conversation `cid`'s history."""
    deadline = time.monotonic() + timeout
    while True:
        log = d.log_path.read_text(errors="replace")
        count = sum(1 for line in log.splitlines() if cid in line and RELEASED in line)
        if count >= times:
            assert count == times, log[-3000:]
            return
        assert time.monotonic() < deadline, f"not released {times}x:\n{log[-3000:]}"
        await asyncio.sleep(0.05)  # the daemon says it only in its log


def whole_reads(d: Daemon, cid: str) -> int:
    """How often the daemon read a session of `cid` whole from its journal (it logs each)."""
    log = d.log_path.read_text(errors="replace")
    return sum(1 for line in log.splitlines() if cid in line and WHOLE in line)


async def test_a_released_history_reads_the_same_and_a_turn_sees_all_of_it(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        d = daemon_factory(fake.config_toml("fake", context_window=1_000_000) + AGENT, start=False)
        cid, ids = await write_conversation(d.home, d.workdir, ITEMS)
        d.start()
        client = await d.client()
        try:
            # Subscribed: the whole history is read into memory and kept while watched.
            await client.subscribe(cid)
            before = await read_every_page(client, cid)
            assert [i["itemId"] for i in before] == ids
            await client.request("conversation/unsubscribe", {"conversationId": cid})
            await released(d, cid, 1)

            assert whole_reads(d, cid) == 1  # the open's, in the background

            # Paged back from the journal by a client that never subscribes: the same items,
            # without reading the whole history back (it stays let go).
            assert await read_every_page(client, cid) == before
            assert whole_reads(d, cid) == 1

            # A turn on the released conversation: the model gets the whole history.
            await client.subscribe(cid)
            fake.enqueue(Reply().text("All read."))
            await client.request(
                "input/send", {"conversationId": cid, "text": "one more", "mode": "queue"}
            )
            notes = await asyncio.wait_for(collect_until(client, turn_ended()), 30)
            assert notes[-1]["params"]["status"] == "completed", notes[-1]
            messages = fake.last_request.json["messages"]
            texts = [m["content"] for m in messages if m["role"] in ("user", "assistant")]
            assert texts == [i["text"] for i in before] + ["one more"]
            assert whole_reads(d, cid) == 2  # read back for the model call

            # Unsubscribed after the turn: released once more, the turn's items included.
            await client.request("conversation/unsubscribe", {"conversationId": cid})
            await released(d, cid, 2)
            after = await read_every_page(client, cid)
            assert after[:ITEMS] == before
            assert [i["type"] for i in after[ITEMS:]] == [r.USER_MESSAGE, r.AGENT_MESSAGE]
        finally:
            await client.close()
