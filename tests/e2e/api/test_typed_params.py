"""Params the typed getters (protocol/params.py) made the handlers read strictly: a missing or
mistyped param is `invalid_params` naming it, never an internal error."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.client import Client, RpcError
from tests.support.daemon import Daemon


async def _error(client: Client, method: str, params: dict[str, object]) -> dict[str, object]:
    try:
        await client.request(method, params)
    except RpcError as exc:
        return {"kind": exc.kind, **exc.data}
    raise AssertionError(f"{method} {params} succeeded")


async def test_send_without_text_or_images_names_text(daemon: Daemon, tmp_path: Path) -> None:
    client = await daemon.client()
    try:
        conv = (await client.request("conversation/create", {"cwd": str(tmp_path)}))["conversation"]
        cid = conv["conversationId"]
        error = await _error(client, "input/send", {"conversationId": cid})
        assert error["kind"] == "invalid_params" and error["param"] == "text", error
        error = await _error(client, "input/send", {"conversationId": cid, "text": None})
        assert error["kind"] == "invalid_params" and error["param"] == "text", error
        # The daemon still serves: a good send goes through.
        sent = await client.request("input/send", {"conversationId": cid, "text": "hello"})
        assert sent["disposition"] in ("started", "queued")
        error = await _error(client, "initialize", {"clientInfo": ["not", "an", "object"]})
        assert error["kind"] == "invalid_params" and error["param"] == "clientInfo", error
    finally:
        await client.close()
