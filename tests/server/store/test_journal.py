"""The JSONL journal: what survives crashes, bad lines and failing disks."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from openvaala_server.domain.records import Record
from openvaala_server.store import durability, journal
from openvaala_server.store.journal import JournalProblem, JournalWriteError, JournalWriter


@pytest.fixture
async def writer() -> AsyncIterator[JournalWriter]:
    w = JournalWriter()
    await w.start()
    yield w
    await w.close()


def item(n: int, text: str = "") -> dict[str, object]:
    return {"type": "item", "item": {"itemId": f"{n:032x}", "type": "user_message", "text": text}}


async def test_appended_records_are_stamped_and_read_back(
    tmp_path: Path, writer: JournalWriter
) -> None:
    path = tmp_path / "s.jsonl"
    stamped = await writer.append(path, [item(1, "héllo"), item(2)])
    assert [rec["seq"] for rec in stamped] == [1, 2]
    assert all(rec["ts"].endswith("Z") for rec in stamped)
    read = journal.read_journal(path)
    assert read.records == stamped
    assert read.problems == [] and read.torn_tail is None
    # One record per line, seq first.
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and lines[0].startswith(b'{"seq":1,"ts":')


async def test_torn_tail_at_every_byte_offset(tmp_path: Path, writer: JournalWriter) -> None:
    """A crash can cut the last record anywhere: it is reported, then moved aside, never fused."""
    template = tmp_path / "template.jsonl"
    await writer.append(template, [item(1, "one"), item(2, "two"), item(3, "the last, cut")])
    data = template.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    good = data[:last_start]
    for cut in range(last_start + 1, len(data)):
        path = tmp_path / f"cut-{cut}.jsonl"
        path.write_bytes(data[:cut])
        read = journal.read_journal(path)
        assert [rec["seq"] for rec in read.records] == [1, 2], cut
        assert read.torn_tail == data[last_start:cut]
        assert read.problems == [JournalProblem(3, "torn_tail", read.problems[0].detail)]
        assert journal.read_tail(path, 5) == (read.records, False)

        [new] = await writer.append(path, [item(4, "after the crash")])
        assert new["seq"] == 3  # continues from the last good record
        after = journal.read_journal(path)
        assert after.problems == [] and after.torn_tail is None
        assert [rec["item"]["text"] for rec in after.records] == ["one", "two", "after the crash"]
        assert path.read_bytes().startswith(good)
        sidecar = path.with_name(path.name + ".torn-1")
        assert sidecar.read_bytes() == data[last_start:cut]  # nothing lost


async def test_unparsable_last_line_is_torn_too(tmp_path: Path, writer: JournalWriter) -> None:
    path = tmp_path / "s.jsonl"
    await writer.append(path, [item(1)])
    await writer.forget()
    with path.open("ab") as f:
        f.write(b"\x00\x00\x00\n")  # what delayed allocation can leave after a power cut
    read = journal.read_journal(path)
    assert read.torn_tail == b"\x00\x00\x00\n" and len(read.records) == 1
    [rec] = await writer.append(path, [item(2)])
    assert rec["seq"] == 2
    assert journal.read_journal(path).problems == []
    assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b"\x00\x00\x00\n"


async def test_second_torn_tail_gets_its_own_sidecar(tmp_path: Path, writer: JournalWriter) -> None:
    path = tmp_path / "s.jsonl"
    for n in (1, 2):
        await writer.append(path, [item(n)])
        await writer.forget()
        with path.open("ab") as f:
            f.write(f'{{"seq": 9, "torn {n}'.encode())
    await writer.append(path, [item(3)])
    assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b'{"seq": 9, "torn 1'
    assert (tmp_path / "s.jsonl.torn-2").read_bytes() == b'{"seq": 9, "torn 2'
    assert [rec["seq"] for rec in journal.read_journal(path).records] == [1, 2, 3]


async def test_bad_line_in_the_middle_is_reported_skipped_and_kept(
    tmp_path: Path, writer: JournalWriter
) -> None:
    path = tmp_path / "s.jsonl"
    await writer.append(path, [item(1), item(2)])
    await writer.forget()
    first, second = path.read_bytes().splitlines(keepends=True)
    corrupted = first + b"{this is not json\n" + b"[1, 2]\n" + second
    path.write_bytes(corrupted)

    read = journal.read_journal(path)
    assert [rec["seq"] for rec in read.records] == [1, 2]
    assert [(p.line_no, p.kind) for p in read.problems] == [(2, "bad_line"), (3, "bad_line")]
    assert read.torn_tail is None

    [rec] = await writer.append(path, [item(3)])
    assert rec["seq"] == 3
    assert path.read_bytes().startswith(corrupted)  # never rewritten
    assert [p.line_no for p in journal.read_journal(path).problems] == [2, 3]


async def test_empty_file(tmp_path: Path, writer: JournalWriter) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    read = journal.read_journal(path)
    assert read.records == [] and read.problems == [] and read.torn_tail is None
    assert journal.read_tail(path, 3) == ([], False)
    [rec] = await writer.append(path, [item(1)])
    assert rec["seq"] == 1


async def test_unknown_record_type_survives(tmp_path: Path, writer: JournalWriter) -> None:
    path = tmp_path / "metadata.jsonl"
    future = {"seq": 1, "ts": "2031-01-01T00:00:00.000000Z", "type": "hologram_added", "x": [1]}
    path.write_bytes(orjson.dumps(future) + b"\n")
    read = journal.read_journal(path)
    assert read.records == [future]
    assert [(p.line_no, p.kind, p.detail) for p in read.problems] == [
        (1, "unknown_type", "hologram_added")
    ]
    await writer.append(path, [{"type": "conversation_archived"}])
    after = journal.read_journal(path)
    assert after.records[0] == future
    assert [rec["seq"] for rec in after.records] == [1, 2]


async def test_seq_continues_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for expected in ([1, 2], [3], [4, 5, 6]):
        w = JournalWriter()
        await w.start()
        stamped = await w.append(path, [item(n) for n in expected])
        await w.close()
        assert [rec["seq"] for rec in stamped] == expected


async def test_concurrent_appends_to_many_files_are_durable_and_in_order(
    tmp_path: Path, writer: JournalWriter
) -> None:
    files = [tmp_path / f"{n}.jsonl" for n in range(20)]

    async def producer(path: Path) -> None:
        for n in range(30):
            [rec] = await writer.append(path, [item(n)])
            assert rec["seq"] == n + 1

    await asyncio.gather(*(producer(path) for path in files))
    for path in files:
        read = journal.read_journal(path)
        assert [rec["item"]["itemId"] for rec in read.records] == [f"{n:032x}" for n in range(30)]
        assert [rec["seq"] for rec in read.records] == list(range(1, 31))


async def test_concurrent_appends_to_one_file_share_fsyncs(
    tmp_path: Path, writer: JournalWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    syncs = 0
    real_fdatasync = os.fdatasync

    def counting_fdatasync(fd: int) -> None:
        nonlocal syncs
        syncs += 1
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", counting_fdatasync)
    path = tmp_path / "shared.jsonl"

    async def producer(p: int) -> None:
        for n in range(20):
            await writer.append(path, [item(p * 1000 + n)])

    await asyncio.gather(*(producer(p) for p in range(16)))
    read = journal.read_journal(path)
    assert [rec["seq"] for rec in read.records] == list(range(1, 321))
    for p in range(16):  # each producer's records in its own order
        mine = [
            rec["item"]["itemId"]
            for rec in read.records
            if int(rec["item"]["itemId"], 16) // 1000 == p
        ]
        assert mine == [f"{p * 1000 + n:032x}" for n in range(20)]
    # Sixteen writers waiting at once share one fsync per batch instead of one each.
    assert syncs < 320 / 2


async def _three_files_at_once(
    tmp_path: Path, texts: tuple[str, str, str] = ("a", "b", "c")
) -> tuple[list[Path], list[list[Record] | BaseException]]:
    writer = JournalWriter()
    await writer.start()
    try:
        paths = [tmp_path / f"{name}.jsonl" for name in ("a", "b", "c")]
        for path in paths:
            await writer.append(path, [item(0, "before")])
        appends = [writer.append(p, [item(1, t)]) for p, t in zip(paths, texts, strict=True)]
        results = await asyncio.gather(*appends, return_exceptions=True)
        return paths, results
    finally:
        await writer.close()


@pytest.fixture
def syncfs_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where syncfs is used: Linux ≥ 5.17, ext4, little dirty data (the file system
    type and /proc/meminfo are what the OS would say on one)."""
    if durability.syncfs is None:
        pytest.skip("syncfs needs Linux ≥ 5.17")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 100 kB\nDirty: 12 kB\nWriteback: 0 kB\n")
    monkeypatch.setattr(durability, "MEMINFO", meminfo)
    monkeypatch.setattr(durability, "fs_type", lambda fd: durability.EXT4_SUPER_MAGIC)


def _count_syncs(monkeypatch: pytest.MonkeyPatch, fail_fd_of: Path | None = None) -> list[str]:
    """Record syncfs and fdatasync calls (both still run); optionally fail the fdatasync of
    `fail_fd_of` once a syncfs has been tried."""
    real_syncfs, real_fdatasync = durability.syncfs, os.fdatasync
    assert real_syncfs is not None
    calls: list[str] = []

    def counting_syncfs(fd: int) -> None:
        calls.append("syncfs")
        real_syncfs(fd)

    def counting_fdatasync(fd: int) -> None:
        calls.append("fdatasync")
        armed = fail_fd_of is not None and "syncfs" in calls
        if fail_fd_of is not None and armed and os.path.samestat(os.fstat(fd), os.stat(fail_fd_of)):
            raise OSError(errno.EIO, "Input/output error")
        real_fdatasync(fd)

    monkeypatch.setattr(durability, "syncfs", counting_syncfs)
    monkeypatch.setattr(os, "fdatasync", counting_fdatasync)
    return calls


def _texts(path: Path) -> list[str]:
    return [rec["item"]["text"] for rec in journal.read_journal(path).records]


async def test_a_batch_over_several_files_is_made_durable_by_one_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs_fits: None
) -> None:
    calls = _count_syncs(monkeypatch)
    paths, results = await _three_files_at_once(tmp_path)
    assert all(isinstance(result, list) for result in results)
    # Three single-file appends (one fdatasync each), then the three files together: one syncfs.
    assert calls == ["fdatasync"] * 3 + ["syncfs"]
    for path, text in zip(paths, ("a", "b", "c"), strict=True):
        assert _texts(path) == ["before", text]


async def test_with_much_dirty_data_each_file_is_synced_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs_fits: None
) -> None:
    # syncfs would wait for someone else's big copy: the batch syncs only its own files.
    durability.MEMINFO.write_text("Dirty: 900000 kB\nWriteback: 4000 kB\n")
    calls = _count_syncs(monkeypatch)
    _paths, results = await _three_files_at_once(tmp_path)
    assert all(isinstance(result, list) for result in results)
    assert calls == ["fdatasync"] * 6


async def test_on_a_file_system_syncfs_does_not_reach_each_file_is_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs_fits: None
) -> None:
    fuse_super_magic = 0x65735546  # FUSE returns from syncfs without syncing the data
    monkeypatch.setattr(durability, "fs_type", lambda fd: fuse_super_magic)
    calls = _count_syncs(monkeypatch)
    _paths, results = await _three_files_at_once(tmp_path)
    assert all(isinstance(result, list) for result in results)
    assert "syncfs" not in calls


async def test_a_syncfs_error_is_pinned_on_the_files_that_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs_fits: None
) -> None:
    # syncfs says something failed on the file system, not what: each file is then synced on
    # its own, and only the one whose data did not reach the disk fails (and is cut back).
    calls = _count_syncs(monkeypatch, fail_fd_of=tmp_path / "b.jsonl")

    def failing_syncfs(fd: int) -> None:
        calls.append("syncfs")
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(durability, "syncfs", failing_syncfs)
    paths, results = await _three_files_at_once(tmp_path)
    assert calls == ["fdatasync"] * 3 + ["syncfs"] + ["fdatasync"] * 3
    assert isinstance(results[0], list) and isinstance(results[2], list)
    assert isinstance(results[1], JournalWriteError) and "Input/output" in str(results[1])
    assert [_texts(path) for path in paths] == [["before", "a"], ["before"], ["before", "c"]]
    assert journal.read_journal(paths[1]).problems == []


async def test_write_failure_fails_only_that_append(
    tmp_path: Path, writer: JournalWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    full, fine = tmp_path / "full.jsonl", tmp_path / "fine.jsonl"
    await writer.append(full, [item(1, "before")])
    size_before = full.stat().st_size
    real_write = os.write

    def enospc_after_half(fd: int, data: bytes | memoryview) -> int:
        if b"FAIL" in bytes(data):
            real_write(fd, bytes(data)[: len(data) // 2])  # a partial line reaches the file
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", enospc_after_half)
    results = await asyncio.gather(
        writer.append(full, [item(2, "FAIL")]),
        writer.append(fine, [item(1, "ok")]),
        return_exceptions=True,
    )
    assert isinstance(results[0], JournalWriteError)
    assert "No space left" in str(results[0])
    assert isinstance(results[1], list) and results[1][0]["seq"] == 1
    assert full.stat().st_size == size_before  # the partial line was cut off
    assert journal.read_journal(full).problems == []

    monkeypatch.setattr(os, "write", real_write)
    [rec] = await writer.append(full, [item(3, "after")])
    assert rec["seq"] == 2
    texts = [r["item"]["text"] for r in journal.read_journal(full).records]
    assert texts == ["before", "after"]


async def test_append_into_missing_directory_fails_cleanly(
    tmp_path: Path, writer: JournalWriter
) -> None:
    with pytest.raises(JournalWriteError):
        await writer.append(tmp_path / "gone" / "s.jsonl", [item(1)])
    [rec] = await writer.append(tmp_path / "s.jsonl", [item(1)])
    assert rec["seq"] == 1


async def test_unserialisable_payload_fails_only_its_caller(
    tmp_path: Path, writer: JournalWriter
) -> None:
    path = tmp_path / "s.jsonl"
    results = await asyncio.gather(
        writer.append(path, [{"type": "item", "item": object()}]),
        writer.append(path, [item(1)]),
        return_exceptions=True,
    )
    assert isinstance(results[0], TypeError)
    assert isinstance(results[1], list) and results[1][0]["seq"] == 1


async def test_read_tail_reads_the_end_of_a_big_file(tmp_path: Path, writer: JournalWriter) -> None:
    path = tmp_path / "big.jsonl"
    for start in range(0, 3000, 500):
        await writer.append(path, [item(n, "x" * 100) for n in range(start, start + 500)])
    await writer.forget()
    with path.open("ab") as f:
        f.write(b'{"seq": 3001, "ts": "torn')
    records, more = journal.read_tail(path, 4)
    assert [rec["seq"] for rec in records] == [2997, 2998, 2999, 3000]
    assert more is True
    records, more = journal.read_tail(path, 3000)
    assert len(records) == 3000 and more is False
