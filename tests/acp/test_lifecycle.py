"""`openvaala acp` starts the daemon when none runs; a crash under a prompt; a prompt sent while
another client's turn runs waits for it (mode queue); an approval pending when a session is
loaded is asked at once."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from openvaala_server.client import find_server
from tests.acp.harness import ASKING_CONFIG, PACED_CONFIG, acp_agent
from tests.support.daemon import Daemon


async def test_starts_the_daemon_when_none_runs(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(start=False)
    assert find_server(daemon.data_dir) is None
    async with acp_agent(daemon, tmp_path) as (conn, _rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert response.stop_reason == "end_turn"
        assert find_server(daemon.data_dir) is not None  # left running for the other clients


async def test_a_crash_under_a_prompt_is_a_clear_error(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(PACED_CONFIG)
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("crash")]))
        await rec.until(lambda: "You said:" in rec.text(sid))
        await asyncio.to_thread(daemon.stop, signal.SIGKILL)
        with pytest.raises(RequestError) as lost:
            await asyncio.wait_for(task, 20)
        assert lost.value.data["kind"] == "daemon_lost"
        # Nobody restarts it: `openvaala acp` starts a daemon itself, and the session goes on.
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("again")]), 30
        )
        assert response.stop_reason == "end_turn"
        assert "You said: “again”" in rec.text(sid)


async def test_prompt_during_another_clients_turn_queues(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(PACED_CONFIG)
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            await ws.subscribe(sid)
            await ws.request("input/send", {"conversationId": sid, "text": "theirs"})
            await rec.until(lambda: "You said: “theirs”" in rec.text(sid)[:30])
            response = await conn.prompt(session_id=sid, prompt=[text_block("mine")])
            assert response.stop_reason == "end_turn"
            text = rec.text(sid)
            # Their turn finished first, then mine ran as a turn of its own.
            assert text.index("You said: “theirs”") < text.index("You said: “mine”")
            assert text.rstrip().endswith("to do real work.")
            ended = []
            while len(ended) < 2:
                note = await ws.next_notification(10)
                if note["method"] == "turn/ended":
                    ended.append(note["params"]["status"])
            assert ended == ["completed", "completed"]
    finally:
        await ws.close()


async def test_pending_approval_is_asked_on_load(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(ASKING_CONFIG)
    ws = await daemon.client("ws")
    try:
        cid = (await ws.request("conversation/create", {"cwd": str(daemon.workdir)}))[
            "conversation"
        ]["conversationId"]
        await ws.subscribe(cid)
        await ws.request("input/send", {"conversationId": cid, "text": "run: echo later"})
        while (await ws.next_notification(10))["method"] != "approval/requested":
            pass
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            await conn.load_session(cwd=str(daemon.workdir), session_id=cid, mcp_servers=[])
            await rec.until(lambda: rec.questions)
            _sid, tool_call, answer = rec.questions[0]
            assert tool_call.tool_call_id == rec.tool_calls(cid)[0].tool_call_id
            answer.set_result(
                RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id="allow")
                )
            )
            await rec.until(lambda: "later" in rec.text(cid))
    finally:
        await ws.close()
