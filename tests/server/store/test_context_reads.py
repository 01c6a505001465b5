"""A session's model context read from the end of its file (store/tail.py, `Store.read_context`):
the same items as the whole read from where the context begins, how many lie before them, and a
page back from there that joins them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, cast

from openvaala_server.domain import records as r
from openvaala_server.domain.context import context_items
from openvaala_server.domain.context_tail import context_start
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import created
from tests.server.store.test_page_reads import item


async def test_the_context_read_from_the_end_is_the_whole_reads_tail(tmp_path: Path) -> None:
    store = await Store.open(DataDir(tmp_path / "home"))
    try:
        payload = created()
        cid, sid = payload["conversationId"], payload["rootSessionId"]
        await store.create_conversation(payload)
        rng = random.Random(40)
        written: list[dict[str, Any]] = []
        for batch in range(12):
            items = [item(sid, batch * 100 + n) for n in range(100)]
            if batch % 4 == 3:  # a compaction now and then, covering an item some way back
                covers = written[-rng.randrange(1, 150)]["itemId"]
                items.append({**item(sid, -1), "type": r.SUMMARY, "coversUpTo": covers})
            await store.append_items(cid, sid, cast("list[r.Item]", items))
            written += items
            whole = await store.read_all_items(cid, sid)
            ids = [i["itemId"] for i in whole]
            for pinned in ([], [rng.choice(ids)], [rng.choice(ids), "not-here"]):
                for at_least in (0, 100, 450):
                    tail = await store.read_context(cid, sid, pinned, at_least)
                    start = min(context_start(whole, pinned), max(0, len(whole) - at_least))
                    assert tail.items == whole[start:], (batch, pinned, at_least)
                    assert tail.older == start
                    assert context_items(tail.items, pinned) == context_items(whole, pinned)
                    if start:  # the page just before it, read back from where it began
                        page, more = await store.read_items(
                            cid, sid, before_item=tail.items[0]["itemId"], limit=60
                        )
                        assert page == whole[max(0, start - 60) : start]
                        assert more == (start > 60)
        tail = await store.read_context(cid, new_id(), [], 100)  # a session with no file yet
        assert tail.items == [] and tail.older == 0
    finally:
        await store.close()
