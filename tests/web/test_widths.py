"""The web UI at every width from a small phone to a large monitor (320–2560 px): nothing wider
than the viewport (nor wider than the box it is drawn in), every header action reachable and
clickable (in the actions menu when the header has no room for them), and axe-core finds no
serious or critical violation in any view, light or dark: the transcript with a plan, a code
block, a table and a subagent's report; a turn waiting on an approval; History; the context
dialog; the Agents tab; the New form; renaming; the agent and model pickers; the actions menu.

One daemon and one browser context for the module; the widths are looped inside each test so
the set stays fast."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.support.events import new_conversation
from tests.web.conftest import WebUI, header_action, run_async

WIDTHS = (320, 390, 768, 834, 1024, 1400, 2560)
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
HEADER_ACTIONS = (
    "#history-open",
    "#jump-start",
    "#jump-date",
    "#change-agent",
    "#change-model",
    "#rename",
    "#archive",
    "#delete",
)
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

[agents.asker]
description = "Asks before every command"
model = "demo-with-a-rather-long-model-name"
approval = "always"
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
    // A box that scrolls sideways without being meant to (a cut-off header, a toolbar), or
    // whose words run out of it (a long id in a message bubble); one that clips on purpose (an
    // ellipsis) is fine.
    const wider = !el.matches(scrollers) && el.clientWidth > 0
      && el.scrollWidth > el.clientWidth + 1;
    const overflow = getComputedStyle(el).overflowX;
    if (wider && overflow === "visible") bad.push(`${name(el)} runs out of its box`);
    if (wider && ["auto", "scroll"].includes(overflow)) bad.push(`${name(el)} scrolls sideways`);
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
    ui.send("spawn: say hello")  # the Agents tab has a subagent; the transcript, its report
    expect(ui.page.locator("#transcript .origin-subagent")).to_have_count(1)
    ui.wait_idle()
    return ui


@pytest.fixture(scope="module")
def asking(ui: WebUI) -> str:
    """A second conversation whose turn waits on the user's approval of a shell command for as
    long as the module runs: the approval card, and the composer of a running turn (Stop)."""

    async def ask() -> str:
        client: Client = await ui.daemon.client(reconnect=False)
        try:
            cid = await new_conversation(client, str(ui.daemon.workdir), agent="asker")
            text = "run: echo " + "approve-me " * 30
            await client.request(
                "input/send", {"conversationId": cid, "text": text, "mode": "queue"}
            )
            return cid
        finally:
            await client.close()

    return run_async(ask)


def _resize(page: Page, width: int) -> None:
    """Resize, and wait two frames: the header decides on its menu in a resize observer, which
    runs before the next paint."""
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_function("(w) => document.documentElement.clientWidth === w", arg=width)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def _overflow(page: Page) -> list[str]:
    return [str(x) for x in page.evaluate(OVERFLOW_JS, [SCROLLERS])]


# The rules whose outcome depends on the colours: all a second colour scheme can change.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def _axe(
    page: Page, view: str, scope: str = "html", rules: list[str] | None = None
) -> list[dict[str, Any]]:
    """axe's serious and critical findings in `scope`: every rule, or only `rules`."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async ([scope, rules]) => {
            const options = {resultTypes: ['violations']};
            if (rules) options.runOnly = {type: 'rule', values: rules};
            const r = await axe.run(scope, options);
            return r.violations.map(v => ({id: v.id, impact: v.impact,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
        }""",
        [scope, rules],
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


def _settle(page: Page) -> None:
    """The pointer away from the messages and every transition done: axe would otherwise read a
    message's actions half faded in (on hover) as too faint."""
    page.mouse.move(0, 0)
    page.wait_for_function(
        "() => document.getAnimations()"
        ".every((a) => a.effect.getComputedTiming().iterations === Infinity)"
    )


def _show(ui: WebUI, cid: str) -> None:
    """Open a conversation (a change of the address's fragment, as a link in the list does)."""
    page = ui.page
    if page.evaluate("() => location.hash.slice(1)") != cid:
        page.evaluate("(id) => { location.hash = id; }", cid)
        expect(page.locator("#composer-text")).to_be_enabled()


def _drawer(page: Page, opened: bool) -> None:
    """On a narrow screen the sidebar is a drawer: open or close it."""
    toggle = page.locator("#drawer-open")
    if toggle.is_visible() and (toggle.get_attribute("aria-expanded") == "true") != opened:
        page.click("#drawer-open" if opened else "#drawer-close")
        expect(toggle).to_have_attribute("aria-expanded", str(opened).lower())


# Each view: how to open and close it, and what axe checks in it: the whole page where the view
# is a page of its own, else the part it adds (the rest is the transcript, checked on its own).
VIEWS: dict[str, tuple[str, str, str]] = {
    # name: (what opens it, what shows it is open, what axe checks)
    "transcript": ("", "#plan .plan-toggle", "html"),
    "approval": ("", "#transcript .approval-pending", "html"),
    "command running": ("run: sleep 30", "#transcript .tool-status[data-status='running']", "html"),
    "history": ("#history-open", "#history-panel h2", "#history-panel"),
    "context dialog": ("#meter", "#context-panel .context-parts", "#context-panel"),
    "agents tab": ("#tab-agents", "#agents li.agent >> nth=1", "html"),
    "new form": ("#new-conv", "#new-form", "#sidebar"),
    "rename": ("#rename", "#rename-input", "#conv-header"),
    "agent picker": ("#change-agent", "#agent-form", "#settings"),
    "model picker": ("#change-model", "#model-form", "#settings"),
    "actions menu": ("#actions-menu", "#actions-list", "#conv-header"),
}


def _open_view(ui: WebUI, view: str, main: str, asking: str) -> bool:
    """Open `view`; False when it does not exist at this width (the menu on a wide screen)."""
    page = ui.page
    opener, shown, _ = VIEWS[view]
    _show(ui, asking if view == "approval" else main)
    if view in ("history", "rename", "agent picker", "model picker"):
        header_action(page, opener)
    elif view == "actions menu":
        if not page.locator(opener).is_visible():
            return False
        page.click(opener)
    elif view == "new form":
        _drawer(page, True)
        page.click(opener)
    elif view == "command running":
        ui.send(opener)
    elif opener:
        page.click(opener)
    expect(page.locator(shown)).to_be_visible()
    return True


def _close_view(ui: WebUI, view: str) -> None:
    page = ui.page
    if view == "history":
        header_action(page, "#history-open")
        expect(page.locator("#history-panel")).to_be_hidden()
    elif view == "agents tab":
        page.click("#tab-transcript")
    elif view == "command running":
        page.click("#stop")
        ui.wait_idle()
    elif view == "new form":
        page.click("#new-cancel")
        _drawer(page, False)
    elif view in ("context dialog", "rename", "agent picker", "model picker", "actions menu"):
        page.keyboard.press("Escape")
        expect(page.locator(VIEWS[view][1])).to_be_hidden()


@pytest.mark.parametrize("width", WIDTHS)
def test_every_view_fits_and_is_axe_clean_light_and_dark(
    ui: WebUI, asking: str, width: int
) -> None:
    """Every view at this width: nothing wider than the screen or its box, the header's actions
    reachable where a conversation shows, and no serious or critical axe finding in light or
    dark."""
    page = ui.page
    main = page.evaluate("() => location.hash.slice(1)")
    _resize(page, width)
    problems: dict[str, list[str]] = {}
    found: list[dict[str, Any]] = []
    try:
        for view in VIEWS:
            if not _open_view(ui, view, main, asking):
                continue
            _settle(page)  # the drawer slid in, a menu dropped down
            if bad := _overflow(page):
                problems[view] = bad
            if view in ("transcript", "approval", "command running"):
                _reach_header_actions(page, width)
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                _settle(page)
                rules = COLOUR_RULES if scheme == "dark" else None
                found += _axe(page, f"{view} {width} {scheme}", VIEWS[view][2], rules)
            page.emulate_media(color_scheme="light")
            _close_view(ui, view)
    finally:
        _show(ui, main)  # the module's conversation again, for the next test
    assert problems == {} and found == [], json.dumps([problems, found], indent=1)


def test_axe_clean_on_the_start_bar_and_the_pickers(ui: WebUI) -> None:
    """No conversation open: the start bar, its folder picker, the New form and its picker."""
    page = ui.page
    found: list[dict[str, Any]] = []
    cid = page.evaluate("() => location.hash.slice(1)")
    page.goto(f"{ui.base}/")
    ui.wait_online()
    try:
        for width in (390, 1400):
            _resize(page, width)
            page.click("#start-change")
            expect(page.locator("#dir-picker .picker-use")).to_be_enabled()
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                found += _axe(page, f"start picker {width} {scheme}")
            page.emulate_media(color_scheme="light")
            page.keyboard.press("Escape")
        page.click("#new-conv")
        page.click("#new-browse")
        expect(page.locator("#new-picker .picker-use")).to_be_enabled()
        found += _axe(page, "new form picker 1400")
    finally:
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
