"""Reindex in bounded chunks (`reindex._Loader`: rows and texts handed to the loader thread a
few hundred conversations at a time, at most `_QUEUED` waiting) still indexes everything, and
equals the index the live store kept; journals are read whole by `journal.read_fd`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store import journal, reindex
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

from .helpers import created, rebuilt_dump

CONVERSATIONS = 60


def item(text: str) -> r.Item:
    return {"itemId": new_id(), "type": "user_message", "text": text, "status": "completed"}


async def test_many_conversations_in_tiny_chunks_are_all_indexed(
    data_dir: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(data_dir)
    cids = []
    try:
        for n in range(CONVERSATIONS):
            c = created(f"bounded {n}")
            await store.create_conversation(c)
            cid, sid = c["conversationId"], c["rootSessionId"]
            await store.append_items(cid, sid, [item(f"note{n} alpha"), item("beta")])
            turn = {"type": "turn_started", "turnId": new_id(), "sessionId": sid}
            await store.append_metadata(cid, [turn])
            cids.append(cid)
        live = await store.dump_index()
    finally:
        await store.close()
    # Chunks of 7 conversations, 5 texts or 64 bytes, 1 waiting: many hand-overs, each cut
    # by a different bound.
    monkeypatch.setattr(reindex, "_CHUNK_ROWS", 7)
    monkeypatch.setattr(reindex, "_CHUNK", 5)
    monkeypatch.setattr(reindex, "_CHUNK_BYTES", 64)
    monkeypatch.setattr(reindex, "_QUEUED", 1)
    assert await rebuilt_dump(data_dir, tmp_path) == live
    report = await reindex.reindex(data_dir)
    assert sorted(report.indexed) == sorted(cids)
    reopened = await Store.open(data_dir)
    try:
        listed, _ = await reopened.list_conversations(limit=CONVERSATIONS + 1)
        assert sorted(s["conversationId"] for s in listed) == sorted(cids)
        assert {s["messageCount"] for s in listed} == {2} and {s["turnCount"] for s in listed} == {
            1
        }
        for n in (0, 29, CONVERSATIONS - 1):
            found, _ = await reopened.list_conversations(search=f"note{n}")
            assert [s["conversationId"] for s in found] == [cids[n]]
    finally:
        await reopened.close()


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 70_000])
def test_read_fd_reads_the_whole_file(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    data = os.urandom(size)
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert journal.read_fd(fd) == data
    finally:
        os.close(fd)


def test_read_fd_reads_on_when_the_file_grew_after_its_size_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a" * 100)
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        result = real_fstat(fd)
        with open(path, "ab") as f:  # someone appends between the fstat and the read
            f.write(b"b" * 3000)
        return result

    fd = os.open(path, os.O_RDONLY)
    try:
        monkeypatch.setattr(os, "fstat", fstat)
        assert journal.read_fd(fd) == b"a" * 100 + b"b" * 3000
    finally:
        monkeypatch.undo()
        os.close(fd)


async def test_rows_split_over_statements_by_the_parameter_limit(
    data_dir: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversations, sessions and turns rows of a chunk go in multi-row statements of at
    most `_PARAMETERS` parameters: cut small (1 conversation row of 12 values, 2 session rows of
    7, 3 turn rows of 6 per statement), every row is still there, in a chunk of several."""
    store = await Store.open(data_dir)
    try:
        for n in range(9):
            c = created(f"rows {n} \x00" if n == 4 else f"rows {n}")  # a NUL: no special path
            await store.create_conversation(c)
            cid, sid = c["conversationId"], c["rootSessionId"]
            await store.append_items(cid, sid, [item(f"row{n}")])
            turns = [
                {"type": "turn_started", "turnId": new_id(), "sessionId": sid} for _ in range(n)
            ]
            await store.append_metadata(cid, turns)
        live = await store.dump_index()
    finally:
        await store.close()
    assert len(live["turns"]) == sum(range(9))
    monkeypatch.setattr(reindex, "_PARAMETERS", 20)
    assert await rebuilt_dump(data_dir, tmp_path) == live
