"""Approvals as session/request_permission: answered from the editor, or from a websocket client
first (the first answer wins either way, docs/protocol.md "Approvals")."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.acp.harness import ASKING_CONFIG, acp_agent
from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.support.events import snapshot_of
from tests.support.waits import WAIT_S


@pytest.fixture(scope="module")
def asking_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon whose agent asks before every command, shared: grants are per conversation."""
    daemon = make_daemon(tmp_path_factory.mktemp("asking"), ASKING_CONFIG)
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.stop()
        stop_any_server(daemon)


async def test_permission_answered_in_the_editor(asking_daemon: Daemon, tmp_path: Path) -> None:
    daemon = asking_daemon
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            await ws.subscribe(sid)
            task = asyncio.create_task(
                conn.prompt(session_id=sid, prompt=[text_block("run: echo asked")])
            )
            await rec.until(lambda: rec.questions)
            session_id, tool_call, answer = rec.questions[0]
            assert session_id == sid
            # The question is about the call the editor already shows.
            call = rec.tool_calls(sid)[0]
            assert tool_call.tool_call_id == call.tool_call_id
            assert tool_call.title == "echo asked"
            # The editor's "always" option names exactly what it allows.
            names = {o.option_id: o.name for o in rec.options[0]}
            assert names["allow_conversation"] == (
                "Allow for this conversation: shell: exactly the command `echo asked`; nothing else"
            )
            answer.set_result(
                RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id="allow_conversation")
                )
            )
            assert (await asyncio.wait_for(task, WAIT_S)).stop_reason == "end_turn"
            final = rec.tool_updates(sid, call.tool_call_id)[-1]
            assert final.status == "completed" and final.content is not None
            assert "asked" in final.content[-1].content.text

            resolved = None
            while resolved is None:
                note = await ws.next_notification(WAIT_S)
                if note["method"] == "approval/resolved":
                    resolved = note["params"]
            assert resolved["decision"] == "allow_conversation"

            # "For this conversation" was remembered: the same command runs without asking.
            await conn.prompt(session_id=sid, prompt=[text_block("run: echo asked")])
            assert len(rec.questions) == 1
    finally:
        await ws.close()


async def test_permission_answered_from_a_websocket_client(
    asking_daemon: Daemon, tmp_path: Path
) -> None:
    daemon = asking_daemon
    ws = await daemon.client("ws")
    try:
        async with acp_agent(daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
            await ws.subscribe(sid)
            task = asyncio.create_task(
                conn.prompt(session_id=sid, prompt=[text_block("run: echo elsewhere")])
            )
            await rec.until(lambda: rec.questions)
            requested = None
            while requested is None:
                note = await ws.next_notification(WAIT_S)
                if note["method"] == "approval/requested":
                    requested = note["params"]
            await ws.respond_approval(sid, requested["approvalId"], "deny", "not now")
            assert (await asyncio.wait_for(task, WAIT_S)).stop_reason == "end_turn"
            call = rec.tool_calls(sid)[0]
            final = rec.tool_updates(sid, call.tool_call_id)[-1]
            assert final.status == "failed" and final.content is not None
            assert "not now" in final.content[-1].content.text
            # A late answer from the editor changes nothing: the first answer won.
            _sid, _call, answer = rec.questions[0]
            answer.set_result(
                RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id="allow")
                )
            )
            snap = await snapshot_of(ws, sid)
            results = [i for i in snap["sessions"][0]["items"] if i["type"] == "tool_result"]
            assert len(results) == 1 and results[0]["isError"] is True
    finally:
        await ws.close()


async def test_no_always_option_when_nothing_can_be_granted(
    asking_daemon: Daemon, tmp_path: Path
) -> None:
    daemon = asking_daemon
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        task = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=[text_block("run: echo one > acp.txt")])
        )
        await rec.until(lambda: rec.questions)
        _session, tool_call, answer = rec.questions[0]
        assert [o.option_id for o in rec.options[0]] == ["allow", "deny"]
        assert tool_call.content is not None
        said = tool_call.content[0].content.text
        assert "Cannot be allowed for this conversation" in said and "shell operator" in said
        answer.set_result(
            RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="deny"))
        )
        assert (await asyncio.wait_for(task, WAIT_S)).stop_reason == "end_turn"
