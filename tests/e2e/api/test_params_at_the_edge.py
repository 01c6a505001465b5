"""Params are checked against their method's TypedDict at the server's edge (protocol/validate.py):
a wrong value anywhere in them, nested ones included, is `invalid_params` naming the param and the
path to the value, and the daemon keeps serving."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.client import Client, RpcError
from tests.support.daemon import Daemon


async def _refused(client: Client, method: str, params: dict[str, object]) -> RpcError:
    try:
        await client.request(method, params)
    except RpcError as exc:
        return exc
    raise AssertionError(f"{method} {params} succeeded")


async def test_a_wrong_nested_value_is_invalid_params_naming_its_path(
    daemon: Daemon, tmp_path: Path
) -> None:
    client = await daemon.client()
    try:
        # The client's name must be a string: it was stored as the connection's, whatever it was.
        bad = await _refused(client, "initialize", {"clientInfo": {"name": 3}})
        assert bad.kind == "invalid_params" and bad.data["param"] == "clientInfo"
        assert bad.message == '"clientInfo.name" must be a string'

        cid = (await client.request("conversation/create", {"cwd": str(tmp_path)}))["conversation"][
            "conversationId"
        ]
        bad = await _refused(
            client, "input/send", {"conversationId": cid, "text": "hi", "images": ["not one"]}
        )
        assert bad.kind == "invalid_params" and bad.data["param"] == "images"
        assert bad.message == '"images[0]" must be an object'

        bad = await _refused(client, "conversation/list", {"archived": "yes"})
        assert bad.kind == "invalid_params" and bad.message == '"archived" must be true or false'
        bad = await _refused(client, "input/send", {"conversationId": cid, "mode": "later"})
        assert (bad.kind, bad.data["param"]) == ("invalid_params", "mode")
        assert bad.message == '"mode" must be one of steer, queue, jump'
        # A malformed id still names nothing (not_found), as before the check.
        bad = await _refused(client, "conversation/read", {"conversationId": "../x"})
        assert bad.kind == "not_found"

        # Nothing was sent, and the daemon still serves: a good send goes through.
        sent = await client.request("input/send", {"conversationId": cid, "text": "hello"})
        assert sent["disposition"] in ("started", "queued")
    finally:
        await client.close()
