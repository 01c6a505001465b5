"""The `openvaala` command: one server per data directory, detached start/stop/status, reindex
refusing to share, and the Python client starting a server when none runs."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openvaala_server import discovery
from openvaala_server.client import Client, start_server_early
from openvaala_server.client import daemon as client_daemon
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def test_a_second_server_on_the_same_data_directory_names_the_first(daemon: Daemon) -> None:
    assert daemon.process is not None
    second = daemon.cli("serve", "--port", "0")
    assert second.returncode == 1
    assert str(daemon.process.pid) in second.stderr and daemon.address in second.stderr


def test_reindex_refuses_while_a_server_runs_and_works_after(daemon: Daemon) -> None:
    refused = daemon.cli("reindex")
    assert refused.returncode == 1 and "serve stop" in refused.stderr
    daemon.stop()
    done = daemon.cli("reindex")
    assert done.returncode == 0, done.stderr


def test_after_kill_9_a_new_server_starts_at_once(daemon: Daemon) -> None:
    old_pid = daemon.process.pid if daemon.process else 0
    daemon.kill()
    daemon.start(timeout=30)
    assert daemon.process is not None and daemon.process.pid != old_pid
    status = daemon.cli("serve", "status")
    assert status.returncode == 0 and str(daemon.process.pid) in status.stdout


def test_detached_start_status_and_stop(daemon_factory: Any) -> None:
    d: Daemon = daemon_factory(start=False)
    assert d.cli("serve", "status").returncode == 3
    started = d.cli("serve", "start", "--port", "0")
    assert started.returncode == 0, started.stderr
    assert "http://127.0.0.1:" in started.stdout
    again = d.cli("serve", "start")
    assert again.returncode == 0 and "already running" in again.stdout
    # Asked for another port while one runs: said, not a silent success on the old port.
    running = int(started.stdout.strip().rsplit(":", 1)[-1].split("/")[0].split()[0])
    other = running + 1 if running < 65535 else running - 1
    elsewhere = d.cli("serve", "start", "--port", str(other))
    assert elsewhere.returncode == 1 and f"not on port {other}" in elsewhere.stderr
    status = d.cli("serve", "status")
    assert status.returncode == 0 and "running" in status.stdout
    stopped = d.cli("serve", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert d.cli("serve", "status").returncode == 3


async def test_the_client_starts_a_server_when_none_runs(
    daemon_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    d: Daemon = daemon_factory(start=False)
    monkeypatch.setenv("OPENVAALA_HOME", str(d.home))
    monkeypatch.setenv("OPENVAALA_CONFIG", str(d.config_path))
    client = await Client.connect(client_name="auto-start")
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "hello")
        assert notes[-1]["params"]["status"] == "completed"
    finally:
        await client.close()
        assert d.cli("serve", "stop").returncode == 0


def test_ctrl_c_stops_cleanly_and_removes_the_token(daemon_factory: Any) -> None:
    d: Daemon = daemon_factory(config='[models.demo]\nprovider = "demo"\npace_ms = 50\n')
    assert d.process is not None
    d.process.send_signal(signal.SIGINT)  # Ctrl+C in the foreground is a graceful stop too
    assert d.process.wait(20) == 0
    d.process = None
    assert not (d.home / "token").exists()


def test_help_lists_the_commands() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    for command in ("serve", "reindex", "web", "lsp"):
        assert command in result.stdout


def _children() -> set[int]:
    """This process's child processes, exited ones not yet reaped (zombies) included."""
    mine = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == os.getpid():
            mine.append(int(stat.parent.name))
    return set(mine)


async def test_an_early_start_is_reaped_when_the_server_answers_first(
    daemon_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`openvaala` starts the daemon itself while the terminal UI loads; by the time the UI
    connects, the server often answers already. The daemon is the UI's child then, and nothing
    else is (no `serve start` in between); stopped, it must not stay behind as a zombie for the
    UI's life."""
    d: Daemon = daemon_factory(start=False)
    monkeypatch.setenv("OPENVAALA_HOME", str(d.home))
    monkeypatch.setenv("OPENVAALA_CONFIG", str(d.config_path))
    monkeypatch.setattr(client_daemon, "_early_start", None)
    before = _children()
    try:
        start_server_early()
        deadline = time.monotonic() + 60
        while discovery.find_server(d.home) is None:  # looked for as the UI does not: no reaping
            assert time.monotonic() < deadline, "the server did not start"
            await asyncio.sleep(0.05)
        client = await Client.connect(client_name="openvaala-tui")  # as the terminal UI does
        await client.close()
        info = discovery.read_lock(d.home / discovery.LOCK_FILE)
        assert info is not None and _children() - before == {info.pid}
    finally:
        monkeypatch.setattr(client_daemon, "_early_start", None)
        assert d.cli("serve", "stop").returncode == 0
    while _children() - before:  # reaped in the background
        assert time.monotonic() < deadline, f"left behind: {_children() - before}"
        await asyncio.sleep(0.05)
