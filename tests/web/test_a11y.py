"""Accessibility of the main views, checked by axe-core (vendored in tests/web/vendor): no serious
or critical violation; only status changes are live regions; the tabs follow the ARIA pattern."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]

AXE = Path(__file__).parent / "vendor" / "axe.min.js"


@pytest.fixture
def axe_context(browser: Browser) -> Iterator[BrowserContext]:
    # axe is injected as a script, which the daemon's CSP (rightly) refuses: bypass it here only.
    context = browser.new_context(viewport={"width": 1200, "height": 800}, bypass_csp=True)
    context.set_default_timeout(10_000)
    yield context
    context.close()


def _violations(page: Page, view: str) -> list[dict[str, Any]]:
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
        }"""
    )
    bad = [v for v in result if v["impact"] in ("serious", "critical")]
    return [{"view": view, **v} for v in bad]


def test_main_views_have_no_serious_or_critical_violations(
    daemon_factory: DaemonFactory, axe_context: BrowserContext
) -> None:
    daemon = daemon_factory(paced(0))
    ui = WebUI(axe_context.new_page(), daemon)
    page = ui.page
    ui.login()
    found = _violations(page, "empty")
    page.click("#new-conv")
    found += _violations(page, "new form")
    page.keyboard.press("Escape")
    expect(page.locator("#new-form")).to_be_hidden()
    expect(page.locator("#new-conv")).to_be_focused()
    ui.new_conversation()
    ui.send("hello, with a [link](https://example.com) and `code`")
    ui.wait_idle()
    ui.send("run: echo hi")
    ui.wait_idle()
    ui.send("spawn: say hello")
    ui.wait_idle(timeout=30_000)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found += _violations(page, f"transcript ({scheme})")
    page.locator("#tab-transcript").focus()
    page.keyboard.press("ArrowRight")  # the tab pattern: arrows move and select
    expect(page.locator("#tab-agents")).to_be_focused()
    expect(page.locator("#tab-agents")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#agents")).to_be_visible()
    found += _violations(page, "agents")
    page.keyboard.press("Home")
    expect(page.locator("#tab-transcript")).to_have_attribute("aria-selected", "true")
    page.set_viewport_size({"width": 390, "height": 844})
    page.click("#drawer-open")
    found += _violations(page, "phone drawer")
    assert found == [], json.dumps(found, indent=1)

    # Only status changes are announced: the transcript is no live region.
    live = page.eval_on_selector_all(
        "[aria-live]:not([aria-live='off']), [role='log'], [role='status'], [role='alert']",
        "els => els.map(e => e.id || e.className)",
    )
    assert "transcript" not in live
    assert page.locator("#transcript [aria-live='polite']").count() == 0
    # A skip link is the first thing the keyboard reaches, shown on top of the page while it
    # has the focus, on a phone as on a desktop.
    for width, height in ((390, 844), (1200, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.reload()
        ui.wait_online()
        hash_before = page.evaluate("() => location.hash")
        page.keyboard.press("Tab")
        skip = page.locator(".skip-link")
        expect(skip).to_be_focused()
        expect(skip).to_be_in_viewport(ratio=1)
        on_top = skip.evaluate(
            "(el) => { const r = el.getBoundingClientRect();"
            " const x = r.x + r.width / 2, y = r.y + r.height / 2;"
            " return el.contains(document.elementFromPoint(x, y)); }"
        )
        assert on_top, width
        page.keyboard.press("Enter")
        expect(page.locator("#composer-text")).to_be_focused()
        assert page.evaluate("() => location.hash") == hash_before  # the same conversation
