"""The web UI at every width from a small phone to a large monitor (320–2560 px): nothing wider
than the viewport, every header action reachable and clickable (in the actions menu when the
header has no room for them), and axe-core finds no serious or critical violation in any view,
light or dark.

One daemon and one browser context for the module; the widths are looped inside each test so
the set stays fast."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.web.conftest import WebUI

WIDTHS = (320, 390, 768, 834, 1024, 1400, 2560)
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
HEADER_ACTIONS = ("#change-agent", "#change-model", "#rename", "#archive", "#delete")
# Scrollers meant to scroll sideways (code, tables, tool output): what is inside may be wider.
SCROLLERS = "pre, table, .tool-output, .part-text, .context-json"

# A long model name: the header's buttons name it, so they need more room than the words alone.
CONFIG = """
[models.demo-with-a-rather-long-model-name]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo-with-a-rather-long-model-name"
"""

OVERFLOW_JS = """
([scrollers]) => {
  const vw = document.documentElement.clientWidth;
  const name = (el) => `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join(".")}`;
  const bad = [];
  const page = document.scrollingElement.scrollWidth;
  if (page > vw) bad.push(`page scrolls sideways: ${page}`);
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest(scrollers) && !el.matches(scrollers)) continue;
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue; // nothing to see (the screen-reader-only texts)
    if (r.right > vw + 0.5 || r.left < -0.5) {
      bad.push(`${name(el)} ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
    // A box that scrolls sideways without being meant to (a cut-off header, a toolbar).
    const sideways = ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
    if (sideways && !el.matches(scrollers) && el.scrollWidth > el.clientWidth + 1) {
      bad.push(`${name(el)} scrolls sideways`);
    }
  }
  return bad.slice(0, 8);
}
"""


@pytest.fixture(scope="module")
def wide_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    daemon = make_daemon(tmp_path_factory.mktemp("widths"), CONFIG)
    daemon.start()
    yield daemon
    daemon.stop()
    stop_any_server(daemon)


@pytest.fixture(scope="module")
def wide_context(browser: Browser) -> Iterator[BrowserContext]:
    # axe is injected as a script, which the daemon's CSP (rightly) refuses: bypass it here only.
    context = browser.new_context(viewport={"width": 1200, "height": 800}, bypass_csp=True)
    context.set_default_timeout(10_000)
    yield context
    context.close()


@pytest.fixture(scope="module")
def ui(wide_daemon: Daemon, wide_context: BrowserContext) -> WebUI:
    """A conversation with some of everything: markdown with a long code line, a table, a tool
    call and its output, a plan; the daemon shell's command keeps the last turn running."""
    ui = WebUI(wide_context.new_page(), wide_daemon)
    ui.login()
    ui.new_conversation()
    ui.send("call: update_plan " + json.dumps({"plan": [
        {"step": "Read the code of the module that draws the header", "status": "completed"},
        {"step": "Collapse the actions into a menu", "status": "in_progress"},
        {"step": "Check every width", "status": "pending"},
    ]}))  # fmt: skip
    ui.wait_idle()
    ui.send(
        "Here is `code`, a long line:\n\n```\n"
        + "x = 1; " * 60
        + "\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    )
    ui.wait_idle()
    ui.send("run: echo " + "word " * 80)
    ui.wait_idle()
    return ui


def _resize(page: Page, width: int) -> None:
    """Resize, and wait two frames: the header decides on its menu in a resize observer, which
    runs before the next paint."""
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_function("(w) => document.documentElement.clientWidth === w", arg=width)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _overflow(page: Page) -> list[str]:
    return [str(x) for x in page.evaluate(OVERFLOW_JS, [SCROLLERS])]


def _axe(page: Page, view: str) -> list[dict[str, Any]]:
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
        }"""
    )
    return [{"view": view, **v} for v in result if v["impact"] in ("serious", "critical")]


def _reach_header_actions(page: Page, width: int) -> None:
    """Every header action is on screen and takes a click: directly, or from the menu."""
    toggle = page.locator("#actions-menu")
    for selector in HEADER_ACTIONS:
        if toggle.is_visible():
            if toggle.get_attribute("aria-expanded") != "true":
                toggle.click()
            expect(toggle).to_have_attribute("aria-expanded", "true")
        button = page.locator(selector)
        expect(button).to_be_in_viewport(ratio=1)
        button.click(trial=True)  # visible, enabled, not covered: a click would reach it
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (
            selector,
            box,
        )
    if toggle.is_visible():
        page.keyboard.press("Escape")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(page.locator(HEADER_ACTIONS[0])).to_be_hidden()


def test_no_overflow_and_every_header_action_reachable_at_every_width(ui: WebUI) -> None:
    page = ui.page
    problems: dict[str, list[str]] = {}
    collapsed = {}
    for width in WIDTHS:
        _resize(page, width)
        _reach_header_actions(page, width)
        collapsed[width] = page.locator("#actions-menu").is_visible()
        if found := _overflow(page):
            problems[f"{width}"] = found
        # While a turn runs the composer has more in its toolbar (Stop, the send mode).
        ui.send("run: sleep 30")
        expect(page.locator("#stop")).to_be_visible()
        if found := _overflow(page):
            problems[f"{width} running"] = found
        page.click("#stop")
        ui.wait_idle()
    assert problems == {}, json.dumps(problems, indent=1)
    # The menu is for narrow headers only: a large screen shows the actions themselves.
    assert collapsed[320] and collapsed[768] and not collapsed[2560], collapsed


def test_axe_clean_at_every_width_light_and_dark(ui: WebUI) -> None:
    page = ui.page
    found: list[dict[str, Any]] = []
    for width in WIDTHS:
        _resize(page, width)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            found += _axe(page, f"transcript {width} {scheme}")
        # The menu and the drawer look the same at every width they show at: one of each.
        if width in (390, 834):
            page.click("#actions-menu")
            found += _axe(page, f"actions menu {width}")
            page.keyboard.press("Escape")
        if width == 390:
            page.click("#drawer-open")
            found += _axe(page, f"drawer {width}")
            page.keyboard.press("Escape")
    # No conversation open: the start bar, its folder picker, the New form and its picker.
    cid = page.evaluate("() => location.hash.slice(1)")
    page.goto(f"{ui.base}/")
    ui.wait_online()
    for width in (390, 1400):
        _resize(page, width)
        page.click("#start-change")
        expect(page.locator("#dir-picker .picker-use")).to_be_enabled()
        found += _axe(page, f"start picker {width}")
        page.keyboard.press("Escape")
    page.click("#new-conv")
    page.click("#new-browse")
    expect(page.locator("#new-picker .picker-use")).to_be_enabled()
    found += _axe(page, "new form picker 1400")
    page.emulate_media(color_scheme="light")
    page.goto(f"{ui.base}/#{cid}")  # the module's conversation again, for the next test
    ui.wait_online()
    assert found == [], json.dumps(found, indent=1)


def test_phone_folds_the_plan_and_shows_a_message_s_actions_on_tap(
    ui: WebUI, browser: Browser
) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    context.set_default_timeout(10_000)
    try:
        phone = WebUI(context.new_page(), ui.daemon)
        phone.login(ui.page.evaluate("() => location.hash.slice(1)"))
        page = phone.page
        # The plan is folded to its head: the step in progress, one line.
        plan = page.locator("#plan")
        expect(plan.locator(".plan-current")).to_have_text("Collapse the actions into a menu")
        expect(plan.locator(".plan-step").first).to_be_hidden()
        box = plan.bounding_box()
        assert box is not None and box["height"] < 40, box
        toggle = plan.locator(".plan-toggle")
        toggle.tap()
        expect(plan.locator(".plan-step")).to_have_count(3)
        expect(plan.locator(".plan-step").first).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        expect(toggle).to_be_focused()

        # A message's actions are hidden until it is tapped; tapping another moves them there.
        messages = page.locator("#transcript .item[data-type='user_message']")
        first, second = messages.nth(0), messages.nth(1)
        expect(first.locator(".item-actions")).to_be_hidden()
        first.locator(".text").tap()
        expect(first.locator(".item-actions")).to_be_visible()
        first.locator(".act-copy").click(trial=True)
        second.locator(".text").tap()
        expect(second.locator(".item-actions")).to_be_visible()
        expect(first.locator(".item-actions")).to_be_hidden()
        second.locator(".text").tap()
        expect(second.locator(".item-actions")).to_be_hidden()
        # A long press (the context menu a phone opens for it) shows them too.
        first.locator(".text").dispatch_event("contextmenu")
        expect(first.locator(".item-actions")).to_be_visible()
        assert phone.console_errors == []
    finally:
        context.close()


def test_search_snippets_fit_every_width_and_are_axe_clean(ui: WebUI) -> None:
    """The list while searching: each found conversation shows a snippet with its matches marked,
    which wraps within the list at every width and keeps its contrast in both schemes."""
    page = ui.page
    _resize(page, 1400)
    page.fill("#search", "word")
    expect(page.locator("#conv-list .conv-snippet mark").first).to_have_text("word")
    problems: dict[str, list[str]] = {}
    found: list[dict[str, Any]] = []
    for width in WIDTHS:
        _resize(page, width)
        drawer = page.locator("#drawer-open")
        opened = drawer.is_visible() and drawer.get_attribute("aria-expanded") != "true"
        if opened:
            drawer.click()
            expect(drawer).to_have_attribute("aria-expanded", "true")
            page.wait_for_function("() => document.getAnimations().length === 0")  # slid in
        expect(page.locator("#conv-list .conv-snippet").first).to_be_in_viewport()
        if bad := _overflow(page):
            problems[f"{width}"] = bad
        if width in (390, 1400):
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                found += _axe(page, f"search {width} {scheme}")
            page.emulate_media(color_scheme="light")
        if opened:
            page.click("#drawer-close")
            expect(drawer).to_have_attribute("aria-expanded", "false")
    page.fill("#search", "")  # the module's page as the other tests expect it
    expect(page.locator("#conv-list .conv-snippet")).to_have_count(0)
    assert problems == {} and found == [], json.dumps([problems, found], indent=1)
