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
from tests.acp.harness import ASKING_CONFIG, acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.waits import WAIT_S


async def test_starts_the_daemon_when_none_runs(daemon_factory: Any, tmp_path: Path) -> None:
    daemon: Daemon = daemon_factory(start=False)
    assert find_server(daemon.data_dir) is None
    async with acp_agent(daemon, tmp_path) as (conn, _rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        response = await conn.prompt(session_id=sid, prompt=[text_block("hello")])
        assert response.stop_reason == "end_turn"
        assert find_server(daemon.data_dir) is not None  # left running for the other clients


async def test_a_crash_under_a_prompt_is_a_clear_error(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    fake_openai.enqueue(Reply().text("crashing").hang(), Reply().text("again ok"))
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("crash")]))
        await rec.until(lambda: "crashing" in rec.text(sid))
        await asyncio.to_thread(daemon.stop, signal.SIGKILL)
        with pytest.raises(RequestError) as lost:
            await asyncio.wait_for(task, WAIT_S)
        assert error_data(lost.value)["kind"] == "daemon_lost"
        # Nobody restarts it: `openvaala acp` starts a daemon itself, and the session goes on.
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("again")]), 30
        )
        assert response.stop_reason == "end_turn"
        assert "again ok" in rec.text(sid)


async def test_prompt_during_another_clients_turn_queues(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    gate = Gate()
    fake_openai.enqueue(
        Reply().text("theirs so far").wait(gate).text(", theirs done."), Reply().text("mine ok")
    )
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            await ws.subscribe(sid)
            await ws.request("input/send", {"conversationId": sid, "text": "theirs"})
            await rec.until(lambda: "theirs so far" in rec.text(sid))
            task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("mine")]))
            # The editor's prompt waits in the daemon's inbox as a queued input...
            inbox: list[Any] = []
            while not inbox:
                note = await ws.next_notification(WAIT_S)
                if note["method"] == "inbox/updated":
                    inbox = note["params"]["inputs"]
            assert [(i["text"], i["mode"]) for i in inbox] == [("mine", "queue")]
            assert not task.done()
            # ...and runs as its own turn once theirs is over.
            gate.open()
            assert (await asyncio.wait_for(task, WAIT_S)).stop_reason == "end_turn"
            assert rec.text(sid) == "theirs so far, theirs done.mine ok"
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
        while (await ws.next_notification(WAIT_S))["method"] != "approval/requested":
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
