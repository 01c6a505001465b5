"""Custom commands from the browser's composer: `/name args` goes out as the daemon expands it
(commands/expand); an unknown name is refused with the daemon's words and the text stays."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.web.conftest import WebUI


def test_the_composer_sends_a_custom_command_expanded(
    daemon_factory: Callable[..., Daemon], ui_factory: Callable[[Daemon], WebUI]
) -> None:
    daemon = daemon_factory(DEFAULT_CONFIG, start=False)
    project = daemon.workdir / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "explain.md").write_text("Explain $ARGUMENTS to a newcomer.\n")
    daemon.start()
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    ui.send("/explain the parser")
    ui.wait_idle()
    sent = ui.items(".item[data-type='user_message']")
    assert any("Explain the parser to a newcomer." in t for t in sent)
    ui.page.fill("#composer-text", "/nope x")
    ui.page.click("#send")
    expect(ui.page.locator("body")).to_contain_text("no custom command /nope")
    expect(ui.page.locator("#composer-text")).to_have_value("/nope x")
