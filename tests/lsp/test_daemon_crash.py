"""The bridge outlives its daemon: after `kill -9` mid-turn it starts a new daemon as at startup,
answers the prompt the crash cut short, redraws from the new daemon, and still shuts down."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from openvaala_server.client import find_server
from openvaala_server.store.lock import read_lock
from tests.lsp.harness import PACED_CONFIG, Recorder, capabilities, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.waits import WAIT_S

# Paced, so a turn is still running when the daemon is killed; port 0, so the daemon the
# bridge starts (`openvaala serve start`, as at startup) takes a free port.
CONFIG = PACED_CONFIG + "\n[server]\nport = 0\n"


def _kill_restarted(daemon: Daemon) -> None:
    """Stop the daemon the bridge started (the fixture only knows the one it started)."""
    info = read_lock(daemon.data_dir.lock_path)
    if info is not None and info.pid and find_server(daemon.data_dir) is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(info.pid, signal.SIGTERM)


@pytest_asyncio.fixture
async def crashing(daemon_factory: Any) -> AsyncIterator[tuple[Daemon, LanguageClient, Recorder]]:
    daemon = daemon_factory(config=CONFIG)
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        yield daemon, client, rec
    finally:
        try:
            if not client.stopped:
                await stop_lsp(client)
        finally:
            _kill_restarted(daemon)


async def _prompt_then_kill(client: LanguageClient, rec: Recorder, daemon: Daemon) -> Any:
    new = await request(client, "openvaala/conversations/new", {})
    cid = new["conversation"]["conversationId"]
    prompt = asyncio.ensure_future(
        client.protocol.send_request_async(
            "openvaala/prompt",
            {"conversationId": cid, "text": "a long answer please"},
            msg_id="cut-short",
        )
    )
    await rec.until(lambda: "item/delta" in rec.methods(cid))
    old_pid = daemon.process.pid if daemon.process else None
    daemon.kill()
    return cid, prompt, old_pid


async def test_kill_mid_turn_restarts_the_daemon_and_prompts_work_again(
    crashing: tuple[Daemon, LanguageClient, Recorder],
) -> None:
    daemon, client, rec = crashing
    cid, prompt, old_pid = await _prompt_then_kill(client, rec, daemon)

    # The cut-short prompt is answered at once, saying what happened.
    with pytest.raises(JsonRpcException) as failed:
        await asyncio.wait_for(prompt, WAIT_S)
    assert error_data(failed.value)["kind"] == "daemon_lost"
    assert "send the message again" in failed.value.message

    # A new daemon, and the editor is told it is connected again.
    await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=30)
    found = find_server(daemon.data_dir)
    assert found is not None
    info = read_lock(daemon.data_dir.lock_path)
    assert info is not None and info.pid != old_pid

    # The transcript was redrawn from the new daemon: no stale "running" turn.
    snapshots = [e for e in rec.events if e["method"] == "conversation/snapshot"]
    assert snapshots and snapshots[-1]["conversationId"] == cid
    assert snapshots[-1]["params"]["snapshot"]["conversation"]["status"] != "running"

    # And prompting works again, on the same conversation.
    result = await asyncio.wait_for(
        request(client, "openvaala/prompt", {"conversationId": cid, "text": "hello again"}), 30
    )
    assert result["status"] == "completed"
    usage = await request(client, "openvaala/usage", {"conversationId": cid})
    assert usage["used"] > 0


async def test_cancel_after_a_crash_is_answered(
    crashing: tuple[Daemon, LanguageClient, Recorder],
) -> None:
    daemon, client, rec = crashing
    _, prompt, _ = await _prompt_then_kill(client, rec, daemon)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cut-short"))
    with pytest.raises(JsonRpcException) as failed:
        await asyncio.wait_for(prompt, WAIT_S)
    assert error_data(failed.value)["kind"] == "daemon_lost"


async def test_shutdown_after_a_crash_exits(
    crashing: tuple[Daemon, LanguageClient, Recorder],
) -> None:
    daemon, client, rec = crashing
    _, prompt, _ = await _prompt_then_kill(client, rec, daemon)
    await client.shutdown_session()
    process = client._server  # the bridge's process: did it exit by itself?
    assert process is not None
    code = await asyncio.wait_for(process.wait(), WAIT_S)
    assert code == 0
    with contextlib.suppress(JsonRpcException, asyncio.CancelledError):
        await asyncio.wait_for(prompt, 5)
    await client.stop()


async def test_kill_while_idle_reconnects_without_any_request(
    crashing: tuple[Daemon, LanguageClient, Recorder],
) -> None:
    """Nobody asks anything after the crash: the bridge reconnects by itself (right after a
    crash the lock may still name the dead daemon for a moment)."""
    daemon, client, rec = crashing
    new = await request(client, "openvaala/conversations/new", {})
    cid = new["conversation"]["conversationId"]
    await request(client, "openvaala/prompt", {"conversationId": cid, "text": "before"})
    daemon.kill()
    await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=30)
    assert find_server(daemon.data_dir) is not None
