"""In the browser: a conversation whose agent is not configured here, or whose directory is
gone, says so and offers the way out (conversation/setAgent, conversation/setCwd); the agent can
be changed from the header at any time; and a turn a crash cut short shows why it ended."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from openvaala_server.client import Client
from openvaala_server.protocol.payloads import ConversationInfo
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, snapshot_of
from tests.web.conftest import WebUI, crash_in_a_shell, run_async

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]

AGENTS = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.reviewer]
description = "Reviews code"
model = "demo"
"""


def _conversation(daemon: Daemon, text: str, **extra: Any) -> str:
    async def go() -> str:
        client: Client = await daemon.client(reconnect=False)
        try:
            cid = await new_conversation(client, str(daemon.workdir), **extra)
            await client.request(
                "input/send", {"conversationId": cid, "text": text, "mode": "queue"}
            )
            await collect_until(client, lambda n: n["method"] == "turn/ended")
            return cid
        finally:
            await client.close()

    return run_async(go)


def _info(daemon: Daemon, cid: str) -> ConversationInfo:
    async def go() -> ConversationInfo:
        client: Client = await daemon.client(reconnect=False)
        try:
            snap = await snapshot_of(client, cid)
            info = snap["conversation"]
            return info
        finally:
            await client.close()

    return run_async(go)


def test_a_missing_agent_offers_a_picker(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(AGENTS)
    cid = _conversation(daemon, "hello", agent="reviewer")
    daemon.stop()
    daemon.config_path.write_text(AGENTS.split("[agents.reviewer]")[0])
    daemon.start()
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    expect(page.locator("#agent-form")).to_be_visible()
    expect(page.locator("#agent-missing-note")).to_contain_text('"reviewer" is not configured')
    expect(page.locator("#agent-cancel")).to_be_hidden()
    expect(page.locator("#agent-select option")).to_have_count(1)
    page.fill("#composer-text", "still there?")
    page.click("#send")
    expect(page.locator("#errors .error")).to_contain_text("not configured on this machine")
    expect(page.locator("#composer-text")).to_have_value("still there?")  # nothing lost
    page.fill("#composer-text", "")
    page.click("#agent-use")
    expect(page.locator("#agent-form")).to_be_hidden()
    expect(page.locator("#conv-info")).to_contain_text("default")
    info = _info(daemon, cid)
    assert (info["agent"], info["agentAvailable"]) == ("default", True)
    ui.send("run: echo back")
    ui.wait_idle()
    expect(page.locator(".item[data-type='tool_result'] .tool-status")).to_have_text("done")
    assert not ui.console_errors


def test_the_agent_can_be_changed_from_the_header(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(AGENTS)
    cid = _conversation(daemon, "hello")
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    expect(page.locator("#agent-form")).to_be_hidden()
    page.click("#change-agent")
    expect(page.locator("#agent-form")).to_be_visible()
    expect(page.locator("#agent-select option")).to_have_count(2)
    page.select_option("#agent-select", "reviewer")
    page.click("#agent-use")
    expect(page.locator("#agent-form")).to_be_hidden()
    expect(page.locator("#conv-info")).to_contain_text("reviewer")
    assert _info(daemon, cid)["agent"] == "reviewer"
    assert not ui.console_errors


def test_a_missing_directory_can_be_pointed_elsewhere(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(AGENTS)
    cid = _conversation(daemon, "hello")
    moved = tmp_path / "moved"
    shutil.move(daemon.workdir, moved)
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    expect(page.locator("#cwd-form")).to_be_visible()
    expect(page.locator("#cwd-missing-note")).to_contain_text(str(daemon.workdir))
    page.fill("#cwd-input", str(tmp_path / "nowhere"))
    page.click("#cwd-use")
    expect(page.locator("#errors .error")).to_contain_text("does not exist")
    page.fill("#cwd-input", str(moved))
    page.click("#cwd-use")
    expect(page.locator("#cwd-form")).to_be_hidden()
    expect(page.locator("#conv-info")).to_contain_text(str(moved))
    ui.send("run: pwd")
    ui.wait_idle()
    expect(page.locator(".item[data-type='tool_result'] .tool-output")).to_contain_text(str(moved))
    assert not ui.console_errors


def test_a_turn_cut_by_a_crash_shows_why_it_ended(
    daemon_factory: DaemonFactory, ui_factory: UIFactory
) -> None:
    daemon = daemon_factory(AGENTS)
    cid = crash_in_a_shell(daemon)
    ui = ui_factory(daemon)
    ui.login(cid)
    page = ui.page
    result = page.locator(".item[data-type='tool_result']")
    expect(result.locator(".tool-status")).to_have_text("interrupted")
    expect(result.locator(".tool-output")).to_contain_text("server stopped")
    expect(page.locator(".item[data-type='notice']")).to_contain_text("The server stopped")
    expect(page.locator("#composer")).to_have_attribute("data-running", "false")
    assert not ui.console_errors
