"""`shell/run` when a turn starts while the command runs (docs/protocol.md, shell/run): the
output is not written into that turn's history; the request fails with `turn_running` and
carries the output, so nothing the command printed is lost.

The agent asks before every shell call, so the turn holds at its approval; the user's command
waits for a file the test creates once the turn is holding."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, new_conversation, snapshot_of

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
"""


async def test_a_turn_started_mid_command_keeps_the_output_out_of_it(
    daemon_factory: object, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(CONFIG)  # type: ignore[operator]
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(tmp_path))
        await client.request("conversation/rename", {"conversationId": cid, "title": "t"})
        started, go = tmp_path / "started", tmp_path / "go"
        command = (
            f"touch {started}; until [ -e {go} ]; do sleep 0.05; done; echo printed-by-the-user"
        )
        run = asyncio.ensure_future(
            client.request("shell/run", {"conversationId": cid, "command": command})
        )
        deadline = time.monotonic() + 30
        while not started.exists():  # the command runs: now a turn starts
            assert time.monotonic() < deadline, "the command never started"
            await asyncio.sleep(0.02)
        # Another client sends (one connection's requests are answered in turn).
        other = await daemon.client("other")
        await other.subscribe(cid)
        send = {"conversationId": cid, "text": "run: echo from-the-turn", "mode": "queue"}
        await other.request("input/send", send)
        await collect_until(other, method_is("approval/requested"))
        await other.close()
        go.touch()
        with pytest.raises(RpcError) as refused:
            await run
        assert refused.value.kind == "turn_running"
        assert "printed-by-the-user" in str(refused.value.data["output"])
        snapshot = await snapshot_of(client, cid)
        texts = [str(i.get("text")) for s in snapshot["sessions"] for i in s["items"]]
        assert not any("printed-by-the-user" in t for t in texts)
    finally:
        await client.close()
