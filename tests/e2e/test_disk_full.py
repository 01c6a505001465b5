"""A full disk: `input/send` never answers before its message is durable, so a message that
cannot be saved fails the send with `storage_failed` (the client keeps it) and nothing is claimed
as started; the daemon keeps serving, and everything resumes once there is room (issue 32,
point 8; the inbox side, a waiting message that cannot be saved waits again:
tests/server/runtime/test_storage_failure.py)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client.connection import RpcError
from tests.support.daemon import DEFAULT_CONFIG, Daemon, make_daemon
from tests.support.events import collect_until, new_conversation, run_turn, turn_ended


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB filesystem of our own (tmpfs), so the test can really fill it."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): " + mounted.stderr.decode())
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill(path: Path) -> None:
    with open(path, "wb", buffering=0) as f:
        for size in (65536, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * size)


# Big enough to need fresh blocks: a "full" disk may still take a few bytes into a block a file
# already has, but never a message like this.
IMPORTANT = "important words " + "x" * 20_000


async def test_a_full_disk_loses_nothing(tmp_path: Path, tiny_disk: Path) -> None:
    d: Daemon = make_daemon(tmp_path, DEFAULT_CONFIG)
    d.home = tiny_disk / "home"
    d.log_path = tmp_path / "server.log"  # not on the disk we fill
    d.start()
    try:
        client = await d.client()
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "hello")
        # The index commits behind the durable append: let it catch up before the disk fills,
        # or the listing below would miss a conversation whose journal is safe.
        for _ in range(200):
            listed_before = await client.request("conversation/list")
            if listed_before["conversations"]:
                break
            await asyncio.sleep(0.05)
        filler = tiny_disk / "filler"
        _fill(filler)

        # The message cannot be made durable: the send says so, and claims nothing — no
        # "started" answer, no turn announced, nothing left waiting (the client still holds it).
        with pytest.raises(RpcError) as refused:
            await client.request(
                "input/send", {"conversationId": cid, "text": IMPORTANT, "mode": "queue"}
            )
        assert refused.value.kind == "storage_failed"
        assert "No space left on device" in refused.value.message

        # The daemon keeps serving, this client and others.
        other = await d.client("other")
        listed: Any = await other.request("conversation/list")
        assert [c["conversationId"] for c in listed["conversations"]] == [cid]
        [summary] = listed["conversations"]
        assert summary["status"] == "idle"
        await other.close()

        # With room again, the message sent again runs; nothing about the refused one shows.
        filler.unlink()
        await client.request(
            "input/send", {"conversationId": cid, "text": IMPORTANT, "mode": "queue"}
        )
        notes = await collect_until(client, turn_ended())
        started = [n["params"]["turnId"] for n in notes if n["method"] == "turn/started"]
        ended = [n["params"] for n in notes if n["method"] == "turn/ended"]
        assert len(started) == 1 and [e["turnId"] for e in ended] == started
        assert ended[0]["status"] == "completed"
        waiting = [n["params"]["inputs"] for n in notes if n["method"] == "inbox/updated"]
        assert not [i for inputs in waiting for i in inputs if i["text"] == IMPORTANT]
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        assert [i["text"] for i in items if i["type"] == "user_message"] == [
            "hello",
            IMPORTANT,
        ]
        assert not [i for i in items if i.get("kind") == "turn_failed"]
        await client.close()
    finally:
        d.stop()
