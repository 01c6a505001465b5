"""The data directory under damage and denial: a damaged index is rebuilt, files are private,
a creation that failed on storage leaves nothing behind, an unusable directory is a clear
message, and a hostile frame costs one log line. Each against the real daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from openvaala_server.client import RpcError
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import created, message
from tests.support.daemon import DEFAULT_CONFIG, Daemon, make_daemon
from tests.support.events import collect_until, new_conversation, run_turn, turn_ended

PAGE = 4096


async def _fill_store(data: DataDir, count: int) -> set[str]:
    store = await Store.open(data)
    ids = set()
    try:
        for n in range(count):
            payload = created(f"conversation {n}")
            ids.add(payload["conversationId"])
            await store.create_conversation(payload)
            words = [message(f"words of conversation {n} " * 40)]
            await store.append_items(payload["conversationId"], payload["rootSessionId"], words)
    finally:
        await store.close()
    return ids


def _damage(db: Path, first_page: int, pages: int) -> None:
    """The header and the first pages stay intact, so the file opens and its first rows read;
    pages deeper in, which a full listing reaches, become garbage."""
    with open(db, "r+b") as f:
        f.seek(first_page * PAGE)
        f.write(bytes([0xA5]) * (pages * PAGE))


async def _list_all(daemon: Daemon) -> set[str]:
    client = await daemon.client()
    seen: set[str] = set()
    cursor = None
    while True:
        params = {"limit": 100} | ({"cursor": cursor} if cursor else {})
        page = await client.request("conversation/list", params)
        seen |= {c["conversationId"] for c in page["conversations"]}
        cursor = page.get("nextCursor")
        if not cursor:
            break
    await client.close()
    return seen


async def test_a_damaged_index_is_rebuilt_at_start(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    d: Daemon = daemon_factory(start=False)
    ids = await _fill_store(d.data_dir, 300)
    db = d.data_dir.metadata_db
    pages = db.stat().st_size // PAGE
    assert pages > 100
    _damage(db, first_page=50, pages=20)

    d.start()
    assert await _list_all(d) == ids
    assert "rebuilding" in d.log() and "damaged" in d.log()


async def test_index_files_are_private_and_start_tightens_old_modes(daemon: Daemon) -> None:
    client = await daemon.client()
    await run_turn(client, await new_conversation(client, str(daemon.workdir)), "hello")
    await client.close()
    root = daemon.data_dir.root
    db = daemon.data_dir.metadata_db
    for name in ("metadata.db", "metadata.db-wal", "metadata.db-shm"):
        assert stat.S_IMODE((root / name).stat().st_mode) == 0o600, name

    daemon.stop()
    everything = [root, *root.rglob("*")]
    for path in everything:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    daemon.start()
    for path in everything:
        if path.exists():
            want = 0o700 if path.is_dir() else 0o600
            assert stat.S_IMODE(path.stat().st_mode) == want, path
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs of our own, to fill or make read-only (needs root, like test_disk_full)."""
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


async def test_a_first_send_that_fails_on_storage_can_be_retried(
    tmp_path: Path, tiny_disk: Path
) -> None:
    d = make_daemon(tmp_path, DEFAULT_CONFIG)
    d.home = tiny_disk / "home"
    d.log_path = tmp_path / "server.log"
    d.start()
    try:
        client = await d.client()
        cid = await new_conversation(client, str(d.workdir))
        filler = tiny_disk / "filler"
        _fill(filler)
        send = {"conversationId": cid, "text": "first words " * 3000, "mode": "queue"}
        with contextlib.suppress(RpcError):
            await client.request("input/send", send)
            await collect_until(client, turn_ended())
        filler.unlink()

        await client.request("input/send", {**send, "text": "again"})
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "completed"
        await client.close()
    finally:
        d.stop()
    report = d.cli("reindex")
    assert report.returncode == 0, report.stderr
    assert "skipped" not in report.stdout + report.stderr
    assert os.listdir(d.data_dir.conversations_dir) == [cid]


def test_a_read_only_data_directory_is_a_clear_error(tmp_path: Path, tiny_disk: Path) -> None:
    d = make_daemon(tmp_path, DEFAULT_CONFIG)
    d.home = tiny_disk / "home"
    d.log_path = tmp_path / "server.log"
    d.start()
    d.stop()
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)
    result = d.cli("serve", "--port", "0")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "Read-only file system" in result.stderr
    assert str(d.home) in result.stderr


def test_metadata_db_a_directory_is_a_clear_error(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    d: Daemon = daemon_factory(start=False)
    d.data_dir.ensure()
    d.data_dir.metadata_db.mkdir()
    result = d.cli("serve", "--port", "0")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "metadata.db is a directory" in result.stderr


async def test_each_invalid_utf8_frame_logs_one_line(daemon: Daemon) -> None:
    before = len(daemon.log().splitlines())
    for _ in range(3):
        async with connect(
            f"ws://{daemon.address}/ws",
            additional_headers={"Authorization": f"Bearer {daemon.token}"},
        ) as ws:
            # The library refuses to send invalid UTF-8 as text: write the frame itself.
            ws.protocol.send_text(b'{"jsonrpc":"2.0","id":1,"method":"x\xff"}')
            ws.transport.write(b"".join(ws.protocol.data_to_send()))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.recv(), 5)
            assert ws.close_code == 1007
    await asyncio.sleep(0.2)
    lines = daemon.log().splitlines()[before:]
    assert "Traceback" not in "\n".join(lines)
    assert len([line for line in lines if "UTF-8" in line]) == 3
