"""runtime.lock: one server per data directory; a killed server never blocks the next."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from openvaala_server.store.lock import LockHeld, RuntimeLock, is_locked, read_lock

REPO = Path(__file__).resolve().parents[3]


def test_second_process_is_refused_until_the_holder_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "runtime.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.server.store.crash_child",
            "lock",
            str(path),
            "127.0.0.1:7450",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        mine = RuntimeLock(path)
        with pytest.raises(LockHeld) as refused:
            mine.acquire()
        assert refused.value.pid == holder.pid
        assert refused.value.address == "127.0.0.1:7450"
        assert str(holder.pid) in str(refused.value)
        assert is_locked(path)
        info = read_lock(path)
        assert info is not None and info.pid == holder.pid
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()

    assert not is_locked(path)
    assert read_lock(path) is None  # the dead server's content means nothing
    mine.acquire()  # at once, no stale-file cleanup needed
    try:
        mine.set_address("127.0.0.1:9999")
        info = read_lock(path)
        assert info is not None and info.address == "127.0.0.1:9999"
        assert is_locked(path)
    finally:
        mine.release()
    assert not is_locked(path) and path.exists()


def test_set_address_needs_the_lock(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        RuntimeLock(tmp_path / "runtime.lock").set_address("x")
