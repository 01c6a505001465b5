"""The editor's MCP server names as OpenVaala's (openvaala_acp/editor_mcp.py): two names that
clean up alike are both kept, neither silently replacing the other."""

from __future__ import annotations

from acp.schema import McpServerStdio

from openvaala_acp.editor_mcp import tables


def test_names_that_clean_up_alike_are_both_kept() -> None:
    first = McpServerStdio(name="my server", command="a", args=[], env=[])
    second = McpServerStdio(name="my-server", command="b", args=[], env=[])
    servers = tables([first, second])
    assert {name: t["command"] for name, t in servers.items()} == {
        "my-server": "a",
        "my-server-2": "b",
    }
