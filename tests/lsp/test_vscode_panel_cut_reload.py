"""A reply a daemon crash cut short survives what redraws the VS Code chat panel from a snapshot
that lacks it (docs/editors.md, "The chat panel"): another conversation opened and this one
opened again, and a reload of the window. No daemon saved the reply, so the panel keeps it, per
conversation, in the state the extension saves (bounded and checked: saved_state.js,
test_vscode_saved_state.py). The page in Chromium, the real bridge and daemons, the provider
faked at the wire (test_vscode_panel.py's harness)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.scripted_writes import enqueue_for_root
from tests.lsp.test_vscode_panel import html, media, open_daemon_panel, pytestmark
from tests.lsp.test_vscode_panel_crash import _config
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the harness's fixtures, and its skip


async def shows_the_cut_reply(page: Page) -> None:
    reply = page.locator("article.msg.agent")
    await expect(reply).to_have_count(1)
    await expect(reply.first).to_contain_text("The first half of an answer")
    await expect(reply.first.locator(".cut")).to_have_text("interrupted")
    order = await page.evaluate(
        """() => [...document.querySelectorAll('#transcript > *')].map(e => e.className)"""
    )
    assert [c.split()[0] for c in order if c.split()[0] in ("msg", "notice")] == [
        "msg",  # the user's message
        "msg",  # the cut reply
        "notice",  # the new daemon's note of the crash
    ]


async def test_the_cut_reply_survives_a_switch_and_a_reload(
    daemon_factory: Any, fake_openai: FakeProvider, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory(config=_config(fake_openai))
    enqueue_for_root(fake_openai, Reply().text("The first half ", "of an answer").hang())
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        picker = page.locator("#picker")
        await page.click("#new")
        await expect(picker).not_to_have_value("")
        cid = await picker.input_value()
        await page.fill("#text", "tell me")
        await page.press("#text", "Control+Enter")
        await expect(page.locator("article.msg.agent")).to_contain_text("of an answer")
        daemon.kill()
        rec = relay.rec
        await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=60)
        await shows_the_cut_reply(page)

        # Another conversation, then this one again: redrawn from the new daemon's snapshot.
        await page.click("#new")
        await expect(picker).not_to_have_value(cid)
        await expect(page.locator("article.msg")).to_have_count(0)
        await page.select_option("#picker", cid)
        await shows_the_cut_reply(page)

        # A reload of the window (the webview's own state gone): from the extension's copy.
        await page.reload()
        await expect(picker).to_have_value(cid)
        await shows_the_cut_reply(page)
