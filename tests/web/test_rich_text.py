"""What a model writes beyond plain Markdown: a few harmless HTML tags render (<br>, <details>/
<summary>, <kbd>, <sup>/<sub>, without attributes), every other tag stays literal text and
separate HTML blocks stay apart; a link to a refused address (javascript:, data:) is plain
text; code without a language is not coloured by guesswork."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

ANSWER = """Line one<br>line two: press <kbd>Ctrl</kbd>+<kbd>C</kbd>; \
x<sup>2</sup> and H<sub>2</sub>O; <span class="x">a span stays literal</span>; \
<kbd onclick="window.__x=1">k</kbd>.

<details><summary>More</summary>Hidden text</details>

<div>first block</div>

<div>second block</div>

[bad link](javascript:alert(1)), [data link](data:text/html,hi) and [good link](https://example.com).

```
function greet(name) { return "hello " + name; }
```

```js
function greet(name) { return "hello " + name; }
```
"""


def test_safe_html_subset_plain_blocked_links_and_no_guessed_colours(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake_openai: FakeProvider
) -> None:
    fake = fake_openai
    config = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    daemon = daemon_factory(config)
    fake.enqueue(Reply().text(ANSWER))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    ui.send("show me")
    ui.wait_idle()
    page = ui.page
    reply = page.locator(".item[data-type='agent_message'][data-status='completed'] .markdown")
    expect(reply.locator("kbd")).to_have_count(2)
    assert reply.locator("br").count() >= 1
    expect(reply.locator("sup")).to_have_text("2")
    expect(reply.locator("sub")).to_have_text("2")
    details = reply.locator("details")
    expect(details.locator("summary")).to_have_text("More")
    assert details.evaluate("d => !d.open && d.textContent.includes('Hidden text')")
    details.locator("summary").click()
    expect(details).to_have_attribute("open", "")
    # The rest is text: a tag with an attribute (even a safe tag), and any other tag.
    expect(reply).to_contain_text('<span class="x">a span stays literal</span>')
    expect(reply).to_contain_text('<kbd onclick="window.__x=1">k</kbd>')
    assert reply.locator("span.x, [onclick], div:text-is('first block')").count() == 0
    blocks = reply.locator(".raw-html").all_inner_texts()
    assert blocks == ["<div>first block</div>", "<div>second block</div>"], blocks
    # Refused links read as text, the good one is a link.
    expect(reply.get_by_role("link", name="good link")).to_have_attribute(
        "href", "https://example.com"
    )
    for name in ("bad link", "data link"):
        expect(reply.get_by_text(name)).to_be_visible()
        expect(reply.get_by_role("link", name=name)).to_have_count(0)
    # Code without a language stays plain; the tagged block gets its colours.
    untagged, tagged = reply.locator(".code-block").all()
    expect(tagged.locator(".hljs-keyword").first).to_have_text("function")
    assert untagged.locator("[class^='hljs-']").count() == 0
    assert page.evaluate("() => window.__x") is None
    assert ui.console_errors == []
