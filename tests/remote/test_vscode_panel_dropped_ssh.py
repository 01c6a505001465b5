"""The VS Code chat panel over `--remote` when ssh drops mid-turn: the daemon over there never
stopped the turn, so once the bridge is connected again the panel shows it running (not a bare
"reconnected"), then the rest of the reply, then idle; and the bridge's `connected` names the
conversation whose turn goes on, for the extension's status bar and progress (docs/editors.md,
"Notifications (bridge → editor)"). The panel's page in Chromium (the harness of
tests/lsp/test_vscode_panel.py)."""

from __future__ import annotations

from playwright.async_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.lsp.harness import capabilities, start_lsp, stop_lsp
from tests.lsp.test_vscode_panel import html, media, open_panel, pytestmark
from tests.remote.test_editors_remote import here
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd

__all__ = ["html", "media", "pytestmark"]  # the panel harness's fixtures, and its skip


async def test_the_panel_shows_the_turn_still_running_after_ssh_drops(
    client_env: dict[str, str],
    local: Daemon,
    remote: Daemon,
    fake: FakeProvider,
    sshd: Sshd,
    media: str,
    html: str,
) -> None:
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    client, rec, _ = await start_lsp(
        here(local, client_env),
        capabilities("visual-studio-code"),
        root=str(remote.workdir),
        options={"approvals": "plugin", "progress": False},
    )
    try:
        async with open_panel(client, rec, media, html) as (page, _relay):
            status = page.locator("#status")
            await page.click("#new")
            await expect(page.locator("#picker")).not_to_have_value("")
            cid = await page.locator("#picker").input_value()
            await page.fill("#text", "go")
            await page.press("#text", "Control+Enter")
            reply = page.locator("article.msg.agent")
            await expect(reply).to_contain_text("before the drop,")
            await expect(status).to_contain_text("— running")

            seen = len(rec.connection)
            assert sshd.kill_clients() >= 1
            await rec.until(lambda: "connected" in rec.connection[seen:], timeout=60)
            assert rec.connection_params[-1]["running"] == [cid]
            # Still running over there: the panel says so, and that it is back.
            await expect(status).to_contain_text("— running")
            await expect(status).to_contain_text("reconnected")

            gate.open()
            await expect(reply).to_have_count(1)
            await expect(reply).to_contain_text("before the drop, after it.")
            await expect(status).to_contain_text("— idle")
    finally:
        gate.open()
        await stop_lsp(client)
