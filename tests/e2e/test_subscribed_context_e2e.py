"""A subscribed session holds its model context, not its whole history, and nothing a client or
the model sees changes (docs/design.md, "Subscribed sessions hold their context";
runtime/residency.py).

A real daemon opens a 3,000-item conversation, written with the store's own writer, that was
compacted once (a summary covering up to item 2,499) and has an old message pinned. Subscribed,
it reads the context from the journal's end, never the whole history (the daemon logs each
whole read). Then, checked against the journal: a turn sends the model the summary, the pin and
what follows the covered point; pages of old items, a fork from an early item, a rewind to an
early message and a compaction each get the right items; after the fork's whole read the
daemon goes back to holding the context while still subscribed. The model is faked at the wire.
"""

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
from tests.e2e.test_history_release_e2e import read_every_page, whole_reads
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, snapshot_of, turn_ended

ITEMS = 3_000
COVERED = 2_499  # the summary covers items 0..2,499
PINNED = 100  # a user message the summary covers, pinned: sent after the summary
AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'
SUMMARY = "THE OLD SUMMARY"


def text_of(n: int) -> str:
    return f"message {n}" if n % 2 == 0 else f"reply {n}"


async def write_compacted(home: Path, cwd: Path) -> tuple[str, list[dict[str, Any]]]:
    """`ITEMS` messages, a summary after item 2,599 covering up to item `COVERED`, a pin."""
    store = await Store.open(DataDir(home))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": "fake",
            "title": "Compacted once",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    items: list[dict[str, Any]] = []
    for n in range(ITEMS):
        base = {"sessionId": sid, "turnId": f"{n // 2:032x}", "createdAt": r.utc_now()}
        kind = r.USER_MESSAGE if n % 2 == 0 else r.AGENT_MESSAGE
        origin = {"origin": "user"} if kind == r.USER_MESSAGE else {}
        items.append(
            {**base, "itemId": new_id(), "type": kind, "status": r.COMPLETED, "text": text_of(n)}
            | origin
        )
        if n == 2_599:
            summary = {"itemId": new_id(), "type": r.SUMMARY, "status": r.COMPLETED}
            items.append(
                {**base, **summary, "text": SUMMARY, "coversUpTo": items[COVERED]["itemId"]}
            )
    await store.append_items(cid, sid, cast("list[r.Item]", items))
    pinned = items[PINNED]["itemId"]
    await store.append_metadata(cid, [{"type": r.ITEM_PINNED, "sessionId": sid, "itemId": pinned}])
    await store.close()
    return cid, items


async def contexts_released(d: Daemon, cid: str, timeout: float = 30.0) -> None:
    """Wait until the daemon has logged that `cid` went back to holding its contexts."""
    deadline = time.monotonic() + timeout
    while True:
        log = d.log_path.read_text(errors="replace")
        if any(cid in line and "the contexts" in line for line in log.splitlines()):
            return
        assert time.monotonic() < deadline, f"not back to its context:\n{log[-3000:]}"
        await asyncio.sleep(0.05)  # the daemon says it only in its log


def sent_texts(fake: FakeProvider) -> list[str]:
    messages = fake.last_request.json["messages"]
    return [str(m["content"]) for m in messages if m["role"] in ("user", "assistant")]


async def items_of(client: Client, cid: str) -> list[dict[str, Any]]:
    await client.subscribe(cid)
    try:
        return await read_every_page(client, cid)
    finally:
        await client.request("conversation/unsubscribe", {"conversationId": cid})


async def test_a_subscribed_session_holds_its_context_and_everything_reads_the_same(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        d = daemon_factory(fake.config_toml("fake", context_window=1_000_000) + AGENT, start=False)
        cid, written = await write_compacted(d.home, d.workdir)
        d.start()
        client = await d.client()
        try:
            await client.subscribe(cid)
            # A turn: the model gets the summary, the pinned message, then what follows the
            # covered point — read from the journal's end, never the whole history.
            fake.enqueue(Reply().text("Answered."))
            await client.request(
                "input/send", {"conversationId": cid, "text": "one more", "mode": "queue"}
            )
            notes = await asyncio.wait_for(collect_until(client, turn_ended()), 60)
            assert notes[-1]["params"]["status"] == "completed", notes[-1]
            texts = sent_texts(fake)
            assert any(SUMMARY in t for t in texts)
            after = [text_of(n) for n in range(COVERED + 1, ITEMS)]
            mine = [t for t in texts if t.startswith(("message ", "reply ", "one more"))]
            assert mine == [text_of(PINNED), *after, "one more"]
            assert whole_reads(d, cid) == 0

            # Old pages, read while subscribed: the journal's items, in order.
            history = await read_every_page(client, cid)
            assert [i["itemId"] for i in history[: len(written)]] == [i["itemId"] for i in written]
            assert [i["text"] for i in history[len(written) :]] == ["one more", "Answered."]
            page = await client.request(
                "conversation/read",
                {"conversationId": cid, "beforeItem": written[1_000]["itemId"], "limit": 50},
            )
            assert [i["itemId"] for i in page["items"]] == [i["itemId"] for i in written[950:1_000]]
            assert page["hasMore"] is True
            assert whole_reads(d, cid) == 0

            # A fork from an early item: exactly the items up to it.
            forked = await client.request(
                "conversation/fork", {"conversationId": cid, "upToItemId": written[300]["itemId"]}
            )
            fid = forked["conversation"]["conversationId"]
            assert [i["text"] for i in await items_of(client, fid)] == [
                text_of(n) for n in range(301)
            ]
            # It keeps the pin of the old message it copied (docs/protocol.md).
            listed = await client.request("sessions/list", {"conversationId": fid})
            snapshot = await snapshot_of(client, fid)
            await client.request("conversation/unsubscribe", {"conversationId": fid})
            assert snapshot["sessions"][0]["pinned"] == [written[PINNED]["itemId"]], listed
            # The fork read the whole history; a while later, still subscribed, the daemon
            # holds the context again.
            await contexts_released(d, cid)

            # A rewind to an early message: the items before it, and its text for the composer.
            rewound = await client.request(
                "conversation/rewind",
                {"conversationId": cid, "messageId": written[200]["itemId"]},
            )
            assert rewound["composerText"] == text_of(200)
            rid = rewound["conversation"]["conversationId"]
            assert [i["text"] for i in await items_of(client, rid)] == [
                text_of(n) for n in range(200)
            ]

            # A compaction summarizes the context: the old summary and what follows it.
            fake.enqueue(Reply().text("THE NEW SUMMARY"))
            result = await client.request("conversation/compact", {"conversationId": cid})
            assert result["compacted"] is True
            await asyncio.wait_for(collect_until(client, method_is("compaction/completed")), 60)
            texts = sent_texts(fake)
            assert any(SUMMARY in t for t in texts)
            assert text_of(COVERED + 1) in texts  # the first item after the covered point
            assert text_of(COVERED) not in texts  # covered by the old summary, not pinned
            assert text_of(1_000) not in texts
        finally:
            await client.close()
