"""The sidebar's head: the product's name shows whole beside its buttons at desktop widths and in
the drawer of a phone or a tablet, also when the daemon's machine has a long name (that name
gives way instead), and nothing in the head runs out of the sidebar."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.web.conftest import WebUI, paced

# What the head shows: whether the name is cut (an ellipsis), and what runs past the sidebar.
HEAD_JS = """
() => {
  const brand = document.querySelector("#sidebar .brand");
  const side = document.querySelector("#sidebar").getBoundingClientRect();
  const out = [...document.querySelectorAll("#sidebar .side-head *")]
    .filter((el) => el.checkVisibility())
    .filter((el) => {
      const r = el.getBoundingClientRect();
      return r.left < side.left - 0.5 || r.right > side.right + 0.5;
    })
    .map((el) => el.id || el.className);
  return {cut: brand.scrollWidth > brand.clientWidth, width: brand.clientWidth, out};
}
"""
LONG_MACHINE = "on build-runner-0042.eu-west.example.com"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    daemon = make_daemon(tmp_path_factory.mktemp("brand"), paced(0))
    daemon.start()
    yield daemon
    daemon.stop()
    stop_any_server(daemon)


@pytest.fixture(scope="module")
def page(daemon: Daemon, browser: Browser) -> Iterator[Page]:
    context: BrowserContext = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(10_000)
    ui = WebUI(context.new_page(), daemon)
    ui.login()
    yield ui.page
    context.close()


def _head(page: Page, width: int, machine: str | None = None) -> dict[str, Any]:
    page.set_viewport_size({"width": width, "height": 800})
    page.wait_for_function("(w) => document.documentElement.clientWidth === w", arg=width)
    if machine is not None:  # what a daemon on a machine with a long host name shows
        page.evaluate("(m) => { document.querySelector('#machine').textContent = m; }", machine)
    return dict(page.evaluate(HEAD_JS))


@pytest.mark.parametrize("width", [1000, 1100, 1280])
def test_the_name_shows_whole_at_desktop_widths(page: Page, width: int) -> None:
    expect(page.locator("#sidebar .brand")).to_have_text("OpenVaala")
    expect(page.locator("#machine")).to_be_visible()  # the daemon's host name beside it
    shown = _head(page, width)
    assert not shown["cut"] and shown["out"] == [], shown
    shown = _head(page, width, LONG_MACHINE)
    assert not shown["cut"] and shown["out"] == [], shown


@pytest.mark.parametrize("width", [320, 390, 768, 834])
def test_the_name_shows_whole_and_nothing_runs_out_of_the_drawer(page: Page, width: int) -> None:
    _head(page, width)
    toggle = page.locator("#drawer-open")
    if toggle.is_visible():
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        page.wait_for_function("() => document.getAnimations().length === 0")  # slid in
    try:
        shown = _head(page, width, LONG_MACHINE)
        assert not shown["cut"] and shown["out"] == [], shown
    finally:
        if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "true":
            page.click("#drawer-close")
            expect(toggle).to_have_attribute("aria-expanded", "false")
