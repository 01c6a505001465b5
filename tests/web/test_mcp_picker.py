"""MCP resources and prompts from the web composer (mcp_picker.js) in Chromium, against a real
daemon and a real SDK-built server: a resource picked from the list reaches the model with its
text, and a prompt offered for "/" is sent as the server's filled-in prompt."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config, last_user_text
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


@pytest.mark.timeout(180)
def test_attach_a_resource_and_run_a_prompt(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider
) -> None:
    daemon = daemon_factory(daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n"))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("started"))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("start the server")  # a turn's call starts it
    ui.wait_idle(timeout=int(STARTUP_S * 1000))

    # A resource picked from the list: its mention goes in the message, its text to the model.
    fake.enqueue(Reply().text("noted"))
    page.fill("#composer-text", "What is on today?")
    page.click("#mcp-resources-open")
    picked = page.locator("#mcp-resources .mcp-resource[data-uri='notes://today']")
    expect(picked).to_contain_text("@t:notes://today")
    picked.click()
    expect(page.locator("#composer-text")).to_have_value("What is on today? @t:notes://today ")
    page.click("#send")
    expect(page.locator("#composer-text")).to_have_value("")
    ui.wait_idle(timeout=60_000)
    sent = last_user_text(fake)
    assert sent.startswith("What is on today? @t:notes://today")
    assert "```t:notes://today\nWater the ficus at noon.\n```" in sent

    # A prompt offered for "/": picked, its argument filled in, sent as the server's text.
    fake.enqueue(Reply().text("reviewed"))
    page.fill("#composer-text", "/mcp__t")
    offered = page.locator("#mcp-prompts .mcp-prompt[data-command='/mcp__t__review']")
    expect(offered).to_contain_text("Ask for a review of one file.")
    offered.click()
    expect(page.locator("#composer-text")).to_have_value("/mcp__t__review file=")
    page.locator("#composer-text").press_sequentially("app.py")
    page.click("#send")
    expect(page.locator("#composer-text")).to_have_value("")
    ui.wait_idle(timeout=60_000)
    assert last_user_text(fake) == "Review app.py for bugs, briefly."

    # A prompt the server does not have: not sent, the server's reason shown.
    page.fill("#composer-text", "/mcp__t__nope")
    page.click("#send")
    error = page.locator("#errors .error")
    expect(error).to_contain_text("Not sent")
    expect(error).to_contain_text("nope")
    expect(page.locator("#composer-text")).to_have_value("/mcp__t__nope")
    assert len([r for r in fake.requests if r.json.get("messages")]) == 4
    assert not ui.console_errors

    # A page opened once the server is ready (told of no change since) offers its prompts too.
    page.reload()
    expect(page.locator("#composer-text")).to_be_enabled()
    page.locator("#composer-text").press_sequentially("/mcp__t")
    expect(page.locator("#mcp-prompts .mcp-prompt[data-command='/mcp__t__review']")).to_be_visible()

    # The composer's reading of what was typed, as the TUI reads it (mcp_prompts.py).
    read = page.evaluate(PARSE_CHECK)
    assert read["call"] == {
        "server": "docs",
        "name": "review",
        "arguments": {"file": "two words", "n": "1"},
    }
    assert read["other"] is None
    assert "not closed" in read["open"] and "name=value" in read["noValue"]
    assert "expected /mcp__SERVER__PROMPT" in read["noName"]
    assert read["mentions"] == [
        {"server": "t", "uri": "notes://today"},
        {"server": "u", "uri": "a://b"},
    ]
    assert read["fence"] == "````t:x\nhas ``` inside\n````"


PARSE_CHECK = """async () => {
  const M = await import('./static/js/mcp_picker.js');
  const bad = (t) => {
    try { M.parsePromptCommand(t); return null; } catch (e) { return e.message; }
  };
  return {
    call: M.parsePromptCommand('/mcp__docs__review file="two words" n=1'),
    other: M.parsePromptCommand('hello'),
    open: bad('/mcp__docs__review file="open'),
    noValue: bad('/mcp__docs__review file'),
    noName: bad('/mcp__docs'),
    mentions: M.mentions('see @t:notes://today, again @t:notes://today. me@x.org @u:a://b)'),
    fence: M.fenced('t:x', 'has ``` inside'),
  };
}"""
