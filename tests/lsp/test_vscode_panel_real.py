"""The chat panel in a real VS Code: code-server with editors/vscode installed (the fixtures of
test_vscode_real.py), driven from headless Chromium against the real daemon with the provider
faked at the wire. Opened from the palette, the panel streams a turn in rendered; an approval's
diff opens in VS Code's diff editor and is accepted (a steer sent while it waited reaches the
model), the next one rejected; after a reload of the window the panel resumes the conversation.
Skipped where code-server is not installed (.ci/run installs it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import FrameLocator, Page, expect

from tests.fakes.providers import FakeProvider
from tests.lsp.scripted_writes import ask_always_config, panel_turns, user_texts_sent
from tests.lsp.test_vscode_real import (
    _palette,
    _pick,
    code_server,
    extensions,
    pytestmark,
    workbench,
)
from tests.lsp.vscode_npm import vscode_node_modules
from tests.support.daemon import Daemon

# the fixtures, and the same skip
__all__ = ["code_server", "extensions", "pytestmark", "vscode_node_modules"]


@pytest.fixture
def daemon(daemon_factory: Any, fake_openai: FakeProvider) -> Daemon:
    """The daemon code-server's bridge talks to: every tool call asks first (write_file's diff)."""
    d: Daemon = daemon_factory(config=ask_always_config(fake_openai))
    return d


def _panel(page: Page) -> FrameLocator:
    """The chat panel's document: VS Code nests a webview's page in two iframes."""
    return page.frame_locator("iframe.webview").frame_locator("#active-frame")


@pytest.mark.timeout(300)  # npm install, code-server and Chromium on a loaded machine
async def test_the_chat_panel_in_vscode(
    code_server: str, daemon: Daemon, fake_openai: FakeProvider, tmp_path: Path
) -> None:
    panel_turns(fake_openai)
    async with workbench(code_server, tmp_path / "vscode-panel.png") as page:
        await _palette(page, "OpenVaala: Open the Chat Panel")
        panel = _panel(page)
        await panel.locator("#new").click()
        await expect(panel.locator("#picker")).not_to_have_value("", timeout=60_000)
        started = time.monotonic()
        await panel.locator("#text").fill("look around")
        await panel.locator("#text").press("Control+Enter")
        md = panel.locator("article.msg.agent .md")
        await expect(md.locator("h1")).to_have_text("Findings", timeout=60_000)
        await expect(md.locator("code.hljs")).to_contain_text("print", timeout=60_000)
        print(f"send → rendered reply in the panel: {time.monotonic() - started:.2f} s")

        await panel.locator("#text").fill("write accepted.txt")
        await panel.locator("#text").press("Control+Enter")
        card = panel.locator("section.approval").last
        await expect(card.locator("pre.unified")).to_contain_text("+yes", timeout=60_000)
        await card.get_by_role("button", name="Open diff", exact=False).click()
        # VS Code's diff editor, titled with the file and the kind of change.
        tab = page.locator(".tabs-container .tab", has_text="accepted.txt")
        await expect(tab).to_contain_text("proposed", timeout=60_000)
        await panel.locator("#text").fill("and mention the README")
        await panel.locator("#steer").click()
        await expect(panel.locator("#text")).to_have_value("")
        await card.get_by_role("button", name="Accept", exact=True).click()
        await expect(panel.locator("article.msg.agent").last).to_contain_text(
            "wrote it", timeout=60_000
        )
        assert (daemon.workdir / "accepted.txt").read_text() == "yes\n"
        assert "and mention the README" in user_texts_sent(fake_openai)

        await panel.locator("#text").fill("write rejected.txt")
        await panel.locator("#text").press("Control+Enter")
        card = panel.locator("section.approval").last
        await expect(card.locator("pre.unified")).to_contain_text("+no", timeout=60_000)
        await card.get_by_role("button", name="Reject", exact=True).click()
        await expect(card.locator(".outcome")).to_have_text("Rejected", timeout=60_000)
        assert not (daemon.workdir / "rejected.txt").exists()

        # A reload of the window: the panel comes back on the same conversation.
        await page.reload()
        await page.locator(".monaco-workbench").wait_for()
        await _palette(page, "OpenVaala: Open the Chat Panel")
        panel = _panel(page)
        await expect(panel.locator("article.msg.agent").first.locator("h1")).to_have_text(
            "Findings", timeout=60_000
        )
        await expect(panel.locator("article.msg.agent").last).to_contain_text(
            "not written", timeout=60_000
        )

        # The palette's Rewind… acts on the panel's conversation, and the message comes back in
        # the panel's composer (not an input box), on the new conversation.
        before = await panel.locator("#picker").input_value()
        await _palette(page, "OpenVaala: Rewind")
        await _pick(page, "look around")
        # Turns after that message wrote a file: VS Code asks whether to restore it.
        await _palette(page, "Notifications: Show Notifications")
        keep = page.locator(".notifications-center .monaco-button", has_text="Keep files")
        await keep.first.click()
        await expect(panel.locator("#text")).to_have_value("look around", timeout=60_000)
        await expect(panel.locator("#picker")).not_to_have_value(before)
