"""The folded metadata beside metadata.jsonl (docs/storage.md, "The folded metadata"): an open
gives what a fold of the whole journal gives, whatever state the snapshot is in."""

from __future__ import annotations

import zlib
from typing import Any

import orjson

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.folded import REFOLD_RECORDS, folded_path
from openvaala_server.store.reindex import read_meta
from openvaala_server.store.store import Store
from tests.server.store.helpers import created


def turns(sid: str, count: int, last_running: bool = False) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for n in range(count):
        tid = new_id()
        records.append({"type": r.TURN_STARTED, "sessionId": sid, "turnId": tid})
        if not (last_running and n == count - 1):
            status = "failed" if n % 7 == 0 else "completed"
            records.append(
                {"type": r.TURN_ENDED, "sessionId": sid, "turnId": tid, "status": status}
            )
    return records


async def long_conversation(store: Store) -> tuple[str, str]:
    """A conversation whose metadata.jsonl holds more records than an open folds cheaply."""
    payload = created()
    cid, root = payload["conversationId"], payload["rootSessionId"]
    await store.create_conversation(payload)
    child = new_id()
    records: list[dict[str, Any]] = [
        {
            "type": r.SESSION_CREATED,
            "sessionId": child,
            "parentSessionId": root,
            "agent": "explore",
            "model": "gpt",
            "title": "look around",
        },
        {
            "type": r.APPROVAL_GRANTED,
            "sessionId": root,
            "tool": "shell",
            "kind": "command",
            "pattern": "make test",
            "outsideSandbox": False,
        },
        {"type": r.ITEM_PINNED, "sessionId": root, "itemId": new_id()},
        *turns(child, 3),
        *turns(root, REFOLD_RECORDS // 2 + 10, last_running=True),
    ]
    await store.append_metadata(cid, records)
    return cid, root


def header(store: Store, cid: str) -> dict[str, Any]:
    data = folded_path(store.data_dir.metadata_file(cid)).read_bytes()
    parsed: dict[str, Any] = orjson.loads(data[: data.index(b"\n")])
    return parsed


def full_fold(store: Store, cid: str) -> Any:
    meta, _ = read_meta(store.data_dir.metadata_file(cid))
    return meta


def matches_journal(store: Store, cid: str) -> bool:
    """The snapshot describes the journal as it is now, to its last byte."""
    journal = store.data_dir.metadata_file(cid).read_bytes()
    found = header(store, cid)
    return bool(found["length"] == len(journal) and found["crc"] == zlib.crc32(journal))


async def test_an_open_of_a_long_history_keeps_a_snapshot_equal_to_the_full_fold(
    store: Store,
) -> None:
    cid, _ = await long_conversation(store)
    first = await store.load_meta(cid)
    assert matches_journal(store, cid)
    snapshot = folded_path(store.data_dir.metadata_file(cid))
    assert snapshot.stat().st_mode & 0o777 == 0o600  # private, like the journal it caches
    again = await store.load_meta(cid)  # now from the snapshot
    assert first == again == full_fold(store, cid)
    assert again is not None
    assert [t.turn_id for t in again.running_turns()] == [next(reversed(again.turns))]
    assert again.grants and again.pins and len(again.sessions) == 2


async def test_records_appended_after_the_snapshot_are_folded_on_top(store: Store) -> None:
    cid, root = await long_conversation(store)
    await store.load_meta(cid)
    await store.append_metadata(
        cid, [{"type": r.CONVERSATION_RENAMED, "title": "renamed later", "titleSource": "user"}]
    )
    await store.append_metadata(cid, turns(root, 2))
    meta = await store.load_meta(cid)
    assert meta is not None
    assert meta.title == "renamed later"
    assert meta == full_fold(store, cid)
    # A few records on top are folded at each open; the snapshot is rewritten only for many.
    assert header(store, cid)["length"] < store.data_dir.metadata_file(cid).stat().st_size


async def test_a_stale_snapshot_is_passed_over_and_rebuilt(store: Store) -> None:
    """The journal rewritten (same length, other bytes): the snapshot no longer describes it."""
    cid, _ = await long_conversation(store)
    await store.load_meta(cid)
    path = store.data_dir.metadata_file(cid)
    journal = path.read_bytes()
    path.write_bytes(journal.replace(b'"title":"first"', b'"title":"other"', 1))
    meta = await store.load_meta(cid)
    assert meta is not None
    assert meta.title == "other"
    assert meta == full_fold(store, cid)
    assert matches_journal(store, cid)


async def test_a_damaged_snapshot_is_ignored_and_rebuilt(store: Store) -> None:
    cid, _ = await long_conversation(store)
    expected = await store.load_meta(cid)
    snapshot = folded_path(store.data_dir.metadata_file(cid))
    data = bytearray(snapshot.read_bytes())
    for damage in (bytes(data[: len(data) // 2]), bytes(data).replace(b"completed", b"c0mpleted")):
        snapshot.write_bytes(damage)
        assert await store.load_meta(cid) == expected == full_fold(store, cid)
        assert matches_journal(store, cid)
        assert snapshot.read_bytes() == bytes(data)
