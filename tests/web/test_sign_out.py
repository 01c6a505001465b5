"""Sign out from the page: one button ends this browser's session; the tab says so, and a reload
does not bring it back (the cookie is refused)."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_sign_out_ends_this_browser_s_session(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory()
    ui = ui_factory(daemon)
    ui.login()
    page = ui.page
    page.click("#sign-out")
    page.wait_for_selector("body[data-connection='unauthorized']")
    expect(page.locator("#banner")).to_contain_text("Signed out")
    page.reload()
    answer = page.evaluate("async () => (await fetch('sessions')).status")
    assert answer in (401, 403), answer
    listed = daemon.cli("web", "--sessions")
    assert "No browser is signed in." in listed.stdout, listed.stdout
