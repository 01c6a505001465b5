"""The real Codex TUI keeps a new thread in the mode any client's new conversation starts in, and
hears the permission mode another OpenVaala client switched: its `/status` shows the thread's
approval policy and sandbox as OpenVaala reports them (docs/codex.md)."""

from __future__ import annotations

import pytest

from tests.codex.test_codex_tui import Tmux, codex_tui
from tests.support.daemon import Daemon

__all__ = ["codex_tui"]  # the fixture


@pytest.mark.timeout(300)
async def test_the_codex_tui_shows_a_mode_switched_elsewhere(
    codex_tui: Tmux, daemon: Daemon
) -> None:
    codex_tui.expect("Ask Codex to do anything")
    codex_tui.submit("hello", then="I am OpenVaala's offline demo model")
    async with await daemon.client() as client:
        [conversation] = (await client.request("conversation/list", {}))["conversations"]
        cid = conversation["conversationId"]
        # Its turn's own policies (`on-request`) narrowed nothing: the agent's configuration.
        first = await client.request("conversation/subscribe", {"conversationId": cid})
        assert first["snapshot"] is not None
        assert first["snapshot"]["conversation"]["permissionMode"] == "auto-edit"
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "plan"}
        )
    # thread/settings/updated: the TUI's own words for a read-only sandbox.
    screen = codex_tui.submit("/status", then="Permissions:")
    [permissions] = [line for line in screen.splitlines() if "Permissions:" in line]
    assert "Read Only" in permissions, screen

    # The TUI sends the settings it was told with its next turns: that undoes no switch.
    codex_tui.submit("still planning", then="You said: “still planning”")
    async with await daemon.client() as client:
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "auto-edit"}
        )
        codex_tui.submit("after the switch", then="You said: “after the switch”")
        read = await client.request("conversation/subscribe", {"conversationId": cid})
    assert read["snapshot"] is not None
    assert read["snapshot"]["conversation"]["permissionMode"] == "auto-edit"
