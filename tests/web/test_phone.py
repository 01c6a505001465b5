"""The web UI on a phone (390×844): the conversation list is a drawer, and everything the
desktop offers (create, search, open, answer a waiting message) is reachable from it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, ViewportSize, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, header_action, paced

DaemonFactory = Callable[..., Daemon]

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Browser) -> Iterator[BrowserContext]:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(10_000)
    yield context
    context.close()


def test_phone_drawer_create_search_open_and_answer(
    daemon_factory: DaemonFactory, phone: BrowserContext
) -> None:
    daemon = daemon_factory(paced(30))
    ui = WebUI(phone.new_page(), daemon)
    page = ui.page
    ui.login()
    sidebar = page.locator("#sidebar")
    expect(sidebar).not_to_be_in_viewport()
    toggle = page.locator("#drawer-open")
    expect(toggle).to_be_visible()

    # Create two conversations from the drawer; opening one closes the drawer.
    for text in ("beta question", "alpha question"):
        toggle.click()
        expect(sidebar).to_be_in_viewport()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        ui.new_conversation()
        expect(sidebar).not_to_be_in_viewport()
        ui.send(text)  # a conversation is listed once it has a message
        ui.wait_idle()
    header_action(page, "#rename")  # a phone's header has them in its menu
    page.fill("#rename-input", "Zebra notes")
    page.keyboard.press("Enter")
    expect(page.locator("#conv-title")).to_have_text("Zebra notes")
    first = page.evaluate("() => location.hash.slice(1)")

    # Search from the drawer and open the other conversation, then come back by search.
    toggle.click()
    page.fill("#search", "zebra")
    expect(page.locator("#conv-list .conv")).to_have_count(1)
    page.fill("#search", "")
    expect(page.locator("#conv-list .conv")).to_have_count(2)
    page.locator("#conv-list .conv:not(.current) .conv-open").click()
    expect(sidebar).not_to_be_in_viewport()
    assert page.evaluate("() => location.hash.slice(1)") != first
    toggle.click()
    page.fill("#search", "zebra")
    page.locator("#conv-list .conv .conv-open").first.click()
    page.wait_for_function("(id) => location.hash.slice(1) === id", arg=first)
    expect(page.locator("#conv-title")).to_have_text("Zebra notes")

    # Escape closes the drawer too.
    toggle.click()
    expect(sidebar).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(sidebar).not_to_be_in_viewport()
    expect(toggle).to_be_focused()

    # A waiting message: queued while a turn runs, then handed to the turn from the phone.
    ui.send("run: sleep 4")  # the turn runs while the phone queues and steers
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    page.select_option("#send-mode", "queue")
    ui.send("and then what")
    row = page.locator("#inbox li.waiting")
    expect(row).to_have_attribute("data-mode", "queue")
    text_box = row.locator(".waiting-text").bounding_box()
    assert text_box is not None and text_box["width"] > 200  # not squeezed to one word
    row.locator(".w-steer").click()
    expect(row).to_have_attribute("data-mode", "steer")

    # The header and the composer leave most of the screen to the transcript.
    header = page.locator("#conv-header").bounding_box()
    composer = page.locator("#composer").bounding_box()
    assert header is not None and composer is not None
    ui.screenshot("phone-waiting")
    assert header["height"] + composer["height"] < PHONE["height"] * 0.33, (header, composer)
    ui.wait_idle(timeout=30_000)
    ui.screenshot("phone-transcript")

    # The agents tab: its buttons keep their words on one line.
    page.locator("#tab-agents").click()
    expect(page.locator("#agents button:visible").first).to_be_visible()
    for button in page.locator("#agents button:visible").all():
        box = button.bounding_box()
        assert box is not None and box["height"] < 40, box
    ui.screenshot("phone-agents")
    assert ui.console_errors == []
