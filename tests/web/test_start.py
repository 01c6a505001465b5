"""Start by typing: on an empty install the message box is ready, and the first message starts a
conversation in the directory shown above it (the daemon user's home, or a recent one), which
"Change" picks from the daemon's folders; the New form takes `~` and browses the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_first_message_on_an_empty_install_without_typing_a_path(
    daemon_factory: DaemonFactory,
    ui_factory: UIFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "ana"
    (home / "project" / "src").mkdir(parents=True)
    (home / "notes").mkdir()
    monkeypatch.setenv("HOME", str(home))  # the daemon user's home
    daemon = daemon_factory()
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page

    # Nothing to create first: the box is ready and says where the conversation will start.
    expect(page.locator("#composer-text")).to_be_enabled()
    expect(page.locator("#start-dir")).to_have_text(str(home))
    page.fill("#composer-text", "hello from an empty install")
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.hash.length > 1")
    ui.wait_idle()
    expect(page.locator("#transcript .item[data-type='agent_message']")).to_have_count(1)
    expect(page.locator("#conv-info")).to_contain_text(str(home))
    expect(page.locator("#start-bar")).to_be_hidden()
    expect(page.locator("#conv-list .conv")).to_have_count(1)

    # With no conversation open again, the start bar offers the recent directory; Change picks
    # another one from the daemon's folders (the files and hidden ones are not offered).
    page.goto(f"{ui.base}/")
    ui.wait_online()
    expect(page.locator("#start-dir")).to_have_text(str(home))
    page.click("#start-change")
    picker = page.locator("#dir-picker")
    expect(picker.locator(".picker-dir", has_text="project")).to_be_visible()
    expect(picker.locator(".picker-dir", has_text="notes")).to_be_visible()
    picker.locator(".picker-dir", has_text="project").click()
    expect(picker.locator(".picker-dir", has_text="src")).to_be_visible()
    picker.locator(".picker-use").click()
    expect(picker).to_be_hidden()
    expect(page.locator("#start-dir")).to_have_text(str(home / "project"))
    expect(page.locator("#composer-text")).to_be_focused()
    ui.send("now in the project")
    ui.wait_idle()
    expect(page.locator("#conv-info")).to_contain_text(str(home / "project"))

    # A path the daemon cannot use is said in the picker, which stays open.
    page.goto(f"{ui.base}/")
    ui.wait_online()
    page.click("#start-change")
    page.fill("#start-picker-path", "relative/path")
    page.keyboard.press("Enter")
    expect(picker.locator(".form-error")).to_contain_text("absolute")
    page.keyboard.press("Escape")
    expect(picker).to_be_hidden()
    expect(page.locator("#start-change")).to_be_focused()

    # The New form: `~` is the daemon user's home, and Browse… picks like Change.
    page.click("#new-conv")
    page.fill("#new-cwd", "~/notes")
    page.click("#new-create")
    expect(page.locator("#conv-info")).to_contain_text(str(home / "notes"))
    page.click("#new-conv")
    page.fill("#new-cwd", "~")
    page.click("#new-browse")
    page.locator("#new-picker").get_by_role("button", name="project", exact=True).click()
    page.locator("#new-picker .picker-use").click()
    expect(page.locator("#new-cwd")).to_have_value(str(home / "project"))
    page.click("#new-create")
    expect(page.locator("#conv-info")).to_contain_text(str(home / "project"))
    assert ui.console_errors == []
