"""A reply the daemon was streaming when it was killed (`kill -9`) stays in the ACP editor, marked
interrupted, and the session goes on on the daemon `openvaala acp` starts again (docs/editors.md,
"Errors and restarts"): live, the editor is told where the reply was cut and why; a later
`session/load` replays the cut reply (which no daemon saved) where it was, marked, before the
crash's notice. The real daemon and `openvaala acp` under the SDK's client, the provider faked
at the wire, every message checked against the ACP schema."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import AgentMessageChunk, UserMessageChunk

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.waits import WAIT_S

MARK = "_(interrupted)_"


def message(rec: Any, sid: str, start: int = 0) -> list[tuple[str | None, str]]:
    """The agent message chunks from update `start` on: (message id, text)."""
    return [
        (u.message_id, u.content.text)
        for s, u in rec.updates[start:]
        if s == sid and isinstance(u, AgentMessageChunk)
    ]


async def test_the_cut_reply_is_kept_marked_and_the_session_goes_on(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    fake_openai.enqueue(Reply().text("half of ").text("a reply").hang(), Reply().text("again ok"))
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, schema=schema) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        task = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await rec.until(lambda: "a reply" in rec.text(sid))
        [cut_id] = {m for m, _text in message(rec, sid)}  # one message, streamed in chunks
        await asyncio.to_thread(daemon.stop, signal.SIGKILL)
        with pytest.raises(RequestError) as lost:
            await asyncio.wait_for(task, WAIT_S)
        assert error_data(lost.value)["kind"] == "daemon_lost"

        # Back on a new daemon: the reply is marked where it was cut, then why.
        await rec.until(lambda: "server stopped during this turn" in rec.text(sid), 30)
        after = rec.text(sid).split("half of a reply", 1)[1]
        assert after.index(MARK) < after.index("server stopped")
        assert (cut_id, f"\n\n{MARK}\n") in message(rec, sid)

        # The session goes on.
        response = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("again")]), 30
        )
        assert response.stop_reason == "end_turn"
        assert rec.text(sid).endswith("again ok")

        # Loaded again: the cut reply is replayed where it was, marked, though no daemon has it.
        start = len(rec.updates)
        await conn.load_session(cwd=str(daemon.workdir), session_id=sid, mcp_servers=[])
        replayed = message(rec, sid, start)
        assert replayed[0] == (cut_id, f"half of a reply\n\n{MARK}\n")
        assert "server stopped during this turn" in replayed[1][1]
        assert replayed[2][1] == "again ok"
        users = [u for s, u in rec.updates[start:] if isinstance(u, UserMessageChunk)]
        assert [u.content.text for u in users] == ["go", "again"]
    schema.check()
