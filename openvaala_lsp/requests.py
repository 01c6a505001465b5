"""The custom requests (`openvaala/*`), named as in the editor bridge contract."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, as_params

ROUTES: dict[str, str] = {
    "openvaala/conversations/list": "list_conversations",
    "openvaala/conversations/new": "new_conversation",
    "openvaala/prompt": "prompt",
    "openvaala/send": "send",
    "openvaala/input": "input",
    "openvaala/interrupt": "interrupt",
    "openvaala/compact": "compact",
    "openvaala/fork": "fork",
    "openvaala/rewind": "rewind",
    "openvaala/usage": "usage",
    "openvaala/agents": "agents",
    "openvaala/subscribe": "subscribe",
    "openvaala/unsubscribe": "unsubscribe",
    "openvaala/render": "render",
    "openvaala/read": "read",
    "openvaala/follow": "follow",
    "openvaala/approvals": "approvals",
    "openvaala/approvals/respond": "respond_approval",
    "openvaala/setAgent": "set_agent",
    "openvaala/setCwd": "set_cwd",
    "openvaala/mcp": "mcp_servers",
    "openvaala/mcp/list": "mcp_list",
    "openvaala/mcp/readResource": "mcp_read_resource",
    "openvaala/mcp/getPrompt": "mcp_get_prompt",
    "openvaala/mcp/expand": "mcp_expand",
    "openvaala/init": "init",
    "openvaala/remember": "remember",
    "openvaala/memory": "memory",
    "openvaala/memory/write": "write_memory",
    "openvaala/models": "models",
    "openvaala/setModel": "set_model",
    "openvaala/setPermissionMode": "set_permission_mode",
}


def register(ls: Host) -> None:
    for method, action in ROUTES.items():
        _route(ls, method, action)


def _route(ls: Host, method: str, action: str) -> None:
    @ls.feature(method)
    async def handle(ls: Host, params: Any) -> Any:
        run: Callable[[Params], Awaitable[Any]] = getattr(ls.actions, action)
        return await run(as_params(params))

    handle.__name__ = f"request_{action}"
