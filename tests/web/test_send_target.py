"""A message goes to the conversation it was written in, once, even when an MCP server is slow to
fill in its prompt: the web composer waits for `mcp/getPrompt` before `input/send`, and the user
may open another conversation, or press Enter again, meanwhile. In Chromium against a real daemon
and a real SDK-built server; the browser's `mcp/getPrompt` frame is held to make the server slow."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, WebSocketRoute

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def _user_texts(daemon: Daemon, cid: str) -> list[str]:
    async def read() -> list[str]:
        client: Client = await daemon.client()
        try:
            page = await client.request("conversation/read", {"conversationId": cid})
            return [str(i.get("text")) for i in page["items"] if i["type"] == "user_message"]
        finally:
            await client.close()

    return run_async(read)


@pytest.mark.timeout(180)
def test_a_slow_prompt_is_sent_once_to_the_conversation_it_was_written_in(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider
) -> None:
    daemon = daemon_factory(daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n"))
    fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "start"}), Reply().text("started"))
    ui = ui_factory(daemon)
    page = ui.page
    held: list[str] = []
    routes: list[WebSocketRoute] = []

    def hold_prompts(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        routes.append(server)

        def from_page(message: str | bytes) -> None:
            if isinstance(message, str) and json.loads(message).get("method") == "mcp/getPrompt":
                held.append(message)  # the server "thinks" until the test lets it answer
            else:
                server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)

    page.route_web_socket(re.compile(r".*"), hold_prompts)
    ui.login()
    first = ui.new_conversation()
    ui.send("start the server")  # a turn's call starts it
    ui.wait_idle(timeout=int(STARTUP_S * 1000))

    fake.enqueue(Reply().text("reviewed"))
    page.fill("#composer-text", "/mcp__t__review file=app.py")
    page.locator("#composer-text").press("Enter")
    until(page, lambda: bool(held))  # the page asked, and the server is "slow"
    page.locator("#composer-text").press("Enter")  # again, while the prompt is still coming
    second = ui.new_conversation()  # and the user moves on before it came
    assert second != first
    assert len(held) == 1  # Enter while it was on its way asked for nothing more

    for message in held:
        routes[-1].send(message)
    held.clear()
    until(page, lambda: len(_user_texts(daemon, first)) > 1)
    ui.wait_idle()
    assert _user_texts(daemon, first) == ["start the server", "Review app.py for bugs, briefly."]
    assert _user_texts(daemon, second) == []


def until(page: Page, condition: Callable[[], bool], timeout_s: float = 30) -> None:
    """Wait for `condition`, letting Playwright deliver the socket's messages meanwhile."""
    for _ in range(int(timeout_s * 10)):
        if condition():
            return
        page.wait_for_timeout(100)
    raise AssertionError("the condition never held")
