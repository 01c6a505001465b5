"""The web UI's MCP panel follows `mcp/statusChanged` (docs/protocol.md) in Chromium, against a
real daemon and a real SDK-built server that starts slowly: an open panel shows the server
starting, then ready with its tools, with nobody pressing Refresh."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, gated_config
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


@pytest.mark.timeout(180)
def test_the_open_mcp_panel_shows_a_slow_server_start(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"  # the server answers once it exists
    daemon = daemon_factory(gated_config(fake, gate))
    fake.enqueue(Reply().text("hello"))
    ui = ui_factory(daemon)
    ui.login()
    ui.new_conversation()
    page = ui.page
    page.click("#mcp-open")
    server = page.locator("#mcp-panel .mcp-server[data-name='t']")
    expect(server).to_have_attribute("data-status", "stopped")

    ui.send("hi")  # the turn starts the server in the background
    expect(server).to_have_attribute("data-status", "starting", timeout=60_000)
    gate.write_text("go")
    expect(server).to_have_attribute("data-status", "ready", timeout=int(STARTUP_S * 1000))
    expect(server).to_contain_text("grow")
    assert not ui.console_errors
