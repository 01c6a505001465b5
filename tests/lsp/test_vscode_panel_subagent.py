"""The VS Code chat panel following a subagent at rest after a cold open (docs/protocol.md,
"Snapshot": its items are not in a snapshot): the panel reads its last page through the
bridge's `openvaala/read` and draws it. Headless Chromium under the panel's own HTML and CSP,
real bridge, real daemon on real store data (tests/lsp/test_vscode_panel.py's harness)."""

from __future__ import annotations

from typing import Any

from playwright.async_api import expect

from tests.lsp.test_vscode_panel import html, media, open_daemon_panel, pytestmark
from tests.support import subagent_history
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the fixtures and the skip, from the panel's tests


async def test_the_panel_pages_a_closed_subagent_in_when_it_is_followed(
    daemon_factory: Any, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory(start=False)
    written = await subagent_history.write(daemon.home, daemon.workdir, "demo")
    daemon.start()
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        await relay._post({"type": "open", "conversationId": written.cid})
        transcript = page.locator("#transcript")
        await expect(transcript).to_contain_text("ROOT-ANSWER")
        await page.locator("#agents button", has_text="(closed)").click()
        await expect(transcript).to_contain_text(written.closed_texts[-1])
        await expect(transcript).to_contain_text(written.closed_texts[-100])
        await expect(transcript).not_to_contain_text("ROOT-ANSWER")
        assert any(r["method"] == "openvaala/read" for r in relay.requests)
