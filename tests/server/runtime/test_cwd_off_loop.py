"""The working directory is never stat'ed on the event loop (issue 17: a hung network mount must
not freeze every client): `info()`, built for every notification, reads what the last check in a
worker thread found; a turn, a resume and `setCwd` check in a worker thread, and a directory that
does not answer in time counts as missing while the loop goes on serving."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from openvaala_server import errors
from openvaala_server.runtime import conversation
from tests.server.runtime.conftest import Core


def _watched_isdir(
    monkeypatch: pytest.MonkeyPatch, loop_thread: threading.Thread
) -> tuple[list[str], Callable[[str], None]]:
    """`os.path.isdir` that records calls made on the event loop's thread, and can be made to
    hang for one path (as a stat on a dead NFS server does)."""
    on_loop: list[str] = []
    hung: dict[str, threading.Event] = {}
    real = os.path.isdir

    def isdir(path: object) -> bool:
        if threading.current_thread() is loop_thread:
            on_loop.append(str(path))
        release = hung.get(str(path))
        if release is not None:
            release.wait(10)
        return real(path)  # type: ignore[arg-type]

    def hang(path: str) -> None:
        hung[path] = threading.Event()

    monkeypatch.setattr(os.path, "isdir", isdir)
    return on_loop, hang


async def test_no_stat_of_the_working_directory_on_the_event_loop(
    core: Core, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, script, cwd = core.runtime, core.script, core.cwd
    conv, events = await core.new()
    script.text("One.")
    await core.turn(conv, "first")
    on_loop, hang = _watched_isdir(monkeypatch, threading.current_thread())

    # Notifications and info: no stat at all; turns: in a worker thread.
    for _ in range(3):
        assert conv.info()["cwdExists"] is True
    script.text("Two.")
    await core.turn(conv, "second")
    assert on_loop == []

    # The directory goes away: the next turn is refused, and every client is told.
    moved = tmp_path / "moved"
    cwd.rename(moved)
    with pytest.raises(errors.CwdMissing):
        await core.send(conv, "third")
    assert conv.info()["cwdExists"] is False
    updates = events.of("conversation/updated")
    assert updates[-1]["params"]["conversation"]["cwdExists"] is False
    # Pointed at the new place: usable again.
    await runtime.set_cwd(conv.conversation_id, str(moved))
    assert conv.info()["cwdExists"] is True
    assert on_loop == []

    # A directory that hangs: the check gives up after CWD_CHECK_S, the turn is refused as
    # missing, and the loop kept running meanwhile (this test's own awaits prove it).
    monkeypatch.setattr(conversation, "CWD_CHECK_S", 0.2)
    hang(str(moved))
    with pytest.raises(errors.CwdMissing):
        await core.send(conv, "fourth")
    assert conv.info()["cwdExists"] is False
    assert on_loop == []
