"""The first metadata append after a cold open folds the conversation from `metadata.folded`
when that still describes the journal, as an open does, and from the whole journal when it is
stale, damaged or missing: either way the store's metadata and its index are what a fold of the
whole journal gives (docs/storage.md, "The folded metadata"; store/store.py `_apply`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openvaala_server.domain import records as r
from openvaala_server.store import folded
from openvaala_server.store import reindex as reindex_module
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import rebuilt_dump
from tests.server.store.test_folded import full_fold, long_conversation, matches_journal, turns


def _spoil(data_dir: DataDir, cid: str, state: str) -> None:
    metadata = data_dir.metadata_file(cid)
    snapshot = folded.folded_path(metadata)
    if state == "stale":  # the journal rewritten, same length, other bytes
        journal = metadata.read_bytes()
        metadata.write_bytes(journal.replace(b'"title":"first"', b'"title":"other"', 1))
    elif state == "damaged":  # a byte of its body changed
        data = bytearray(snapshot.read_bytes())
        data[-10] ^= 0x01
        snapshot.write_bytes(bytes(data))
    elif state == "missing":
        snapshot.unlink()


@pytest.mark.parametrize("state", ["matching", "stale", "damaged", "missing"])
async def test_the_first_append_after_a_cold_open_gives_the_whole_folds_metadata(
    data_dir: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    store = await Store.open(data_dir)
    cid, root = await long_conversation(store)
    await store.load_meta(cid)  # writes metadata.folded
    await store.close()

    folds: list[int] = []  # the folds of a whole journal, by how many records they replayed
    whole = reindex_module.fold_meta

    def counted(path: Path, read: Any) -> Any:
        folds.append(len(read.records))
        return whole(path, read)

    monkeypatch.setattr(reindex_module, "fold_meta", counted)
    monkeypatch.setattr(folded, "fold_meta", counted)

    store = await Store.open(data_dir)  # cold: nothing of the conversation cached
    try:
        meta = await store.load_meta(cid)  # the open, from the snapshot
        assert meta is not None and folds == []
        running = [t.turn_id for t in meta.running_turns()]
        _spoil(data_dir, cid, state)  # between the open and its first append
        ended = {"type": r.TURN_ENDED, "sessionId": root, "turnId": running[0], "status": "failed"}
        renamed = {"type": r.CONVERSATION_RENAMED, "title": "renamed", "titleSource": "user"}
        await store.append_metadata(cid, [ended, renamed])
        # A matching snapshot: nothing before it is replayed. Otherwise the whole journal is,
        # and the snapshot is written again for it.
        assert (folds == []) == (state == "matching"), folds
        assert matches_journal(store, cid) == (state != "matching")
        cached, _ = store._metas[cid]
        assert cached == full_fold(store, cid)
        assert cached.title == "renamed" and not cached.running_turns()
        # The next append follows on from it.
        await store.append_metadata(cid, turns(root, 2))
        cached, _ = store._metas[cid]
        assert cached == full_fold(store, cid) == await store.load_meta(cid)
        assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)
        summary = await store.get_summary(cid)
        assert summary is not None and summary["title"] == "renamed"
    finally:
        await store.close()
