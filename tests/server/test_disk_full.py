"""A full disk: the turn fails with a clear error, the message it could not save waits again
instead of being lost, the daemon keeps serving, and everything resumes once there is room."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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

        await client.request(
            "input/send", {"conversationId": cid, "text": IMPORTANT, "mode": "queue"}
        )
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "failed"
        assert notes[-1]["params"]["error"]["kind"] == "storage_failed"
        waiting = await collect_until(
            client,
            lambda n: n["method"] == "inbox/updated" and bool(n["params"]["inputs"]),
        )
        [back] = waiting[-1]["params"]["inputs"]
        assert back["text"] == IMPORTANT

        # The daemon keeps serving, this client and others.
        other = await d.client("other")
        listed: dict[str, Any] = await other.request("conversation/list")
        assert [c["conversationId"] for c in listed["conversations"]] == [cid]
        await other.close()

        # With room again, the waiting message runs when the user says so.
        filler.unlink()
        await client.request("input/jump", {"inputId": back["inputId"]})
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "completed"
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        assert [i["text"] for i in items if i["type"] == "user_message"] == [
            "hello",
            IMPORTANT,
        ]
        await client.close()
    finally:
        d.stop()
