"""Item records a reader cannot use — an `item` that is not an object, or has no string `itemId` or
`type` (a hand-edited file, or a bundle: import checks each line's shape, not every field) — are
skipped by every read of a session, like a line damaged on disk: the conversation opens, pages back
and runs its next turn instead of failing on the first such record."""

from __future__ import annotations

from typing import Any

import orjson

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn, snapshot_of

DAMAGED: list[dict[str, Any]] = [
    {"type": "item", "item": {}},
    {"type": "item", "item": ["not", "an", "object"]},
    {"type": "item", "item": {"itemId": 7, "type": "agent_message", "text": "int id"}},
    {"type": "item", "item": {"itemId": "x1", "text": "no type"}},
    {"type": "item"},
]


async def test_unusable_item_records_are_skipped_by_every_read(daemon: Daemon) -> None:
    client = await daemon.client(reconnect=False)
    cid = await new_conversation(client, str(daemon.workdir))
    for n in range(3):
        await run_turn(client, cid, f"message {n}")
    snapshot = await snapshot_of(client, cid)
    [root] = snapshot["sessions"]
    sid, before = root["sessionId"], root["items"]
    await client.close()
    daemon.stop()

    path = daemon.data_dir.session_file(cid, sid)
    lines = path.read_bytes().splitlines(keepends=True)
    seq = orjson.loads(lines[-1])["seq"]
    damaged = [
        orjson.dumps({"seq": seq + 1 + n, "ts": "2026-12-03T00:00:00Z", **record}) + b"\n"
        for n, record in enumerate(DAMAGED)
    ]
    # Some in the middle of the history, some at its end (the page an open shows).
    path.write_bytes(b"".join(lines[:4] + damaged[:2] + lines[4:] + damaged[2:]))

    daemon.start()
    client = await daemon.client(reconnect=False)
    try:
        ids = [i["itemId"] for i in before]
        snapshot = await snapshot_of(client, cid)
        assert [i["itemId"] for i in snapshot["sessions"][0]["items"]] == ids
        # Paging back item by item from the newest: every good item once, in order.
        paged: list[str] = []
        cursor: str | None = None
        while True:
            params: dict[str, object] = {"conversationId": cid, "sessionId": sid, "limit": 1}
            if cursor is not None:
                params["beforeItem"] = cursor
            page = await client.request("conversation/read", params)
            paged = [i["itemId"] for i in page["items"]] + paged
            if not page["hasMore"]:
                break
            cursor = page["items"][0]["itemId"]
        assert paged == ids
        # The whole history is loaded for the next model call: the turn runs.
        notes = await run_turn(client, cid, "and again")
        assert any(n["method"] == "turn/ended" for n in notes)
        read = await client.request("conversation/read", {"conversationId": cid, "sessionId": sid})
        assert [i["itemId"] for i in read["items"]][: len(ids)] == ids
        assert len(read["items"]) > len(ids)
    finally:
        await client.close()


async def test_an_import_cut_by_a_crash_leaves_nothing_behind(daemon: Daemon) -> None:
    """The staging directory of an import the daemon did not finish (killed mid-copy) is removed
    when the daemon starts again; anything else in the data directory is left alone."""
    daemon.stop()
    root = daemon.data_dir.root
    staging = root / "import-0123456789abcdef0123456789abcdef"
    (staging / "conversations" / "x").mkdir(parents=True)
    (staging / "conversations" / "x" / "metadata.jsonl").write_bytes(b"{}\n" * 1000)
    other = root / "import-notes"
    other.mkdir()
    daemon.start()
    assert not staging.exists()
    assert other.exists()
    assert "left by an import that did not finish" in daemon.log()
