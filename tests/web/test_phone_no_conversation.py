"""A phone with no conversation open: the header offers none of a conversation's actions (each
would be disabled), neither their row nor the Actions button, and axe finds nothing serious;
once a conversation is open the Actions button is back and its actions work, and going back to
no conversation hides it again (header_menu.js)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, header_action, paced
from tests.web.test_a11y import _violations as axe_violations

DaemonFactory = Callable[..., Daemon]


@pytest.fixture
def phone(browser: Browser) -> Iterator[BrowserContext]:
    # axe is injected as a script, which the daemon's CSP (rightly) refuses: bypass it here only.
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, bypass_csp=True
    )
    context.set_default_timeout(10_000)
    yield context
    context.close()


def test_no_conversation_no_actions_button(
    daemon_factory: DaemonFactory, phone: BrowserContext
) -> None:
    ui = WebUI(phone.new_page(), daemon_factory(paced(0)))
    page = ui.page
    ui.login()
    expect(page.locator("#start-bar")).to_be_visible()  # the page shows no conversation
    expect(page.locator("#actions-menu")).to_be_hidden()
    expect(page.locator("#actions-list")).to_be_hidden()
    expect(page.locator("#rename")).to_be_hidden()
    found = axe_violations(page, "phone, no conversation")

    page.click("#drawer-open")
    ui.new_conversation()
    expect(page.locator("#actions-menu")).to_be_visible()
    header_action(page, "#rename")
    expect(page.locator("#rename-input")).to_be_visible()
    page.keyboard.press("Escape")

    page.goto(f"{ui.base}/")
    ui.wait_online()
    expect(page.locator("#start-bar")).to_be_visible()
    expect(page.locator("#actions-menu")).to_be_hidden()
    assert found == [], json.dumps(found, indent=1)
