"""A journal read in parts (what reindex does with a long session, so its memory does not grow
with the history) gives what one read of the whole file gives: the same records, the same
problems at the same line numbers, the torn tail moved aside."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from openvaala_server.store import journal


def write_journal(path: Path) -> None:
    lines = [
        orjson.dumps({"seq": n, "ts": "2026-01-01T00:00:00.000000Z", "type": "item", "item": n})
        for n in range(1, 400)
    ]
    lines[150] = b"{not json"  # a bad line, wherever the parts are cut
    lines[151] = orjson.dumps({"seq": 152, "ts": "x", "type": "from_the_future"})
    path.write_bytes(b"\n".join(lines) + b'\n{"seq": 400, "ts": "torn')


def test_parts_equal_one_read_and_the_torn_tail_is_moved(tmp_path: Path) -> None:
    whole_path, parts_path = tmp_path / "whole.jsonl", tmp_path / "parts.jsonl"
    write_journal(whole_path)
    shutil.copy(whole_path, parts_path)
    whole, whole_sidecar = journal.read_repaired(whole_path)
    for part_bytes in (64, 1000, 1 << 20):
        parts, sidecar = journal.read_repaired_parts(parts_path, part_bytes)
        reads = list(parts)
        if part_bytes == 64:
            assert sidecar is not None and whole_sidecar is not None
            assert sidecar.read_bytes() == whole_sidecar.read_bytes()
            assert len(reads) > 100
        else:
            assert sidecar is None  # moved by the first read already
        assert [r for read in reads for r in read.records] == whole.records
        assert [p for read in reads for p in read.problems] == [
            p for p in whole.problems if p.kind != journal.TORN_TAIL
        ]
        assert sum(read.good_length for read in reads) == whole.good_length
    assert parts_path.read_bytes() == whole_path.read_bytes()
