"""The VS Code chat panel through a daemon crash: the daemon is killed (SIGKILL) while a reply
streams into the panel; the bridge starts a new daemon (at once, with no grace period, when the
crash freed the lock: tests/client/test_crash_recovery.py), and once it is connected again the
panel still shows the words it had (marked interrupted, before the new daemon's note of the
crash), and a next message is answered. The panel's page in Chromium under chat_view.js's HTML,
the real bridge and daemons, the provider faked at the wire (test_vscode_panel.py's harness)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from playwright.async_api import expect

from openvaala_server.discovery import read_lock
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.lsp.scripted_writes import enqueue_for_root
from tests.lsp.test_vscode_panel import html, media, open_daemon_panel, pytestmark
from tests.support.daemon import Daemon

__all__ = ["html", "media", "pytestmark"]  # the harness's fixtures, and its skip


def _config(fake: FakeProvider) -> str:
    # Port 0: the daemon the bridge starts after the crash (`openvaala serve start`) takes a
    # free port.
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'
        + 'instructions = "ROLE: root"\n\n[server]\nport = 0\n'
    )


async def test_the_panel_reconnects_after_a_crash_and_keeps_the_cut_reply(
    daemon_factory: Any, fake_openai: FakeProvider, media: str, html: str
) -> None:
    daemon: Daemon = daemon_factory(config=_config(fake_openai))
    enqueue_for_root(
        fake_openai,
        Reply().text("The first half ", "of an answer").hang(),
        Reply().text("answered after the crash"),
    )
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        await page.click("#new")
        await expect(page.locator("#picker")).not_to_have_value("")
        await page.fill("#text", "tell me")
        await page.press("#text", "Control+Enter")
        reply = page.locator("article.msg.agent")
        await expect(reply).to_contain_text("The first half of an answer")

        daemon.kill()
        killed = time.monotonic()
        rec = relay.rec
        await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=60)
        print(f"panel: crash → reconnected {time.monotonic() - killed:.2f} s")

        # The streamed words are still there, marked interrupted, before the crash's note.
        await expect(reply).to_have_count(1)
        await expect(reply.first).to_contain_text("The first half of an answer")
        await expect(reply.first.locator(".cut")).to_have_text("interrupted")
        notice = page.locator("#transcript .notice.server_stopped")
        await expect(notice).to_have_count(1)
        order = await page.evaluate(
            """() => [...document.querySelectorAll('#transcript > *')].map(e => e.className)"""
        )
        assert [c.split()[0] for c in order if c.split()[0] in ("msg", "notice")] == [
            "msg",  # the user's message
            "msg",  # the cut reply
            "notice",  # the new daemon's note of the crash
        ]

        # The new daemon serves the conversation: the next message is answered.
        await page.fill("#text", "go on")
        await page.press("#text", "Control+Enter")
        await expect(reply.last).to_contain_text("answered after the crash", timeout=30_000)


async def test_a_second_crash_keeps_the_reply_the_first_one_cut(
    daemon_factory: Any, fake_openai: FakeProvider, media: str, html: str
) -> None:
    # The new daemon never had the words the first crash cut (only this page has them): a
    # second crash, mid-reply again, must not drop them when the panel redraws from the third
    # daemon's snapshot; both cut replies stay, each marked, in order.
    daemon: Daemon = daemon_factory(config=_config(fake_openai))
    enqueue_for_root(
        fake_openai,
        Reply().text("The first cut ", "reply").hang(),
        Reply().text("The second cut ", "reply").hang(),
        Reply().text("answered at last"),
    )
    async with open_daemon_panel(daemon, media, html) as (page, relay):
        rec = relay.rec
        reply = page.locator("article.msg.agent")
        await page.click("#new")
        await expect(page.locator("#picker")).not_to_have_value("")
        await page.fill("#text", "one")
        await page.press("#text", "Control+Enter")
        await expect(reply).to_contain_text("The first cut reply")
        daemon.kill()
        await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=60)
        await expect(reply.first.locator(".cut")).to_have_text("interrupted")

        await page.fill("#text", "two")
        await page.press("#text", "Control+Enter")
        await expect(reply).to_have_count(2)
        await expect(reply.last).to_contain_text("The second cut reply")
        # The daemon the bridge started after the first crash.
        info = read_lock(daemon.data_dir.lock_path)
        assert info is not None and info.pid is not None
        seen = len(rec.connection)
        os.kill(info.pid, signal.SIGKILL)
        await rec.until(
            lambda: rec.connection[seen:][-2:] == ["reconnecting", "connected"], timeout=60
        )

        await expect(page.locator("#transcript .notice.server_stopped")).to_have_count(2)
        await expect(reply).to_have_count(2)
        await expect(reply.first).to_contain_text("The first cut reply")
        await expect(reply.last).to_contain_text("The second cut reply")
        await expect(page.locator("article.msg.agent .cut")).to_have_count(2)
        order = await page.evaluate(
            """() => [...document.querySelectorAll('#transcript > *')].map(e => e.className)"""
        )
        assert [c.split()[0] for c in order if c.split()[0] in ("msg", "notice")] == [
            "msg",
            "msg",
            "notice",
            "msg",
            "msg",
            "notice",
        ]
