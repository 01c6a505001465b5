"""Reading a page of a session file backwards from an item, without parsing what lies after it
(store/journal.py `lines_containing`, `line_at`; store/store.py `read_items`)."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any, cast

import pytest

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store import journal
from openvaala_server.store.paths import DataDir, NotFound
from openvaala_server.store.store import Store


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 20])
def test_lines_containing_finds_what_a_split_finds(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "_SEARCH_BLOCK", block)  # matches across block boundaries
    rng = random.Random(block)
    for _ in range(200):
        lines = [
            bytes(rng.choice(b"ab") for _ in range(rng.randrange(0, 9)))
            for _ in range(rng.randrange(0, 12))
        ]
        data = b"".join(line + b"\n" for line in lines)
        needle = bytes(rng.choice(b"ab") for _ in range(rng.randrange(1, 3)))
        starts = [sum(len(x) + 1 for x in lines[:n]) for n in range(len(lines))]
        want = [(s, x) for s, x in zip(starts, lines, strict=True) if needle in x][::-1]
        f = io.BytesIO(data)
        assert list(journal.lines_containing(f, len(data), needle)) == want
        for start in range(len(data) + 1):  # a line only where one starts
            line = journal.line_at(f, start, len(data))
            assert line == (lines[starts.index(start)] if start in starts else None)


def item(sid: str, n: int) -> dict[str, Any]:
    return {
        "itemId": new_id(),
        "type": r.USER_MESSAGE,
        "sessionId": sid,
        "turnId": None,
        "createdAt": r.utc_now(),
        "status": r.COMPLETED,
        "text": f"message {n}",
    }


async def test_pages_back_are_right_whatever_the_store_remembered(tmp_path: Path) -> None:
    store = await Store.open(DataDir(tmp_path / "home"))
    try:
        cid, sid = new_id(), new_id()
        await store.create_conversation(
            {
                "conversationId": cid,
                "cwd": str(tmp_path),
                "agent": "default",
                "model": "m",
                "title": "t",
                "titleSource": "user",
                "rootSessionId": sid,
                "forkedFrom": None,
                "formatVersion": r.FORMAT_VERSION,
            }
        )
        items = cast("list[r.Item]", [item(sid, n) for n in range(500)])
        for start in range(0, 500, 50):
            await store.append_items(cid, sid, items[start : start + 50])
        ids = [i["itemId"] for i in items]
        # Paged back as a client scrolls (the store remembers where each page began) ...
        got: list[r.Item] = []
        before: str | None = None
        while True:
            page, more = await store.read_items(cid, sid, before_item=before, limit=37)
            got[:0] = page
            if not more:
                break
            before = page[0]["itemId"]
        assert got == items
        # ... and again after every remembered place went wrong (a file changed behind it).
        marks = store._marks  # what is remembered, spoiled on purpose
        assert marks
        for n, key in enumerate(marks):
            marks[key] = [0, 1, 10**9, marks[key] + 1][n % 4]
        for n in (0, 1, 36, 37, 38, 250, 499):
            page, more = await store.read_items(cid, sid, before_item=ids[n], limit=37)
            assert page == items[max(0, n - 37) : n] and more == (n > 37)
        with pytest.raises(NotFound):
            await store.read_items(cid, sid, before_item="f" * 32, limit=5)
    finally:
        await store.close()
