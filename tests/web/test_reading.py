"""Reading a transcript: highlighted code with a copy button, task lists, quotes, readable links
in both colour schemes, long messages folded, reasoning shown while it streams, and subagent
reports rendered as Markdown."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, paced

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

CODE = 'def greet(name):\n    return f"hi {name}"'
ANSWER = (
    "Here is the code:\n\n```python\n"
    + CODE
    + "\n```\n\n- [x] written\n- [ ] tested\n\n> Simple is better than complex.\n\n"
    + "See [the docs](https://example.com/docs).\n\n"
    + "| configuration_key_name | default_value_here | what_it_does_in_a_few_words |\n"
    + "|---|---|---|\n"
    + "| compact_threshold_ratio | zero_point_eight | compacts_the_context_early |\n"
)

# Relative luminance and contrast ratio (WCAG 2.x), against the first opaque background up.
CONTRAST_JS = """(el) => {
  const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let bg = null;
  for (let n = el; n; n = n.parentElement) {
    const c = rgb(getComputedStyle(n).backgroundColor);
    if (c.length < 4 || c[3] > 0) { bg = c; break; }
  }
  const fg = rgb(getComputedStyle(el).color);
  const [a, b] = [lum(fg), lum(bg || [255, 255, 255])].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        fake.default_reply = Reply().text("Noted.")
        yield fake


def _clipboard(page: Page) -> str:
    return str(page.evaluate("() => navigator.clipboard.readText()"))


def test_code_is_highlighted_and_copied_and_markdown_reads_well(
    daemon_factory: DaemonFactory,
    ui_factory: UIFactory,
    fake: FakeProvider,
    context: BrowserContext,
) -> None:
    config = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    daemon = daemon_factory(config)
    fake.enqueue(Reply().text(*[ANSWER[i : i + 40] for i in range(0, len(ANSWER), 40)]))
    ui = ui_factory(daemon)
    ui.login()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=ui.origin)
    ui.new_conversation()
    page = ui.page
    ui.send("show me code")
    ui.wait_idle()
    agent = page.locator(".item[data-type='agent_message'][data-status='completed']")

    block = agent.locator(".code-block")
    expect(block).to_have_count(1)
    expect(block.locator(".code-lang")).to_have_text("python")
    expect(block.locator("code.hljs .hljs-keyword").first).to_have_text("def")
    expect(block.locator("code")).to_have_text(CODE)
    block.locator(".copy-code").click()
    expect(block.locator(".copy-code")).to_have_text("Copied")
    assert _clipboard(page) == CODE

    boxes = agent.locator(".task-box")
    expect(boxes).to_have_count(2)
    expect(agent.locator(".task-box.is-done")).to_have_count(1)
    assert agent.locator("input").count() == 0
    quote = agent.locator("blockquote")
    expect(quote).to_have_text("Simple is better than complex.")
    assert quote.evaluate("e => parseFloat(getComputedStyle(e).borderLeftWidth)") >= 3

    link = agent.locator("a", has_text="the docs")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        ratio = link.evaluate(CONTRAST_JS)
        assert ratio >= 4.5, (scheme, ratio)

    # On a phone a wide table scrolls sideways instead of breaking every character.
    page.set_viewport_size({"width": 390, "height": 844})
    table = agent.locator("table")
    assert table.evaluate("e => e.scrollWidth > e.clientWidth")
    cell = table.locator("td").first.bounding_box()
    assert cell is not None and cell["height"] < 40, cell
    page.set_viewport_size({"width": 1200, "height": 800})

    # A whole message copies as its Markdown source.
    agent.hover()
    agent.locator(".act-copy").click()
    assert _clipboard(page) == ANSWER.strip() or _clipboard(page) == ANSWER

    # A long message of the user's is folded, and unfolds on request.
    long = "\n".join(f"line {n} of a long paste" for n in range(1, 41))
    ui.send(long)
    ui.wait_idle()
    mine = page.locator(".item[data-type='user_message']").last
    text = mine.locator(".text")
    expect(text).to_have_class("text collapsed")
    folded = text.evaluate("e => e.clientHeight < e.scrollHeight")
    assert folded
    toggle = mine.locator(".show-more")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(toggle).to_have_text("Show less")
    assert text.evaluate("e => e.clientHeight >= e.scrollHeight")
    ui.screenshot("reading")
    assert ui.console_errors == []


def test_reasoning_streams_in_view(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(120))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("think: the colour of the sky")
    reasoning = page.locator("#transcript details.reasoning")
    # Open while it streams: its text is readable before the turn is done.
    expect(reasoning).to_have_attribute("open", "")
    expect(reasoning.locator(".text")).to_contain_text("The user asked")
    assert page.locator("#composer").get_attribute("data-running") == "true"
    ui.wait_idle()
    expect(reasoning).not_to_have_attribute("open", "")  # folded once complete
    assert ui.console_errors == []


def test_subagent_reports_are_markdown(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    # Instant: nothing here is read while it streams (three paced replies took 15 s).
    ui = ui_factory(daemon_factory(paced(0)))
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("spawn: say hello")
    report = page.locator(".item[data-type='user_message'].origin-subagent")
    expect(report).to_have_count(1, timeout=30_000)
    expect(report.locator(".markdown code").first).to_have_text("run: ls")
    assert "`" not in report.inner_text()
    ui.wait_idle(timeout=30_000)
    assert ui.console_errors == []
