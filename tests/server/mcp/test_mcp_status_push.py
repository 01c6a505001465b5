"""What the manager tells clients of a config reload (`mcp/statusChanged`, docs/protocol.md),
in process: a changed server's replacement is announced with its own state, a removed one as
`removed`, an unchanged one not at all (a retired server's own stop is never announced: its name
is the new server's now)."""

from __future__ import annotations

from openvaala_server.mcp.manager import McpManager
from openvaala_server.protocol.payloads import McpServerState
from openvaala_server.structured import Supervisor
from tests.server.mcp.test_mcp_servers import stdio


async def test_a_reload_announces_each_server_it_replaced_or_removed(
    supervisor: Supervisor,
) -> None:
    manager = McpManager({"a": stdio("a"), "b": stdio("b"), "c": stdio("c")}, supervisor)
    told: list[McpServerState] = []
    manager.on_status = told.append
    try:
        manager.reconfigure({"a": stdio("a", env={"WHO": "new"}), "b": stdio("b")})
        assert sorted(told, key=lambda s: s["name"]) == [
            {"name": "a", "status": "stopped", "tools": []},
            {"name": "c", "status": "removed", "tools": []},
        ]
    finally:
        await manager.shutdown()
