"""Real processes killed with SIGKILL: acknowledged appends survive, deletions get finished."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from openvaala_server.store import journal
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import rebuilt_dump

REPO = Path(__file__).resolve().parents[3]


def child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.server.store.crash_child", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_sigkill_during_appends_loses_nothing_acknowledged(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    data_dir = DataDir(tmp_path / "home")
    proc = child("append", str(data_dir.root), "4")
    assert proc.stdout is not None
    sessions: dict[str, str] = {}
    acked: dict[str, int] = defaultdict(lambda: -1)
    kill_after = rng.randint(1, 400)
    acks = 0
    for line in proc.stdout:
        kind, cid, value = line.split()
        if kind == "created":
            sessions[cid] = value
            continue
        acked[cid] = max(acked[cid], int(value))
        acks += 1
        if acks == kill_after:
            proc.send_signal(signal.SIGKILL)
            break
    for line in proc.stdout:  # printed before the kill: acknowledged too
        kind, cid, value = line.split()
        if kind == "ack":
            acked[cid] = max(acked[cid], int(value))
    proc.wait()
    proc.stdout.close()

    for cid, sid in sessions.items():
        read = journal.read_journal(data_dir.session_file(cid, sid))
        numbers = [int(rec["item"]["text"].split()[0][1:]) for rec in read.records]
        assert numbers == list(range(len(numbers)))  # in order, no gap, no duplicate
        assert len(numbers) > acked[cid]  # every acknowledged append is there
        assert [p.kind for p in read.problems] in ([], ["torn_tail"])  # at most the last line

    # The killed server's index may lag its journals: the next open rebuilds it.
    store = await Store.open(data_dir)
    try:
        for cid, sid in sessions.items():
            summary = await store.get_summary(cid)
            items = await store.read_all_items(cid, sid)
            assert summary is not None and summary["messageCount"] == len(items)
        assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)
    finally:
        await store.close()


@pytest.mark.parametrize("steps", [0, 1, 2, 3])
async def test_crash_between_delete_steps_is_finished_by_reindex(
    tmp_path: Path, steps: int
) -> None:
    data_dir = DataDir(tmp_path / "home")
    proc = child("delete", str(data_dir.root), str(steps))
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    cid = out.split()[1]
    assert out.split()[2] == "stopped"

    report = await reindex(data_dir)
    if steps == 0:  # killed before the mark: the conversation is intact
        assert report.indexed == [cid]
        return
    assert report.indexed == []
    assert report.deletions_finished == ([cid] if steps < 3 else [])
    assert list(data_dir.conversations_dir.iterdir()) == []
    store = await Store.open(data_dir)
    try:
        assert await store.list_conversations() == ([], None)
        assert not store.exists(cid)
    finally:
        await store.close()


async def test_store_open_finishes_a_half_done_delete(tmp_path: Path) -> None:
    data_dir = DataDir(tmp_path / "home")
    proc = child("delete", str(data_dir.root), "1")
    out, _ = proc.communicate(timeout=30)
    cid = out.split()[1]
    store = await Store.open(data_dir)
    try:
        assert await store.get_summary(cid) is None
        assert list(data_dir.conversations_dir.iterdir()) == []
    finally:
        await store.close()
