"""What a Codex client asks before its first thread is answered with OpenVaala's truth, no
login needed; what OpenVaala does not do is a clear JSON-RPC error, never a hang."""

from __future__ import annotations

import json
from typing import Any

from tests.codex.harness import CodexClient, WebSocketTransport
from tests.support.daemon import Daemon

# The calls the Codex TUI 0.171.0 makes at start-up (found by driving it, docs/codex.md).
STARTUP: list[tuple[str, dict[str, Any] | None]] = [
    ("account/read", {}),
    ("model/list", {"includeHidden": True}),
    ("hooks/list", {"cwds": ["/tmp"]}),
    ("config/read", {"includeLayers": True, "cwd": "."}),
    ("configRequirements/read", None),
    ("collaborationMode/list", {}),
    ("skills/list", {"cwds": ["/tmp"], "forceReload": True}),
    ("mcpServerStatus/list", {}),
    ("account/rateLimits/read", None),
    ("account/bedrock/checkGovCloudRequirements", {}),
    ("app/list", {}),
    ("plugin/list", {}),
    ("experimentalFeature/list", {}),
    ("plugin/installed", {"cwds": ["/tmp"]}),
]


async def test_start_up_calls_are_answered_without_a_login(codex: CodexClient) -> None:
    for method, params in STARTUP:
        await codex.request(method, params)  # each result validated against Codex's schema
    account = await codex.request("account/read", {})
    assert account["account"] is None and account["requiresOpenaiAuth"] is False
    models = (await codex.request("model/list", {}))["data"]
    assert [(m["id"], m["isDefault"]) for m in models] == [("demo", True)]
    modes = (await codex.request("collaborationMode/list", {}))["data"]
    assert [m["name"] for m in modes] == ["default"]  # OpenVaala's agents
    config = (await codex.request("config/read", {}))["config"]
    assert config["model"] == "demo"
    # Opening a thread, the TUI asks for its background terminals: OpenVaala has none.
    thread = (await codex.request("thread/start", {}))["thread"]["id"]
    terminals = await codex.request("thread/backgroundTerminals/list", {"threadId": thread})
    assert terminals["data"] == []


async def test_an_unsupported_method_is_a_clear_error(codex: CodexClient) -> None:
    answer = await codex.call("thread/realtime/start", {"threadId": "x"})
    assert answer["error"]["code"] == -32601
    assert "not supported by OpenVaala" in answer["error"]["message"]
    # The connection keeps serving.
    assert (await codex.request("account/read", {}))["account"] is None


async def test_bad_params_name_what_is_wrong(codex: CodexClient) -> None:
    answer = await codex.call("thread/read", {"threadId": "not-a-thread"})
    assert answer["error"]["code"] == -32602
    assert "threadId" in answer["error"]["message"]
    await codex.send_raw("{not json")
    assert (await codex.request("account/read", {}))["account"] is None


async def test_initialize_comes_first_and_jsonrpc_member_is_optional(daemon: Daemon) -> None:
    client = CodexClient(await WebSocketTransport.open(daemon))
    try:
        answer = await client.call("model/list", {})
        # Codex's own app-server answers this (its code and words).
        assert answer["error"]["code"] == -32600
        assert answer["error"]["message"] == "Not initialized"
        # Codex omits "jsonrpc"; a client that sends it is served too.
        await client.send_raw(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": "i",
                    "method": "initialize",
                    "params": {"clientInfo": {"name": "x", "version": "1"}},
                }
            )
        )
        models = await client.request("model/list", {})
        assert models["data"][0]["id"] == "demo"
    finally:
        await client.close()


async def test_a_second_initialize_is_refused_as_codex_refuses_it(codex: CodexClient) -> None:
    """One handshake per connection: a second `initialize` (or one without `clientInfo`) gets
    what Codex's own app-server answers, and the connection goes on as first initialized."""
    again = await codex.call(
        "initialize",
        {
            "clientInfo": {"name": "again", "title": None, "version": "2"},
            "capabilities": {"optOutNotificationMethods": ["thread/started"]},
        },
    )
    assert again["error"]["code"] == -32600
    assert again["error"]["message"] == "Already initialized"
    assert "result" not in again
    # The first handshake's capabilities hold: thread/started is still sent.
    mark = len(codex.notes)
    thread = (await codex.request("thread/start", {}))["thread"]["id"]
    started = await codex.wait_for("thread/started", after=mark)
    assert started["thread"]["id"] == thread


async def test_initialize_needs_client_info(daemon: Daemon) -> None:
    client = CodexClient(await WebSocketTransport.open(daemon))
    try:
        answer = await client.call("initialize", {"capabilities": None})
        assert answer["error"]["code"] == -32600
        assert answer["error"]["message"] == "Invalid request: missing field `clientInfo`"
        # Not initialized by it: a proper handshake still works.
        await client.initialize()
        assert (await client.request("account/read", {}))["account"] is None
    finally:
        await client.close()


async def test_the_token_host_and_origin_rules_hold(daemon: Daemon) -> None:
    import pytest
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    for headers in ({}, {"Authorization": "Bearer wrong"}):
        with pytest.raises(InvalidStatus) as refused:
            await connect(
                f"ws://{daemon.address}/app-server", additional_headers=headers, proxy=None
            )
        assert refused.value.response.status_code == 401
    good = {"Authorization": f"Bearer {daemon.token}", "Origin": "http://evil.example"}
    with pytest.raises(InvalidStatus) as refused:
        await connect(f"ws://{daemon.address}/app-server", additional_headers=good, proxy=None)
    assert refused.value.response.status_code == 403
