"""A page of a partly loaded history (just opened, or let go) is read from the held tail and the
session's journal, without waiting for the whole history, and is exactly the page the whole
history answers (docs/design.md "Performance at scale"; runtime/residency.py `split_page`,
store/store.py `_page`).

In-process, with real parts: a `ConversationManager` on the real store, the session file written
with the store's own writer plus the records a file can hold besides plain items (records of a
type this version does not know, lines that are not records, an item carrying another item's id
in a nested object or quoted in its text). The background load
that an open starts is held at a gate, so the history stays partial for as long as the test
pages; items are appended meanwhile, as a turn does.
"""

from __future__ import annotations

import asyncio
import random
import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from openvaala_server import errors
from openvaala_server.config import parse_config
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.supervisor import owned

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


def message(sid: str, n: int, **extra: object) -> dict[str, Any]:
    return {
        "itemId": new_id(),
        "type": r.USER_MESSAGE if n % 2 == 0 else r.AGENT_MESSAGE,
        "sessionId": sid,
        "turnId": f"{n // 2:032x}",
        "createdAt": r.utc_now(),
        "status": r.COMPLETED,
        "text": f"text {n}",
        **extra,
    }


async def write_history(store: Store, cid: str, sid: str, path: Path) -> None:
    """1,500 items in batches, with every other kind of line a session file can hold between."""
    rng = random.Random(17)
    written: list[str] = []
    for batch in range(15):
        items = [message(sid, batch * 100 + n) for n in range(100)]
        if written:
            # A nested object carrying an earlier item's id, spelled as the item's own key is.
            items[rng.randrange(100)]["ref"] = {"itemId": rng.choice(written)}
            # ... and text quoting one (escaped in JSON: no byte match).
            items[rng.randrange(100)]["text"] = f'see "itemId":"{rng.choice(written)}"'
        await store.append_items(cid, sid, cast("list[r.Item]", items))
        written += [i["itemId"] for i in items]
        with path.open("ab") as f:  # what the writer never writes, but a reader must survive
            f.write(b"not a record\n")
            f.write(orjson.dumps({"seq": 10**6 + batch, "type": "from_the_future"}) + b"\n")


Whole = Callable[[str, str], Awaitable[list[r.Item]]]


@pytest.fixture
async def gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[ConversationManager, LiveConversation, asyncio.Event, Whole]]:
    store = await Store.open(DataDir(tmp_path / "home"))
    cid, sid = new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(tmp_path),
            "agent": "default",
            "model": "http",
            "title": "Paged while partial",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    await write_history(store, cid, sid, store.data_dir.session_file(cid, sid))
    # The whole history is read only once the test opens the gate.
    gate = asyncio.Event()
    whole = store.read_all_items

    async def read_all_items(cid: str, sid: str) -> list[r.Item]:
        await gate.wait()
        return await whole(cid, sid)

    context = store.read_context

    async def read_context(cid: str, sid: str, pinned: Any, at_least: int) -> Any:
        await gate.wait()  # the open's load: with no summary here, the whole history too
        return await context(cid, sid, pinned, at_least)

    monkeypatch.setattr(store, "read_all_items", read_all_items)
    monkeypatch.setattr(store, "read_context", read_context)
    runtime = ConversationManager(parse_config(tomllib.loads(CONFIG)), store)
    async with owned(runtime.tasks, partial(runtime.shutdown, timeout=10)):
        conv = await runtime.open(cid)
        try:
            yield runtime, conv, gate, whole
        finally:
            gate.set()
            await conv.ensure_history()
    await store.close()


def expected(history: list[r.Item], before: str | None, limit: int) -> dict[str, Any]:
    """What the whole history answers (runtime/manager.py `_page_of`, by a plain scan)."""
    end = len(history)
    if before is not None:
        end = next(n for n, item in enumerate(history) if item["itemId"] == before)
    start = max(0, end - limit)
    return {"items": history[start:end], "hasMore": start > 0}


async def test_partial_pages_are_the_whole_historys_pages_and_need_no_whole_read(
    gated: tuple[ConversationManager, LiveConversation, asyncio.Event, Whole],
) -> None:
    runtime, conv, gate, whole = gated
    cid, root = conv.conversation_id, conv.root
    rng = random.Random(4)

    async def history() -> list[r.Item]:
        return await whole(cid, root.session_id)  # the store's own whole read, not gated

    async def check(before: str | None, limit: int) -> dict[str, Any]:
        page = await asyncio.wait_for(runtime.read(cid, None, before, limit), 30)
        assert page == expected(await history(), before, limit), (before, limit)
        return cast("dict[str, Any]", page)

    assert not root.history_complete
    for step in range(120):
        ids = [i["itemId"] for i in await history()]
        choice = rng.random()
        if choice < 0.15:
            before = None
        elif choice < 0.35:  # near the held tail's edge, on both sides of it
            before = ids[len(ids) - rng.randrange(60, 140)]
        else:
            before = rng.choice(ids)
        await check(before, rng.choice([1, 2, 7, 20, 99, 100, 101, 250, 1000]))
        if step % 10 == 0:  # a turn appends while someone pages
            new = [
                new_item(r.AGENT_MESSAGE, root.session_id, None, status=r.COMPLETED, text="more")
                for _ in range(rng.randrange(1, 30))
            ]
            await conv.persist_items(root, new)

    # Paging back the whole way, as a client scrolls: every item once, in order.
    pages: list[r.Item] = []
    before = None
    while True:
        page = await check(before, 333)
        pages[:0] = page["items"]
        if not page["hasMore"]:
            break
        before = page["items"][0]["itemId"]
    assert pages == await history()
    assert not root.history_complete  # none of it waited for the whole history

    # An item the session does not have: the whole history decides (not found).
    missing = asyncio.ensure_future(runtime.read(cid, None, "f" * 32, 10))
    await asyncio.sleep(0)
    gate.set()
    with pytest.raises(errors.NotFound):
        await asyncio.wait_for(missing, 30)
    assert root.history_complete
    # Whole, the same answers.
    for _ in range(30):
        ids = [i["itemId"] for i in root.items]
        await check(rng.choice([None, *ids]), rng.choice([1, 20, 100, 500]))
