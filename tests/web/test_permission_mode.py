"""The permission mode in the browser's composer (docs/security.md, "Permission modes"): the
select shows the mode in force, a choice switches it for every client, and a switch made
elsewhere reaches the select."""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import expect

from openvaala_server.client import Client
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.events import snapshot_of
from tests.web.conftest import WebUI, run_async


def _mode(daemon: Daemon, cid: str, switch_to: str | None = None) -> str:
    async def go() -> str:
        client: Client = await daemon.client(reconnect=False)
        try:
            if switch_to is not None:
                params = {"conversationId": cid, "mode": switch_to}
                await client.request("conversation/setPermissionMode", params)
            return str((await snapshot_of(client, cid))["conversation"]["permissionMode"])
        finally:
            await client.close()

    return run_async(go)


def test_the_composer_select_switches_the_mode_both_ways(
    daemon_factory: Callable[..., Daemon], ui_factory: Callable[[Daemon], WebUI]
) -> None:
    daemon = daemon_factory(DEFAULT_CONFIG)
    ui = ui_factory(daemon)
    ui.login()
    cid = ui.new_conversation()
    select = ui.page.locator("#permission-mode")
    expect(select).to_be_visible()
    expect(select).to_have_value("auto-edit")
    select.select_option("plan")
    deadline = time.monotonic() + 20
    while _mode(daemon, cid) != "plan":  # the request is on its way
        assert time.monotonic() < deadline, "the daemon never got the browser's choice"
    expect(select).to_have_value("plan")
    assert _mode(daemon, cid, switch_to="ask") == "ask"
    expect(select).to_have_value("ask")  # conversation/updated reached the browser
