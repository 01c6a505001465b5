"""The VS Code chat panel after the conversation it kept (the extension's copy of the panel's
state, chat_view.js) was deleted by another client: the next window comes back on the picker,
with no error and no draft of the deleted conversation, not on a conversation that is gone
(test_vscode_panel.py's harness: the page in Chromium, the real bridge and daemon)."""

from __future__ import annotations

import asyncio
from typing import Any

from playwright.async_api import expect

from tests.lsp.test_vscode_panel import html, media, open_panel, pytestmark
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the harness's fixtures, and its skip


async def test_a_deleted_conversation_is_not_restored(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory()
    async with open_panel(daemon, media, html) as (page, relay):
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
