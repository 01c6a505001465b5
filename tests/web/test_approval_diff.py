"""The browser's approval card shows what a write would change, as a diff, before the user
answers (docs/protocol.md, approval/requested `diffs`); a shell call's card shows none. Real
daemon, real Chromium, demo model (`call: write_file {...}`), `approval = "always"`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI
from tests.web.test_approvals import ASKING_CONFIG, card, pending_card

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_a_write_card_shows_the_diff_and_a_shell_card_none(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(ASKING_CONFIG)
    notes = Path(daemon.workdir) / "notes.txt"
    notes.write_text("keep\nold <b>line</b>\n")
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    arguments = {"path": "notes.txt", "content": "keep\nnew line\n"}
    ui.send(f"call: write_file {json.dumps(arguments)}")
    diffs = pending_card(ui.page).locator(".approval-diffs")
    expect(diffs.locator(".diff-name")).to_have_text(f"changed {notes.resolve()}")
    # The file's text is shown as text, never as markup.
    expect(diffs.locator(".diff-del")).to_have_text("-old <b>line</b>")
    expect(diffs.locator(".diff-add")).to_have_text("+new line")
    pending_card(ui.page).locator(".approval-allow").click()
    expect(card(ui.page).locator(".approval-outcome")).to_have_text("Allowed once")
    ui.wait_idle()
    assert notes.read_text() == "keep\nnew line\n"

    ui.send("run: echo hi")
    expect(pending_card(ui.page)).to_have_count(1)
    expect(pending_card(ui.page).locator(".approval-diffs")).to_have_count(0)
    assert ui.console_errors == []
