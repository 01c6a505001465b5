"""Resuming a turn cut by `kill -9`: the model gets the saved history, is told the turn was cut,
and the shell call that was running is marked interrupted and not run again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openvaala_server.client import RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, tool_started, turn_ended


def _config(fake: FakeProvider) -> str:
    agent = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
    return fake.config_toml("fake") + agent


async def test_resume_after_kill_9_mid_turn(daemon_factory: Any, fake: FakeProvider) -> None:
    d: Daemon = daemon_factory(_config(fake))
    log = d.workdir / "runs.log"
    fake.enqueue(
        Reply().tool_call("shell", {"command": f"echo ran >> {log} && sleep 60"}),
    )
    client = await d.client(reconnect=False)
    cid = await new_conversation(client, str(d.workdir))
    await client.request("input/send", {"conversationId": cid, "text": "build it", "mode": "queue"})
    await collect_until(client, tool_started)
    for _ in range(500):  # until the command has started (the sandbox takes a moment)
        if log.exists():
            break
        await asyncio.sleep(0.02)
    assert d.process is not None
    d.process.kill()  # kill -9 while the shell call runs
    await client.close()
    d.stop()
    d.start()

    client = await d.client(reconnect=False)
    try:
        await client.subscribe(cid)
        fake.enqueue(Reply().text("Resumed: the build was cut, checking before running again."))
        result = await client.request("turn/resume", {"conversationId": cid})
        notes = await collect_until(client, turn_ended())
        assert notes[-1]["params"]["status"] == "completed"
        assert notes[-1]["params"]["turnId"] == result["turnId"] != result["resumedTurnId"]

        sent = fake.requests[-1].json["messages"]
        contents = [str(m.get("content")) for m in sent]
        # The history up to the last durable item: the user's message, the call, its result
        # marked as stopped, the server_stopped notice, then the resume notice.
        assert any("build it" in c for c in contents)
        assert any("The server stopped before this call finished." in c for c in contents)
        assert any("server stopped during this turn" in c and "/continue" in c for c in contents)
        assert "Continue it from where it stopped" in contents[-1]
        assert [c["function"]["name"] for m in sent for c in m.get("tool_calls") or []] == ["shell"]
        # The shell call ran once, before the kill; resuming did not run it again.
        assert log.read_text() == "ran\n"

        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        notices = [i["kind"] for i in items if i["type"] == "notice"]
        assert notices == ["server_stopped", "resumed"]
        # The resumed turn finished: nothing left to resume.
        with pytest.raises(RpcError) as again:
            await client.request("turn/resume", {"conversationId": cid})
        assert again.value.kind == "not_idle"
    finally:
        await client.close()
