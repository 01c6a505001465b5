"""What the VS Code chat panel restores at a window start (the extension's copy of the panel's
state, chat_view.js): after the conversation it kept was deleted by another client, the picker,
with no error and no draft of the deleted conversation; after a reload sooner than VS Code's
periodic save, the latest conversation and draft, not the older ones VS Code's own copy holds
(test_vscode_panel.py's harness: the page in Chromium, the real bridge and daemon)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from playwright.async_api import expect

from tests.lsp.test_vscode_panel import html, media, open_daemon_panel, pytestmark
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the harness's fixtures, and its skip


async def test_a_deleted_conversation_is_not_restored(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory()
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        await page.click("#new")
        picker = page.locator("#picker")
        await expect(picker).not_to_have_value("")
        cid = await picker.input_value()
        await page.fill("#text", "a draft of a conversation about to go")
        async with asyncio.timeout(20):
            while not (relay.saved or {}).get("drafts", {}).get(cid):  # noqa: ASYNC110 (posted by the page)
                await asyncio.sleep(0.05)

        client = await daemon.client()
        try:
            await client.request("conversation/delete", {"conversationId": cid})
        finally:
            await client.close()
        await page.reload()

        await expect(page.locator("#text")).to_have_value("")
        await expect(picker).to_have_value("")
        await expect(page.locator("#status")).not_to_have_class("error")
        # And the extension's copy no longer holds it (posted by the page as it forgot it).
        async with asyncio.timeout(20):
            while relay.saved.get("cid") is not None:  # noqa: ASYNC110 (posted by the page)
                await asyncio.sleep(0.05)
        assert cid not in relay.saved.get("drafts", {})


# VS Code's own copy of the webview's state, as its periodic save left it: older than the
# extension's (which is written at every change), and handed back at the next load.
STALE_API = """
const stale = sessionStorage.getItem("periodic-save");
if (stale) {
  const made = window.acquireVsCodeApi;
  window.acquireVsCodeApi = () => ({ ...made(), getState: () => JSON.parse(stale) });
}
"""


async def test_a_reload_comes_back_on_the_latest_conversation_not_an_older_saved_one(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory()
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        picker = page.locator("#picker")
        await page.click("#new")
        await expect(picker).not_to_have_value("")
        first = await picker.input_value()
        await page.fill("#text", "draft one")
        async with asyncio.timeout(20):
            while (relay.saved or {}).get("drafts", {}).get(first) != "draft one":  # noqa: ASYNC110 (posted by the page)
                await asyncio.sleep(0.05)
        # VS Code's periodic save happens now, then the user moves on to a new conversation.
        await page.evaluate(
            "s => sessionStorage.setItem('periodic-save', s)", json.dumps(relay.saved)
        )
        await page.add_init_script(STALE_API)
        await page.click("#new")
        await expect(picker).not_to_have_value(first)
        second = await picker.input_value()
        await page.fill("#text", "draft two")
        async with asyncio.timeout(20):
            while (relay.saved or {}).get("drafts", {}).get(second) != "draft two":  # noqa: ASYNC110 (posted by the page)
                await asyncio.sleep(0.05)

        await page.reload()  # sooner than VS Code's next periodic save

        await expect(picker).to_have_value(second)
        await expect(page.locator("#text")).to_have_value("draft two")
