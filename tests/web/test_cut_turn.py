"""Continue a turn a crash cut: offered inline on the cut turn's notice and in History only while
that turn is the conversation's last word (elsewhere it could only answer "no turn was cut");
History is laid out like the other panels."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, crash_in_a_shell, header_action, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_continue_only_on_a_cut_turn_inline_and_in_history(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(0))

    cid = crash_in_a_shell(daemon)
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page

    # A conversation with no cut turn: History has Continue, disabled.
    ui.new_conversation()
    ui.send("hello")
    ui.wait_idle()
    header_action(page, "#history-open")
    expect(page.locator("#history-continue")).to_be_disabled()
    # History's controls sit apart, inside a padded panel.
    panel = page.locator("#history-panel")
    assert panel.evaluate("e => parseFloat(getComputedStyle(e).paddingLeft)") >= 8
    export = page.locator("#history-export").bounding_box()
    importer = page.locator("label[for='history-import-file']").bounding_box()
    assert export is not None and importer is not None
    apart = (
        export["x"] + export["width"] <= importer["x"]
        or export["y"] + export["height"] <= importer["y"]
    )
    assert apart, (export, importer)

    # The cut conversation: Continue on its notice and in History; once used, gone from both.
    page.goto(f"{ui.base}/#{cid}")
    ui.wait_online()
    notice = page.locator(".item[data-type='notice']", has_text="The server stopped")
    cont = notice.locator(".continue-cut")
    expect(cont).to_be_visible()
    header_action(page, "#history-open")
    expect(page.locator("#history-continue")).to_be_enabled()
    cont.click()
    # The turn runs again (the demo model repeats its cut call), and nothing offers Continue.
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    expect(cont).to_be_hidden()
    expect(page.locator("#history-continue")).to_be_disabled()
    page.click("#stop")
    ui.wait_idle()
    assert ui.console_errors == []
