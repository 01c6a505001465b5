"""`files/output` over the real websocket (docs/protocol.md, "Files held by an editor"): output
for a command that is not running for this connection is `not_found`, output that is not text
is `invalid_params` naming the field, and the daemon goes on serving. (A running command's output
reaching other clients: tests/acp/test_editor_terminal_live.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon


async def test_output_for_no_running_command_is_refused_clearly(daemon_factory: Any) -> None:
    daemon: Daemon = daemon_factory()
    client = await daemon.client()
    try:
        cid = (await client.request("conversation/create", {"cwd": str(daemon.workdir)}))[
            "conversation"
        ]["conversationId"]
        await client.request("files/host", {"conversationId": cid, "terminal": True})
        with pytest.raises(RpcError) as unknown:
            await client.request("files/output", {"requestId": "a" * 32, "output": "hi\n"})
        assert unknown.value.kind == "not_found" and "a" * 32 in unknown.value.message
        with pytest.raises(RpcError) as wrong:
            await client.request("files/output", {"requestId": "a" * 32, "output": 5})
        assert wrong.value.kind == "invalid_params" and wrong.value.data.get("param") == "output"
        # Still serving.
        read = await client.request("conversation/subscribe", {"conversationId": cid})
        assert read["snapshot"] is not None
    finally:
        await client.close()
