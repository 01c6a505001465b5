"""The TUI's table of MCP servers (openvaala_tui/mcp_live.py), fed `mcp/list` and then
`mcp/statusChanged`: what the composer offers follows each state, a failure gives a line to show
once, and a server a reload removed is forgotten. No Textual."""

from __future__ import annotations

from openvaala_server.protocol.payloads import McpServerState
from openvaala_tui.mcp_live import McpServers

READY: McpServerState = {
    "name": "t",
    "status": "ready",
    "tools": ["echo"],
    "resources": [{"uri": "notes://today", "name": "today"}],
    "prompts": [{"name": "review", "description": "Review a file", "arguments": ["file"]}],
}


def test_offers_follow_each_state_and_a_removed_server_is_forgotten() -> None:
    table = McpServers()
    table.load([{"name": "t", "status": "starting", "tools": []}])
    assert not table.offers().prompts and not table.offers().resources
    assert table.changed(READY) is None
    assert list(table.offers().prompts) == ["mcp__t__review"]
    assert table.offers().resources == ("t:notes://today",)

    failed: McpServerState = {"name": "t", "status": "failed", "tools": [], "error": "it crashed"}
    shown = table.changed(failed)
    assert shown is not None and "it crashed" in shown
    assert table.changed(failed) is None  # said once, not at every push
    assert not table.offers().prompts

    table.changed(READY)
    assert table.changed({"name": "t", "status": "removed", "tools": []}) is None
    assert table.servers == {} and not table.offers().prompts
