"""Protocol edges: a frame whose JSON the server cannot use still gets an answer to its own id,
and a cursor the server did not give out is refused, however well-formed."""

from __future__ import annotations

import base64

import orjson
import pytest
from websockets.asyncio.client import connect

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import new_conversation, run_turn


async def test_a_lone_surrogate_is_answered_with_the_request_id(daemon: Daemon) -> None:
    async with connect(
        f"ws://{daemon.address}/ws",
        additional_headers={"Authorization": f"Bearer {daemon.token}"},
    ) as ws:
        frame = '{"jsonrpc":"2.0","id":41,"method":"initialize","params":{"x":"\\ud800"}}'
        await ws.send(frame)
        reply = orjson.loads(await ws.recv())
        assert reply["id"] == 41
        assert reply["error"]["data"]["kind"] == "parse_error"
        assert "surrogate" in reply["error"]["message"]
        # The connection still works.
        await ws.send('{"jsonrpc":"2.0","id":42,"method":"initialize","params":{}}')
        assert orjson.loads(await ws.recv())["id"] == 42


async def test_a_forged_well_formed_cursor_is_invalid_params(daemon: Daemon) -> None:
    client = await daemon.client()
    for _ in range(3):
        await run_turn(client, await new_conversation(client, str(daemon.workdir)), "hi")
    page = await client.request("conversation/list", {"limit": 1})
    given = page["nextCursor"]
    second = await client.request("conversation/list", {"limit": 1, "cursor": given})
    assert len(second["conversations"]) == 1

    forged = base64.urlsafe_b64encode(orjson.dumps(["9999-12-31T00:00:00Z", "f" * 32])).decode()
    tampered = given[:-4] + ("AAAA" if given[-4:] != "AAAA" else "BBBB")
    for cursor in (forged, tampered):
        with pytest.raises(RpcError) as refused:
            await client.request("conversation/list", {"limit": 1, "cursor": cursor})
        assert refused.value.kind == "invalid_params"
        assert error_data(refused.value)["param"] == "cursor"
    await client.close()
