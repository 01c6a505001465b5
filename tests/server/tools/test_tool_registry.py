"""The built-in tool registry."""

from __future__ import annotations

from openvaala_server.domain import tool_names
from openvaala_server.tools.registry import BUILTIN_TOOLS, tools_for
from tests.support.json import j


def test_builtin_tools_are_keyed_by_spec_name() -> None:
    # The configuration checks agents' `tools` against these names without importing the tools.
    assert tuple(BUILTIN_TOOLS) == tool_names.BUILTIN
    for name, tool in BUILTIN_TOOLS.items():
        assert tool.spec.name == name
        assert tool.spec.description
        assert tool.spec.parameters["type"] == "object"
        assert set(j(tool.spec.parameters)["required"]) <= set(
            j(tool.spec.parameters)["properties"]
        )


def test_tools_for_keeps_order_skips_unknown_and_duplicates() -> None:
    tools = tools_for(["read_file", "spawn_agent", "shell", "read_file"])
    assert [tool.spec.name for tool in tools] == ["read_file", "shell"]
    assert tools_for([]) == []
