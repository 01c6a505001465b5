"""A conversation opened from disk is made ready for its first model call in the background, and
let go of memory when nobody uses it (docs/design.md, "Performance at scale";
runtime/warmup.py, runtime/residency.py).

In-process, with real parts: a `ConversationManager` on the real store (a temporary data
directory, the conversation written with the store's own writer) and the OpenAI-compatible
provider the registry makes (never called: its wire cache is what is looked at)."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

from openvaala_server.config import parse_config
from openvaala_server.domain import records as r
from openvaala_server.domain import usage
from openvaala_server.domain.ids import new_id
from openvaala_server.models.base import ModelRequest
from openvaala_server.models.http import WireCache
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.supervisor import owned

ITEMS = 2_000
CONFIG = """
[models.http]
provider = "openai"
model = "m"
base_url = "http://127.0.0.1:9/v1"
context_window = 10000000
max_output_tokens = 1000

[agents.default]
description = "test"
model = "http"
"""


class Watcher:
    def deliver(self, frame: str) -> None:
        pass


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[tuple[ConversationManager, str, list[str]]]:
    store = await Store.open(DataDir(tmp_path / "home"))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(tmp_path),
            "agent": "default",
            "model": "http",
            "title": "Two thousand items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    items: list[dict[str, Any]] = []
    for n in range(ITEMS):
        kind = r.USER_MESSAGE if n % 2 == 0 else r.AGENT_MESSAGE
        items.append(
            {
                "itemId": new_id(),
                "type": kind,
                "sessionId": sid,
                "turnId": f"{n // 2:032x}",
                "createdAt": r.utc_now(),
                "status": r.COMPLETED,
                "text": f"text {n}",
            }
        )
    await store.append_items(cid, sid, cast("list[r.Item]", items))
    runtime = ConversationManager(parse_config(tomllib.loads(CONFIG)), store)
    # The runtime's supervisor owns the history's loading and warm-up, as in the daemon.
    async with owned(runtime.tasks, partial(runtime.shutdown, timeout=10)):
        yield runtime, cid, [i["itemId"] for i in items]
    await store.close()


async def test_the_first_request_after_an_open_converts_nothing_and_a_release_lets_go(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    root = conv.root
    assert len(root.items) == 100 and not root.history_complete  # the first page only
    await conv.ensure_history()
    assert conv.warming is not None
    await asyncio.wait_for(conv.warming.wait(), 10)
    cache = getattr(runtime.provider("http"), "wire_cache", None)
    assert isinstance(cache, WireCache)
    # Every item was converted in the background, and estimated: the first request finds them.
    assert cache.conversions == ITEMS
    assert all(i["itemId"] in usage._ESTIMATES for i in root.items)
    request = ModelRequest(
        model=runtime.model_config("http"),
        instructions=conv.instructions_for(root),
        items=conv.model_context(root),
        tools=[],
    )
    body = runtime.provider("http").build_body(request)  # type: ignore[attr-defined]
    assert len(body["messages"]) == ITEMS + 1  # the system prompt, then every item
    assert cache.conversions == ITEMS  # nothing converted on the request's path

    # Watched, it keeps everything; once the last watcher leaves, it keeps the last page only,
    # and neither the wire cache nor the estimates hold the rest.
    watcher = Watcher()
    conv.hub.subscribe(watcher)
    conv.hub.unsubscribe(watcher)
    assert [i["itemId"] for i in root.items] == ids[-100:]
    assert not root.history_complete
    assert len(cache) == 0
    assert conv.residency.freeing is not None
    await asyncio.wait_for(conv.residency.freeing, 10)  # in a worker thread
    assert not any(i in usage._ESTIMATES for i in ids[:-100])

    # What needs it reads it back: the same history.
    await conv.ensure_history()
    assert [i["itemId"] for i in conv.root.items] == ids


async def test_the_newest_pages_are_read_without_waiting_for_the_whole_history(
    opened: tuple[ConversationManager, str, list[str]],
) -> None:
    runtime, cid, ids = opened
    conv = await runtime.open(cid)
    page = await runtime.read(cid, None, None, 20)
    assert [i["itemId"] for i in page["items"]] == ids[-20:] and page["hasMore"]
    page = await runtime.read(cid, None, ids[-20], 50)
    assert [i["itemId"] for i in page["items"]] == ids[-70:-20] and page["hasMore"]
    assert not conv.root.history_complete  # answered from the held page, the rest still loading
    # Past what is held, the journal answers the older part (tests/server/runtime/
    # test_paging_partial.py shows it does not wait for the rest).
    page = await runtime.read(cid, None, ids[-70], 100)
    assert [i["itemId"] for i in page["items"]] == ids[-170:-70] and page["hasMore"]
    await conv.ensure_history()
