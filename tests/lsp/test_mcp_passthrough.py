"""MCP resources and prompts through the editor bridge (pytest-lsp, a real daemon, a real
SDK-built MCP server): each server's state reaches the editor as `$/openvaala/mcpStatus` as it
changes, and the editor reads a resource, fills in a prompt and turns a composer's
`/mcp__SERVER__PROMPT …` or `@SERVER:URI` into the message to send (docs/editors.md, "MCP")."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.server.mcp.conftest import daemon_config
from tests.support.daemon import Daemon
from tests.support.errors import error_data


@pytest.mark.timeout(180)
async def test_mcp_status_resources_and_prompts_in_the_editor(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    daemon: Daemon = daemon_factory(
        config=daemon_config(fake_openai, extra="startup_timeout_s = 45\n")
    )
    # The turn calls the server, so it has started (and listed its resources) when it ends.
    fake_openai.enqueue(Reply().tool_call("mcp__t__echo", {"text": "hi"}), Reply().text("ok"))
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        done = await request(client, "openvaala/prompt", {"conversationId": cid, "text": "go"})
        assert done["status"] == "completed"

        # The server's state changes were pushed, without the editor asking.
        ready = await rec.until(
            lambda: [s for s in rec.mcp_status if s["name"] == "t" and s["status"] == "ready"],
            timeout=60,
        )
        assert {"uri": "notes://today", "name": "today"} in ready[-1]["resources"]
        assert [p["name"] for p in ready[-1]["prompts"]] == ["review"]
        assert "starting" in [s["status"] for s in rec.mcp_status if s["name"] == "t"]
        listed = await request(client, "openvaala/mcp/list", {})
        assert [s["status"] for s in listed["servers"]] == ["ready"]

        # The daemon's methods, passed through.
        read = await request(
            client, "openvaala/mcp/readResource", {"server": "t", "uri": "notes://today"}
        )
        assert read == {"text": "Water the ficus at noon."}
        filled = await request(
            client,
            "openvaala/mcp/getPrompt",
            {"server": "t", "name": "review", "arguments": {"file": "app.py"}},
        )
        assert filled == {"text": "Review app.py for bugs, briefly."}

        # The composer's text as the message to send.
        prompt = await request(
            client, "openvaala/mcp/expand", {"text": '/mcp__t__review file="my app.py"'}
        )
        assert prompt["text"] == "Review my app.py for bugs, briefly."
        assert prompt["prompt"] == "t:review"
        mention = await request(
            client, "openvaala/mcp/expand", {"text": "plan @t:notes://today, mail me@home:x"}
        )
        assert mention["text"] == (
            "plan @t:notes://today, mail me@home:x\n\n"
            "```t:notes://today\nWater the ficus at noon.\n```"
        )
        assert mention["attached"] == ["t:notes://today"]
        plain = await request(client, "openvaala/mcp/expand", {"text": "just words"})
        assert plain == {"text": "just words", "attached": []}

        # Errors name what is wrong.
        with pytest.raises(JsonRpcInvalidParams) as malformed:
            await request(client, "openvaala/mcp/expand", {"text": "/mcp__t__review file"})
        assert "arguments are name=value, not 'file'" in malformed.value.message
        with pytest.raises(JsonRpcException) as unknown:
            await request(client, "openvaala/mcp/getPrompt", {"server": "nope", "name": "x"})
        assert error_data(unknown.value)["kind"] == "not_found"
        assert "'nope'" in unknown.value.message
        with pytest.raises(JsonRpcException) as missing:
            await request(client, "openvaala/mcp/expand", {"text": "see @t:notes://nope please"})
        assert error_data(missing.value)["kind"] == "not_available"
        assert "notes://nope" in missing.value.message
    finally:
        await stop_lsp(client)
