"""A slow MCP server filling in a prompt does not hold up the client's connection: its other
requests are answered meanwhile (held in line, the connection read nothing more, and the
client's keepalive dropped it after ~40 s). The real daemon, a real SDK-built server whose
prompt answers once the test opens a gate."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn, until
from tests.support.waits import WAIT_S

Factory = Callable[..., Daemon]


@pytest.mark.timeout(180)
async def test_other_requests_are_answered_while_a_prompt_is_filled_in(
    daemon_factory: Factory, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"  # the server answers the prompt once this file exists
    extra = f"startup_timeout_s = {STARTUP_S:g}\n"
    d = daemon_factory(daemon_config(fake, mode="held", mode_args=(str(gate),), extra=extra))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("ok"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "start it", within=STARTUP_S)  # the server is ready
        asked = {"server": "t", "name": "review", "arguments": {"file": "app.py"}}
        prompt = asyncio.create_task(client.request("mcp/getPrompt", asked))
        await until(Path(f"{gate}.started").exists)  # the server is filling it in
        listed = await asyncio.wait_for(client.request("conversation/list", {}), WAIT_S)
        assert [c["conversationId"] for c in listed["conversations"]] == [cid]
        assert not prompt.done()  # answered while the prompt was still being filled in
        gate.touch()
        filled = await asyncio.wait_for(prompt, WAIT_S)
        assert filled["text"] == "Review app.py for bugs, briefly."
    finally:
        await client.close()
