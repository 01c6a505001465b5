"""`session/cancel` before the message reached the daemon: while an MCP server fills in the
`/mcp__SERVER__PROMPT` the user sent (a slow server, or a loaded machine), the prompt ends
"cancelled" and no turn runs. The cancel used to find no prompt of the session then, and the
turn ran anyway."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block

from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn, until
from tests.support.waits import WAIT_S


async def test_a_cancel_while_the_mcp_prompt_is_filled_in_runs_no_turn(
    daemon_factory: Any, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"  # the server answers the prompt once this file exists
    config = daemon_config(
        fake, mode="held", mode_args=(str(gate),), extra=f"startup_timeout_s = {STARTUP_S:g}\n"
    )
    daemon: Daemon = daemon_factory(config)
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("started"))
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, "start t", within=STARTUP_S)  # the server is ready
        asked = len(fake.requests)
        async with acp_agent(daemon, tmp_path) as (conn, _rec):
            await conn.load_session(cwd=str(daemon.workdir), session_id=cid, mcp_servers=[])
            prompt = asyncio.create_task(
                conn.prompt(session_id=cid, prompt=[text_block("/mcp__t__review file=app.py")])
            )
            started = Path(f"{gate}.started")
            await until(started.exists)  # the server is filling the prompt in
            await conn.cancel(session_id=cid)
            # A request sent after it is answered once the agent has read the cancel.
            await conn.list_sessions(cwd=str(daemon.workdir))
            gate.touch()
            response = await asyncio.wait_for(prompt, WAIT_S)
        assert response.stop_reason == "cancelled"
        read = await client.request("conversation/read", {"conversationId": cid})
        said = [i["text"] for i in read["items"] if i["type"] == "user_message"]
        assert said == ["start t"]  # the review never became a message
        assert len(fake.requests) == asked  # nor reached the model
    finally:
        await client.close()
