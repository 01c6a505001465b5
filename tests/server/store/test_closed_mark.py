"""The clean-stop mark vouches only for the very file a clean close left (docs/storage.md, "The
index's check at start"): a changed, copied or racily marked file, or one with frames still in
its `-wal`, gets its pages checked at the next start."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from openvaala_server.store import closed_mark
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.e2e.store.test_hardening_storage import _damage, _fill_store


def _closed_index(tmp_path: Path) -> Path:
    db = tmp_path / "metadata.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    closed_mark.write(db, closed_mark.file_id(db))
    return db


def test_an_untouched_file_is_vouched_for_until_it_is_opened(tmp_path: Path) -> None:
    db = _closed_index(tmp_path)
    assert closed_mark.unchanged(db)
    assert os.stat(closed_mark.mark_path(db)).st_mode & 0o777 == 0o600
    closed_mark.clear(db)
    assert not closed_mark.unchanged(db)


def test_a_write_after_the_close_is_seen_even_with_size_and_mtime_kept(tmp_path: Path) -> None:
    db = _closed_index(tmp_path)
    before = db.stat()
    with open(db, "r+b") as f:
        f.seek(before.st_size - 100)
        f.write(b"\xa5" * 50)
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not closed_mark.unchanged(db)


def test_a_copy_is_not_the_file_that_was_marked(tmp_path: Path) -> None:
    db = _closed_index(tmp_path)
    other = tmp_path / "copy"
    other.mkdir()
    shutil.copy2(db, other / db.name)
    shutil.copy2(closed_mark.mark_path(db), closed_mark.mark_path(other / db.name))
    assert not closed_mark.unchanged(other / db.name)


def test_a_mark_from_the_tick_of_the_last_write_is_not_trusted(tmp_path: Path) -> None:
    db = _closed_index(tmp_path)
    last = db.stat()
    # As if marked in the same clock tick: a write in that tick would not have moved the times.
    os.utime(closed_mark.mark_path(db), ns=(last.st_atime_ns, last.st_mtime_ns))
    assert not closed_mark.unchanged(db)


def test_frames_left_in_the_wal_are_not_vouched_for(tmp_path: Path) -> None:
    db = _closed_index(tmp_path)
    wal = db.with_name(db.name + "-wal")
    wal.write_bytes(b"frames")
    assert not closed_mark.unchanged(db)
    closed_mark.clear(db)
    closed_mark.write(db, closed_mark.file_id(db))
    assert not closed_mark.mark_path(db).exists()


async def test_a_mark_that_cannot_be_removed_does_not_keep_the_store_from_opening(
    tmp_path: Path,
) -> None:
    # A directory where the mark goes (a restored backup, a stray tool): the start checks the
    # index and serves it, instead of refusing with an error about metadata.db itself.
    data = DataDir(tmp_path / "home")
    ids = await _fill_store(data, 3)
    mark = closed_mark.mark_path(data.metadata_db)
    mark.unlink()
    mark.mkdir()

    store = await Store.open(data)
    try:
        listed, _ = await store.list_conversations(limit=10)
        assert {c["conversationId"] for c in listed} == ids
    finally:
        await store.close()
    assert mark.is_dir()  # left as found
    assert not closed_mark.unchanged(data.metadata_db)


def _journal_of_older_copy(db: Path) -> bytes:
    """The rollback journal a writer in another journal mode (a tool opening the index) left when
    it died mid-transaction, on the index as it is now: its pages are this version's. Played back
    into a later version, they mix two versions' pages."""
    copy = db.with_name("older.db")
    shutil.copy(db, copy)
    conn = sqlite3.connect(copy, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA cache_size = 1")  # changed pages spill to the file: a hot journal
        conn.execute("BEGIN")
        tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        for (table,) in tables:
            if not table.startswith(("search", "sqlite_")):
                conn.execute(f"DELETE FROM {table}")
        journal = copy.with_name(copy.name + "-journal").read_bytes()
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    return journal


async def test_a_leftover_rollback_journal_gets_the_index_checked(tmp_path: Path) -> None:
    # SQLite plays a `-journal` file back into metadata.db at the start's first read, after the
    # mark was compared: the mark vouches for the file only when nothing waits to be written to it.
    data = DataDir(tmp_path / "home")
    ids = await _fill_store(data, 30)
    db = data.metadata_db
    journal = _journal_of_older_copy(db)
    ids |= await _fill_store(data, 30)
    assert closed_mark.unchanged(db)
    db.with_name(db.name + "-journal").write_bytes(journal)
    assert not closed_mark.unchanged(db)

    store = await Store.open(data)
    try:
        listed, _ = await store.list_conversations(limit=100)
        assert {c["conversationId"] for c in listed} == ids
    finally:
        await store.close()
    check = sqlite3.connect(db)
    try:
        assert check.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    finally:
        check.close()


async def test_an_index_file_replaced_while_open_is_not_marked_at_the_close(
    tmp_path: Path,
) -> None:
    # A backup restored over the data directory while the daemon runs (its index file replaced,
    # the -wal and -shm files gone): the clean close is of the file the store had open, not of
    # the one now at the path, which the next start checks and rebuilds.
    data = DataDir(tmp_path / "home")
    await _fill_store(data, 300)
    db = data.metadata_db
    restored = tmp_path / "backup.db"
    shutil.copy(db, restored)  # closed cleanly, then damaged where the first rows do not reach
    _damage(restored, first_page=50, pages=20)

    store = await Store.open(data)
    os.replace(restored, db)
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink()
    await store.close()
    assert not closed_mark.unchanged(db)

    store = await Store.open(data)
    await store.close()
    check = sqlite3.connect(db)  # rebuilt, not left in service damaged
    try:
        assert check.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    finally:
        check.close()
