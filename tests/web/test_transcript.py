"""A turn seen in the browser as it streams: text, tool call, tool output, final Markdown; two
tabs and a Python client on the same conversation all see the same thing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import collect_until, turn_ended
from tests.web.conftest import WebUI, paced, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def read_items(daemon: Daemon, cid: str) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        client = await daemon.client()
        try:
            params = {"conversationId": cid, "limit": 1000}
            result = await client.request("conversation/read", params)
            return list(result["items"])
        finally:
            await client.close()

    return run_async(go)


def test_a_tool_turn_renders_as_it_streams(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    # Slow enough (5 words x 400 ms) that the answer is still streaming when checked below.
    daemon = daemon_factory(paced(400))
    ui = ui_factory(daemon)
    ui.login()
    ui.screenshot("empty")
    cid = ui.new_conversation()
    page = ui.page
    ui.send("run: echo hi")

    # The user's message, the tool call and its output appear while the turn runs.
    expect(page.locator("#composer")).to_have_attribute("data-running", "true")
    expect(page.locator(".item[data-type='user_message'] .text")).to_have_text("run: echo hi")
    expect(page.locator(".tool-call .tool-args")).to_have_text("echo hi")
    expect(page.locator(".tool-result .tool-output")).to_contain_text("hi")
    # The answer streams: seen unfinished first, then complete.
    streaming = page.locator(".item[data-type='agent_message'][data-status='in_progress']")
    expect(streaming).to_have_count(1)
    expect(page.locator("#stop")).to_be_visible()
    ui.screenshot("streaming")
    ui.wait_idle()
    done = page.locator(".item[data-type='agent_message'][data-status='completed']")
    expect(done).to_have_count(1)
    expect(page.locator(".tool-status")).to_have_text("done")
    # The Markdown code block is rendered as such, and the text is exactly the daemon's.
    expect(done.locator("pre code")).to_contain_text("hi")
    agent = [i for i in read_items(daemon, cid) if i["type"] == "agent_message"]
    assert len(agent) == 1
    assert "It printed" in agent[0]["text"]
    expect(done.locator("p").first).to_have_text("The command finished. It printed:")
    # The sidebar lists the conversation, titled from the first message.
    expect(page.locator(f"#conv-list [data-conversation-id='{cid}'] .conv-title")).to_have_text(
        "run: echo hi"
    )
    ui.screenshot("turn-done")
    assert ui.console_errors == []


def test_two_tabs_stay_identical(daemon_factory: DaemonFactory, ui_factory: UIFactory) -> None:
    daemon = daemon_factory(paced(20))
    one = ui_factory(daemon)
    one.login()
    cid = one.new_conversation()
    two = ui_factory(daemon)
    two.login(cid)
    expect(two.page.locator("#composer-text")).to_be_enabled()
    # The turn can be over before send() returns, so polling tab two for "running" could miss
    # it: record every value the attribute takes from now on, and check what was recorded.
    two.page.evaluate(
        """() => {
            const composer = document.querySelector("#composer");
            window.__running = [composer.dataset.running];
            new MutationObserver((records) => {
                for (const r of records) window.__running.push(r.oldValue);
                window.__running.push(composer.dataset.running);
            }).observe(composer, {
                attributes: true, attributeOldValue: true, attributeFilter: ["data-running"],
            });
        }"""
    )
    one.send("run: echo tabs")
    # The second tab sees the turn while it runs, not only at the end.
    two.page.wait_for_function("() => window.__running.includes('true')")
    assert two.page.evaluate("() => window.__running[0]") == "false"
    one.wait_idle()
    two.wait_idle()
    two.send("think: about tabs")
    # Wait until both tabs have the whole second turn, not merely an idle moment before it.
    for ui in (one, two):
        expect(ui.page.locator("#transcript .item")).to_have_count(7)
        expect(ui.page.locator(".item[data-type='agent_message']").last).to_contain_text("You said")
    one.wait_idle()
    two.wait_idle()
    expect(one.page.locator(".item[data-type='reasoning']")).to_have_count(1)
    # Reasoning is collapsed.
    assert one.page.locator("details.reasoning").get_attribute("open") is None
    first = one.page.locator("#transcript .items").inner_text()
    second = two.page.locator("#transcript .items").inner_text()
    assert first == second
    assert first.count("You said") == 1
    ids = "els => els.map(e => e.dataset.itemId)"
    ids_one = one.page.locator("#transcript .item").evaluate_all(ids)
    ids_two = two.page.locator("#transcript .item").evaluate_all(ids)
    assert ids_one == ids_two
    assert len(ids_one) == 7  # user, call, result, answer, user, reasoning, answer


def test_a_message_from_a_python_client_appears_live(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(paced(10))
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    ui.send("hello from the browser")
    ui.wait_idle()

    async def send() -> None:
        client: Client = await daemon.client()
        try:
            await client.subscribe(cid)
            await client.request(
                "input/send", {"conversationId": cid, "text": "hello from python", "mode": "queue"}
            )
            await collect_until(client, turn_ended())
        finally:
            await client.close()

    run_async(send)
    users = ui.page.locator(".item[data-type='user_message'] .text")
    expect(users).to_have_text(["hello from the browser", "hello from python"])
    expect(ui.page.locator(".item[data-type='agent_message']").last).to_contain_text(
        "You said: “hello from python”"
    )
