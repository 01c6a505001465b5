"""Bad input gets its JSON-RPC error with a stable kind, and the connection keeps working."""

from __future__ import annotations

import orjson
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.support.daemon import Daemon


async def _raw(daemon: Daemon) -> ClientConnection:
    return await connect(
        f"ws://{daemon.address}/ws",
        additional_headers={"Authorization": f"Bearer {daemon.token}"},
        max_size=None,
    )


async def _call(ws: ClientConnection, frame: str | bytes) -> dict:  # type: ignore[type-arg]
    await ws.send(frame)
    return orjson.loads(await ws.recv())  # type: ignore[no-any-return]


def _req(method: str, params: object = None, msg_id: int = 1) -> str:
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}
    ).decode()


async def test_first_request_must_be_initialize(daemon: Daemon) -> None:
    ws = await _raw(daemon)
    reply = await _call(ws, _req("conversation/list"))
    assert reply["error"]["data"]["kind"] == "not_initialized"
    reply = await _call(ws, _req("initialize", {"clientInfo": {"name": "t", "version": "1"}}))
    assert reply["result"]["protocolVersion"] == 1
    assert reply["result"]["serverInfo"]["name"] == "openvaala"
    await ws.close()


@pytest.mark.parametrize(
    ("frame", "code", "kind"),
    [
        ("{not json", -32700, "parse_error"),
        ('[{"jsonrpc":"2.0","id":1,"method":"initialize"}]', -32600, "invalid_request"),
        ('{"jsonrpc":"1.0","id":1,"method":"x"}', -32600, "invalid_request"),
        ('"just a string"', -32600, "invalid_request"),
        ('{"jsonrpc":"2.0","id":7,"method":"no/such"}', -32601, "method_not_found"),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/list","params":[1]}',
            -32602,
            "invalid_params",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/list","params":{"limit":"x"}}',
            -32602,
            "invalid_params",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/create","params":{"cwd":5}}',
            -32602,
            "invalid_params",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/create","params":{"cwd":"relative"}}',
            -32602,
            "invalid_params",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/read","params":{"conversationId":"../x"}}',
            -32001,
            "not_found",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/read","params":{"conversationId":"'
            + "a" * 32
            + '"}}',
            -32001,
            "not_found",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"input/edit","params":{"inputId":"'
            + "b" * 32
            + '","text":"x"}}',
            -32001,
            "not_found",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/list","params":{"cursor":"garbage"}}',
            -32602,
            "invalid_params",
        ),
        (
            '{"jsonrpc":"2.0","id":7,"method":"conversation/fork","params":{}}',
            -32602,
            "invalid_params",
        ),
    ],
)
async def test_bad_input_answers_an_error_and_the_connection_survives(
    daemon: Daemon, frame: str, code: int, kind: str
) -> None:
    ws = await _raw(daemon)
    await _call(ws, _req("initialize"))
    reply = await _call(ws, frame)
    assert reply["error"]["code"] == code
    assert reply["error"]["data"]["kind"] == kind
    assert "Traceback" not in reply["error"]["message"]
    again = await _call(ws, _req("agents/list", msg_id=99))
    assert again["id"] == 99 and again["result"]["agents"][0]["name"] == "default"
    await ws.close()


async def test_oversized_frame_closes_with_1009(daemon: Daemon) -> None:
    ws = await _raw(daemon)
    await _call(ws, _req("initialize"))
    big = _req("input/send", {"text": "x" * (32 * 1024 * 1024 + 10)})
    with pytest.raises(ConnectionClosed) as closed:
        await ws.send(big)
        await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    await ws.close()  # waits for the TCP close, so no socket outlives the test's loop
    # The daemon keeps serving others.
    ws2 = await _raw(daemon)
    assert "result" in await _call(ws2, _req("initialize"))
    await ws2.close()


async def test_binary_frames_are_refused_politely(daemon: Daemon) -> None:
    ws = await _raw(daemon)
    await _call(ws, _req("initialize"))
    reply = await _call(ws, b"\x00\x01")
    assert reply["error"]["data"]["kind"] == "invalid_request"
    await ws.close()
