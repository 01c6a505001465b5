"""Context in the web UI, in Chromium against a real daemon (docs/protocol.md "Context"): the
meter opens the trace of the next request and copies its body, messages are pinned, an opened
summary lists what it replaced and jumps there, the meter counts down to a refresh summary."""

from __future__ import annotations

import json
from collections.abc import Callable

from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def test_trace_copy_pin_gauge_and_what_a_summary_replaced(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake_openai: FakeProvider
) -> None:
    config = (
        fake_openai.config_toml("fake", context_window=100_000, max_output_tokens=1000)
        + '\n[agents.default]\ndescription = "d"\nmodel = "fake"\ntools = ["read_file"]\n'
        + "refresh_every = 5\n"
    )
    fake_openai.enqueue(Reply().text("first answer"), Reply().text("second answer"))
    fake_openai.enqueue(Reply().text("THE SUMMARY"))
    daemon = daemon_factory(config)
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    ui.send("hello there")
    ui.wait_idle()
    ui.send("how are you")
    ui.wait_idle()
    # The gauge: replies left before the refresh summary.
    expect(page.locator("#meter-source")).to_contain_text("refresh in 3")

    # Pin the first message: marked, and its button now unpins.
    first = page.locator(".item[data-type='user_message']").first
    first.locator(".act-pin").click()
    expect(first.locator(".act-pin")).to_have_text("Unpin")
    assert "is-pinned" in (first.get_attribute("class") or "")

    page.locator("#compact").click()
    marker = page.locator(".item[data-type='summary']")
    expect(marker).to_have_count(1)

    # The meter opens the trace: its parts, their tokens and total, and what was left out.
    page.locator("#meter").click()
    panel = page.locator("#context-panel")
    expect(panel).to_be_visible()
    kinds = panel.locator(".context-parts tr[data-kind]")
    expect(kinds).to_have_count(6)
    assert [k.get_attribute("data-kind") for k in kinds.all()] == [
        "base",
        "environment",
        "summary",
        "pinned",
        "history",
        "tools",
    ]
    tokens = [int(t.replace(",", "")) for t in panel.locator(".part-tokens").all_inner_texts()]
    assert sum(tokens[:-1]) == tokens[-1]
    # The dialog says the meter's figure, and why the table's total is another one.
    meter = page.locator("#meter").get_attribute("title") or ""
    used = meter.split("Context: ", 1)[1].split(" of ", 1)[0]
    expect(panel.locator(".context-gauge")).to_contain_text(f"Meter: {used} of 100,000")
    if int(used.replace(",", "")) != tokens[-1]:
        note = panel.locator(".context-note")
        expect(note).to_contain_text(f"meter's {used}")
        expect(note).to_contain_text(f"({tokens[-1]:,})")
    expect(panel.locator(".context-omitted")).to_contain_text("replaced by the summary")
    # Copy as JSON: the exact body for the provider (shown as well, should the clipboard refuse).
    panel.locator(".context-copy").click()
    body = json.loads(panel.locator(".context-json").inner_text())
    assert body["model"] == "fake-model"
    assert [m["content"] for m in body["messages"][1:]][:2] == [
        "Summary of the earlier conversation (it replaces the messages it summarizes):\n\n"
        "THE SUMMARY",
        "hello there",
    ]
    panel.locator(".context-close").click()
    expect(panel).to_be_hidden()

    # Opening the summary lists what it replaced; the button jumps to the first of them.
    marker.locator("summary").click()
    replaced = marker.locator(".replaced")
    expect(replaced).to_contain_text("It replaced 2 items")
    expect(replaced.locator("li")).to_have_text(["Agent: first answer", "You: how are you"])
    replaced.locator(".replaced-jump").click()
    jumped = page.locator(".item.is-jumped")
    expect(jumped).to_have_count(1)
    expect(jumped).to_have_attribute("data-type", "agent_message")
    expect(jumped).to_contain_text("first answer")
    assert not ui.console_errors, ui.console_errors
