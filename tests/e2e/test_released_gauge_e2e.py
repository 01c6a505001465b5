"""The context gauge of a conversation let go to its last page (nobody watched it, docs/design.md
"Subscribed sessions hold their context"): when a client comes back, the snapshot's early
compaction start and `refresh_every` count are still those of the whole context, not of the last
100 items, where the latest summary no longer is. (The compaction decision itself runs only
with the context in memory: a turn reads it back first.) A real daemon, the model faked at the
wire."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.e2e.test_context_steering_e2e import _setup
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import run_turn, snapshot_of
from tests.support.waits import WAIT_S

RELEASED = "history released from memory"
TURNS = 60  # 120 items after the summary: more than the last page (100)


def _to_last_pages(line: str, cid: str) -> bool:
    # While a client watched, a release keeps the contexts (logged ": the contexts").
    return cid in line and RELEASED in line and "the contexts" not in line


async def _released(d: Daemon, cid: str) -> None:
    """Wait until the daemon says (in its log only) that it kept only the last pages."""
    deadline = time.monotonic() + WAIT_S
    while not any(_to_last_pages(line, cid) for line in d.log_path.read_text().splitlines()):
        assert time.monotonic() < deadline, "the history was never released"
        await asyncio.sleep(0.05)


async def test_the_gauge_of_a_released_conversation_counts_the_whole_context(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    # Usable window 1900: early compaction from 950 tokens, the threshold at 1600.
    d, client, cid = await _setup(
        daemon_factory,
        fake_openai,
        agent="early_compaction = 0.5\nrefresh_every = 100\n",
        window=2000,
    )
    fake_openai.enqueue(Reply().text("first").usage(300, 10), Reply().text("SUMMARY").usage(50, 5))
    await run_turn(client, cid, "hello " * 50)
    await client.request("conversation/compact", {"conversationId": cid})
    for k in range(TURNS):
        fake_openai.enqueue(Reply().text(f"ok{k}").usage(600 + 5 * k, 3))
        await run_turn(client, cid, f"m{k}")
    held = await client.request("conversation/usage", {"conversationId": cid})
    assert held["earlyCompaction"]["threshold"] > 950  # moved up by what the summary left
    assert held["repliesUntilRefresh"] == 100 - TURNS
    await client.close()
    await _released(d, cid)

    client = await d.client()
    try:
        snapshot = await snapshot_of(client, cid)
        root = next(s for s in snapshot["sessions"] if s["parentSessionId"] is None)
        assert len(root["items"]) == 100  # the last page: the summary is further back
        assert root["usage"]["used"] == held["used"]
        assert root["usage"]["earlyCompaction"] == held["earlyCompaction"]
        assert root["usage"]["repliesUntilRefresh"] == held["repliesUntilRefresh"]
    finally:
        await client.close()
