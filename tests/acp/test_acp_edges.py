"""ACP edges an editor trips on (docs/editors.md, ACP): the protocol version a client asks for
that does not exist, a permission question answered "cancelled", a subagent changing its own
agent, and subagent reports in `session/load`'s replay. Real daemon, `openvaala acp` and the
official SDK's client; the selector check drives the pure stream with what the daemon sends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    ClientCapabilities,
    CurrentModeUpdate,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
)

from openvaala_acp.stream import SessionStream
from tests.acp.harness import ASKING_CONFIG, acp_agent
from tests.support.daemon import Daemon
from tests.support.waits import WAIT_S


async def test_version_zero_is_answered_with_the_version_spoken(
    shared_daemon: Daemon, tmp_path: Path
) -> None:
    async with acp_agent(shared_daemon, tmp_path) as (conn, _rec):
        answer = await conn.initialize(
            protocol_version=0,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="pytest", version="1"),
        )
        assert answer.protocol_version == PROTOCOL_VERSION == 1


async def test_a_question_answered_cancelled_ends_the_prompt_cancelled(
    daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(ASKING_CONFIG)
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        task = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=[text_block("run: touch made.txt")])
        )
        await rec.until(lambda: rec.questions)
        _, _, answer = rec.questions[0]
        answer.set_result(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))
        # No session/cancel is sent: the answer alone ends the prompt.
        assert (await asyncio.wait_for(task, WAIT_S)).stop_reason == "cancelled"
    assert not (Path(daemon.workdir) / "made.txt").exists()


def test_a_subagent_changing_its_agent_leaves_the_selector_alone() -> None:
    stream = SessionStream(conversation_id="c", root_session_id="root", cwd="/w", agent="default")
    child = {"conversationId": "c", "session": {"sessionId": "child", "agent": "worker"}}
    assert stream.on_note("session/updated", child) == []
    root = {"conversationId": "c", "session": {"sessionId": "root", "agent": "planner"}}
    [update] = stream.on_note("session/updated", root)
    assert isinstance(update, CurrentModeUpdate) and update.current_mode_id == "planner"


async def test_session_load_replays_the_subagent_report_shown_live(
    shared_daemon: Daemon, workdir: Path, tmp_path: Path
) -> None:
    report = "[Report from subagent"
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("spawn: say hello")])
        await rec.until(lambda: any(t.startswith(report) for t in rec.user_texts(sid)), 30)
        live = [t for t in rec.user_texts(sid) if t.startswith(report)]
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        await conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert [t for t in rec.user_texts(sid) if t.startswith(report)] == live
