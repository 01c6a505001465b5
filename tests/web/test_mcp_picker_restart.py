"""The MCP servers the web page offers after the daemon died and started again with another MCP
configuration (mcp_picker.js, the sidebar's MCP panel): the page reconnects and offers the new
daemon's servers, never the old daemon's (no `mcp/statusChanged` took those back: the old daemon
died), in the composer's prompts and resources as in the MCP panel left open. Real daemon
restarted on the same address, real SDK-built MCP server, Chromium; the model is faked at the
wire."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config
from tests.support.daemon import Daemon
from tests.web.conftest import WebUI

DaemonFactory = Callable[..., Daemon]
UIFactory = Callable[[Daemon], WebUI]


def named(config: str, name: str) -> str:
    """The test server under another name (`t` in `daemon_config`)."""
    return config.replace('"mcp:t"', f'"mcp:{name}"').replace(
        "[mcp_servers.t]", f"[mcp_servers.{name}]"
    )


def start_server(ui: WebUI, fake: FakeProvider, name: str) -> None:
    """A turn whose call starts the server `name`; its prompts are then offered."""
    fake.enqueue(Reply().tool_call(f"mcp__{name}__echo", {"text": "start"}), Reply().text("ok"))
    ui.send(f"start {name}")
    ui.wait_idle(timeout=int(STARTUP_S * 1000))


def offered(page: Page, typed: str) -> list[str]:
    page.fill("#composer-text", "")
    page.locator("#composer-text").press_sequentially(typed)
    expect(page.locator("#mcp-prompts")).to_be_visible()
    return [str(c) for c in page.locator("#mcp-prompts .mcp-prompt").evaluate_all(
        "(buttons) => buttons.map((b) => b.dataset.command)"
    )]  # fmt: skip


@pytest.mark.timeout(180)
def test_a_restarted_daemon_s_prompts_replace_the_old_ones(
    daemon_factory: DaemonFactory, ui_factory: UIFactory, fake: FakeProvider
) -> None:
    config = daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n")
    daemon = daemon_factory(named(config, "old"))
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    page = ui.page
    start_server(ui, fake, "old")
    assert offered(page, "/mcp__") == ["/mcp__old__review"]
    page.click("#mcp-resources-open")
    expect(page.locator("#mcp-resources .mcp-resource[data-server='old']")).to_have_count(1)
    page.click("#mcp-resources-open")
    page.click("#mcp-open")  # the sidebar's MCP panel, left open
    expect(page.locator("#mcp-panel .mcp-server[data-name='old']")).to_be_visible()

    # The daemon dies (it tells nobody its servers stopped) and starts again on the same
    # address, with the server under another name.
    daemon.kill()
    expect(page.locator("#banner")).to_contain_text("Offline")
    daemon.listen_port = int(daemon.address.rsplit(":", 1)[1])
    daemon.config_path.write_text(named(config, "new"))
    daemon.start()
    # The page retries with a backoff of up to 10 s: a generous wait for it to come back.
    page.wait_for_selector("body[data-connection='online']", timeout=60_000)
    expect(page.locator("#banner")).to_be_hidden()
    assert page.evaluate("() => location.hash.slice(1)") == cid
    expect(page.locator("#mcp-panel .mcp-server[data-name='new']")).to_be_visible()
    expect(page.locator("#mcp-panel .mcp-server[data-name='old']")).to_have_count(0)

    start_server(ui, fake, "new")
    assert offered(page, "/mcp__") == ["/mcp__new__review"]
    page.fill("#composer-text", "")
    page.click("#mcp-resources-open")
    expect(page.locator("#mcp-resources .mcp-resource[data-server='new']")).to_have_count(1)
    expect(page.locator("#mcp-resources .mcp-resource[data-server='old']")).to_have_count(0)
