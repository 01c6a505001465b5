"""session/load replays a conversation's history; session/list is the daemon's conversation
list; a daemon restart under a live session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from tests.acp.harness import acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.waits import WAIT_S


async def _converse(daemon: Daemon, cwd: Path, *texts: str) -> str:
    """A conversation made by another client, each text a finished turn."""
    ws = await daemon.client("ws")
    try:
        cid = (await ws.request("conversation/create", {"cwd": str(cwd)}))["conversation"][
            "conversationId"
        ]
        await ws.subscribe(cid)
        for text in texts:
            await ws.request("input/send", {"conversationId": cid, "text": text})
            while (await ws.next_notification(WAIT_S))["method"] != "turn/ended":
                pass
        return str(cid)
    finally:
        await ws.close()


async def test_load_replays_history_and_list_finds_it(
    shared_daemon: Daemon, workdir: Path, tmp_path: Path
) -> None:
    cid = await _converse(shared_daemon, workdir, "run: echo hi", "think: about it")
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        listed = await conn.list_sessions(cwd=str(workdir))
        assert [s.session_id for s in listed.sessions] == [cid]
        assert listed.sessions[0].title == "run: echo hi"

        await conn.load_session(cwd=str(workdir), session_id=cid, mcp_servers=[])
        kinds = [type(u) for u in rec.of(cid)]
        # The history arrives before the answer, in order.
        shown = [k for k in kinds if k is not type(rec.of(cid)[-1]) or k is AgentMessageChunk]
        assert shown[:6] == [
            UserMessageChunk,
            ToolCallStart,
            ToolCallProgress,
            AgentMessageChunk,
            UserMessageChunk,
            AgentThoughtChunk,
        ]
        assert rec.user_texts(cid) == ["run: echo hi", "think: about it"]
        assert "The user asked me to think about: about it" in rec.thoughts(cid)
        done = rec.of(cid, ToolCallProgress)[0]
        assert done.status == "completed" and "hi" in done.content[-1].content.text

        # The loaded session goes on like a new one.
        response = await conn.prompt(session_id=cid, prompt=[text_block("and now")])
        assert response.stop_reason == "end_turn"
        assert "You said: “and now”" in rec.text(cid)

        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(workdir), session_id="nope", mcp_servers=[])


async def test_daemon_restart_under_a_live_session(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    fake_openai.enqueue(
        Reply().text("one ok"), Reply().text("two so far").hang(), Reply().text("three ok")
    )
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("one")])).stop_reason
        # A turn cut by the daemon stopping answers with a clear error, not a hang, and not a
        # "cancelled" the user never asked for.
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("two")]))
        await rec.until(lambda: "two so far" in rec.text(sid))
        await asyncio.to_thread(daemon.stop)
        with pytest.raises(RequestError) as lost:
            await asyncio.wait_for(task, WAIT_S)
        assert error_data(lost.value)["kind"] == "daemon_lost"
        assert "daemon stopped" in str(lost.value)
        # The daemon comes back (started by hand, or by `openvaala acp` when it came first):
        # the same session goes on, without a new session/load.
        await asyncio.to_thread(daemon.start_or_adopt)
        response = await conn.prompt(session_id=sid, prompt=[text_block("three")])
        assert response.stop_reason == "end_turn"
        await rec.until(lambda: "three ok" in rec.text(sid))
