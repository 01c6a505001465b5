"""Cancelling a turn, and live sync both ways between an ACP session and a websocket client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from acp import text_block

from tests.acp.harness import acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import snapshot_of
from tests.support.waits import WAIT_S


async def test_cancel_mid_turn_keeps_the_partial_text(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    fake_openai.enqueue(Reply().text("a partial ", "answer").hang())  # streams, then stalls
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("hello")]))
        await rec.until(lambda: rec.text(sid) == "a partial answer")
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(prompt, WAIT_S)
        assert response.stop_reason == "cancelled"
        assert rec.text(sid) == "a partial answer"

    client = await daemon.client()
    try:
        snap = await snapshot_of(client, sid)
        items = snap["sessions"][0]["items"]
        message = next(i for i in items if i["type"] == "agent_message")
        # What the editor showed is what the daemon kept: nothing lost, nothing invented.
        assert (message["status"], message["text"]) == ("interrupted", "a partial answer")
    finally:
        await client.close()


async def test_live_sync_both_ways(shared_daemon: Daemon, workdir: Path, tmp_path: Path) -> None:
    ws = await shared_daemon.client("ws")
    try:
        async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
            sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
            await ws.subscribe(sid)

            # ACP → websocket: the editor's prompt and its answer reach the other client live.
            await conn.prompt(session_id=sid, prompt=[text_block("from the editor")])
            seen: list[dict[str, Any]] = []
            while not any(n["method"] == "turn/ended" for n in seen):
                seen.append(cast("dict[str, Any]", await ws.next_notification(WAIT_S)))
            items = [n["params"]["item"] for n in seen if n["method"] == "item/completed"]
            assert [i["text"] for i in items if i["type"] == "user_message"] == ["from the editor"]
            assert any(i["type"] == "agent_message" for i in items)

            # websocket → ACP: a turn started elsewhere streams into the editor's session.
            await ws.request(
                "input/send", {"conversationId": sid, "text": "from the terminal", "mode": "queue"}
            )
            await rec.until(lambda: "from the terminal" in rec.user_texts(sid))
            await rec.until(lambda: "You said: “from the terminal”" in rec.text(sid))
            assert rec.user_texts(sid) == ["from the terminal"]  # its own prompt is not echoed
    finally:
        await ws.close()
