"""`shell/run` over the real websocket: the user's own command runs in the agent's sandbox, its
output is kept in the conversation as a user message, and bad input is refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.events import new_conversation

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
"""


async def test_shell_run_keeps_the_output_in_the_conversation(daemon_factory: Any) -> None:
    d: Daemon = daemon_factory(config=CONFIG)
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    result = await client.request(
        "shell/run", {"conversationId": cid, "command": "echo made > made.txt; cat made.txt"}
    )
    assert result["isError"] is False
    assert "made" in result["output"]
    assert (d.workdir / "made.txt").read_text() == "made\n"  # the workspace sandbox allows it
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    [kept] = [i for i in items if i["itemId"] == result["itemId"]]
    assert kept["type"] == "user_message"
    assert kept["origin"] == "shell"
    assert "$ echo made > made.txt; cat made.txt" in kept["text"]

    failing = await client.request("shell/run", {"conversationId": cid, "command": "exit 3"})
    assert failing["isError"] is True

    with pytest.raises(RpcError) as refused:
        await client.request("shell/run", {"conversationId": cid, "command": "   "})
    assert refused.value.kind == "invalid_params"
    assert "command" in refused.value.message
    await client.close()
