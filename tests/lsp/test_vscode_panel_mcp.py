"""MCP in the VS Code chat panel's composer (editors/vscode/media/mcp.js, the web UI's
mcp_picker.js), in headless Chromium under the panel's HTML and CSP, against the real bridge,
daemon and an SDK-built MCP server; VS Code's side is played as in test_vscode_panel.py.

The resource picker, opened before the server started, fills in live once the server's state
arrives (`$/openvaala/mcpStatus`); a picked resource goes with the next message as its text; a
prompt offered on "/" is sent as the server's filled-in prompt; a malformed prompt command is
refused with the reason and stays in the composer; a prompt the server is slow to fill in goes
once, to the conversation it was written in, whatever is pressed or opened meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page, expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.harness import capabilities, start_lsp, stop_lsp
from tests.lsp.test_vscode_panel import (  # the panel harness
    Relay,
    html,  # noqa: F401  (a fixture)
    media,  # noqa: F401  (a fixture)
    open_panel,
    pytestmark,  # noqa: F401  (skipped without node or chromium)
)
from tests.server.mcp.conftest import daemon_config, last_user_text
from tests.support.daemon import Daemon


@pytest_asyncio.fixture
async def panel(
    daemon_factory: Any,
    fake_openai: FakeProvider,
    media: str,  # noqa: F811
    html: str,  # noqa: F811
) -> AsyncIterator[tuple[Page, Relay]]:
    config = daemon_config(fake_openai, extra="startup_timeout_s = 45\n")
    daemon: Daemon = daemon_factory(config=config)
    client, rec, _ = await start_lsp(
        daemon, capabilities("visual-studio-code"), options={"approvals": "plugin"}
    )
    try:
        async with open_panel(client, rec, media, html) as opened:
            yield opened
    finally:
        await stop_lsp(client)


@pytest.mark.timeout(180)
async def test_panel_attaches_mcp_resources_and_runs_mcp_prompts(
    panel: tuple[Page, Relay], fake_openai: FakeProvider
) -> None:
    page, relay = panel
    # Before any server started: the picker says none offers resources.
    await page.click("#mcp-resources-open")
    await expect(page.locator("#mcp-resources")).to_contain_text("No ready MCP server")

    # A turn that calls the server starts it; the open list fills in as its state arrives.
    fake_openai.enqueue(Reply().tool_call("mcp__t__echo", {"text": "hi"}), Reply().text("ok"))
    await page.click("#new")
    await expect(page.locator("#picker")).not_to_have_value("")
    await page.fill("#text", "start")
    await page.press("#text", "Control+Enter")
    resource = page.locator("#mcp-resources button.mcp-resource")
    await expect(resource).to_contain_text("@t:notes://today", timeout=60_000)

    # Picked: the mention in the composer, the resource's text sent with the message.
    await page.fill("#text", "plan my day")
    await page.press("#text", "End")
    await resource.click()
    await expect(page.locator("#text")).to_have_value("plan my day @t:notes://today ")
    fake_openai.enqueue(Reply().text("noted"))
    await page.click("#send")
    await expect(page.locator("article.msg.agent").last).to_contain_text("noted")
    sent = last_user_text(fake_openai)
    assert sent.startswith("plan my day @t:notes://today")
    assert "```t:notes://today\nWater the ficus at noon.\n```" in sent

    # "/" offers the prompt; picked, its arguments are asked for; sent, the filled-in prompt.
    await page.fill("#text", "/mcp__t")
    offered = page.locator("#mcp-prompts button.mcp-prompt")
    await expect(offered).to_have_text("/mcp__t__review Ask for a review of one file.")
    await offered.click()
    await expect(page.locator("#text")).to_have_value("/mcp__t__review file=")
    fake_openai.enqueue(Reply().text("reviewed"))
    await page.fill("#text", '/mcp__t__review file="my app.py"')
    await page.press("#text", "Control+Enter")
    await expect(page.locator("article.msg.agent").last).to_contain_text("reviewed")
    assert last_user_text(fake_openai) == "Review my app.py for bugs, briefly."

    # Malformed: refused with the reason; the text stays, nothing is sent.
    asked = len(fake_openai.requests)
    await page.fill("#text", "/mcp__t__review file")
    await page.click("#send")
    await expect(page.locator("#status")).to_contain_text('arguments are name=value, not "file"')
    await expect(page.locator("#text")).to_have_value("/mcp__t__review file")
    assert len(fake_openai.requests) == asked

    # After a reconnection the servers are read again: a server only the old daemon had (told
    # before the connection dropped) is no longer offered.
    ghost = {"name": "ghost", "status": "ready", "tools": [], "resources": [{"uri": "x://old"}]}
    await relay._post({"type": "notification", "method": "$/openvaala/mcpStatus", "params": ghost})
    await page.click("#mcp-resources-open")
    await expect(resource).to_have_count(2)
    await page.click("#mcp-resources-open")  # closed again
    connected = {"state": "connected", "restarted": True}
    await relay._post(
        {"type": "notification", "method": "$/openvaala/connection", "params": connected}
    )
    await page.click("#mcp-resources-open")
    await expect(resource).to_have_text(["@t:notes://today today"])

    # A prompt the server is slow to fill in: Send pressed again and another conversation opened
    # (a draft typed there) while it is read; it goes once, to the conversation it was written
    # in, and the other conversation's draft is kept.
    written_in = await page.locator("#picker").input_value()
    sent_before = sum(r["method"] == "openvaala/send" for r in relay.requests)
    slow = asyncio.Event()
    relay.hold["openvaala/mcp/getPrompt"] = slow
    await page.fill("#text", "/mcp__t__review file=slow.py")
    await page.press("#text", "Control+Enter")
    await asyncio.wait_for(relay.holding.wait(), 30)
    await page.click("#send")
    await page.click("#new")
    await expect(page.locator("#picker")).not_to_have_value(written_in)
    await page.fill("#text", "my draft")
    fake_openai.enqueue(Reply().text("slow reviewed"))
    slow.set()
    await relay.until_asked("openvaala/send", sent_before + 1)
    await expect(page.locator("#text")).to_have_value("my draft")
    await page.select_option("#picker", written_in)
    await expect(page.locator("article.msg.agent").last).to_contain_text("slow reviewed")
    assert last_user_text(fake_openai) == "Review slow.py for bugs, briefly."
    sends = [r["params"] for r in relay.requests if r["method"] == "openvaala/send"]
    assert [s["conversationId"] for s in sends[sent_before:]] == [written_in]
