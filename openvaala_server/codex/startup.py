"""What Codex clients ask before their first thread, answered with OpenVaala's truth
(docs/codex.md "Start-up"): its models (`model/list`), its agents (`collaborationMode/list`),
its MCP servers (`mcpServerStatus/list`), no account (`account/read`: none needed), no Codex
config, requirements, skills or hooks. The answers are built from the daemon's own methods."""

from __future__ import annotations

import os
import platform
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from openvaala_server import __version__
from openvaala_server.codex.overrides import PLAN_AGENT
from openvaala_server.codex.schema import CODEX_VERSION
from openvaala_server.codex.upstream import Upstream
from openvaala_server.protocol.json_types import JsonObject, JsonValue

Answer = Callable[[Upstream, JsonObject], Awaitable[JsonObject]]
REASONING: Final[list[JsonValue]] = [
    {"reasoningEffort": "medium", "description": "the model's own setting (OpenVaala's config)"}
]


async def initialize(up: Upstream, p: JsonObject) -> JsonObject:
    return {
        # Codex clients read the version after the slash: the protocol's release, not ours.
        "userAgent": f"openvaala_app_server/{CODEX_VERSION} (OpenVaala {__version__})",
        # No Codex home is used: the client's own files stay its own (docs/codex.md).
        "codexHome": str(Path.home() / ".codex"),
        "platformFamily": "windows" if os.name == "nt" else "unix",
        "platformOs": {"Darwin": "macos", "Windows": "windows"}.get(platform.system(), "linux"),
    }


async def default_model(up: Upstream) -> str | None:
    agents = (await up.request("agents/list", {})).get("agents")
    for agent in agents if isinstance(agents, list) else []:
        if isinstance(agent, dict) and agent.get("default"):
            return str(agent.get("model") or "") or None
    return None


async def model_list(up: Upstream, p: JsonObject) -> JsonObject:
    models = (await up.request("models/list", {})).get("models")
    default = await default_model(up)
    data: list[JsonValue] = [
        {
            "id": str(m["name"]),
            "model": str(m["name"]),
            "displayName": str(m["name"]),
            "description": f"{m.get('provider')} · {m.get('model')} (OpenVaala)",
            "hidden": False,
            "isDefault": m["name"] == default,
            "supportedReasoningEfforts": REASONING,
            "defaultReasoningEffort": "medium",
            "inputModalities": ["text", "image"],
            "upgrade": None,
        }
        for m in (models if isinstance(models, list) else [])
        if isinstance(m, dict)
    ]
    return {"data": data, "nextCursor": None}


async def collaboration_modes(up: Upstream, p: JsonObject) -> JsonObject:
    agents = (await up.request("agents/list", {})).get("agents")
    data: list[JsonValue] = [
        {
            "name": str(a["name"]),
            "mode": _mode(a),
            "model": a.get("model"),
            "reasoning_effort": None,
        }
        for a in (agents if isinstance(agents, list) else [])
        if isinstance(a, dict)
    ]
    return {"data": data}


def _mode(agent: JsonObject) -> str | None:
    """The Codex collaboration mode an agent is (the TUI offers only masks that have one): the
    `plan` agent is plan mode, the default agent the default mode (docs/codex.md)."""
    if agent["name"] == PLAN_AGENT:
        return "plan"
    return "default" if agent.get("default") is True else None


async def config_read(up: Upstream, p: JsonObject) -> JsonObject:
    config: JsonObject = {"model": await default_model(up), "model_provider": "openvaala"}
    return {"config": config, "origins": {}, "layers": [] if p.get("includeLayers") else None}


async def account_read(up: Upstream, p: JsonObject) -> JsonObject:
    # The daemon holds the provider keys: a Codex client needs no login of its own.
    return {"account": None, "userId": None, "requiresOpenaiAuth": False}


async def mcp_status(up: Upstream, p: JsonObject) -> JsonObject:
    servers = (await up.request("mcp/list", {})).get("servers")
    data: list[JsonValue] = []
    for server in servers if isinstance(servers, list) else []:
        if not isinstance(server, dict):
            continue
        names = server.get("tools")
        tools: JsonObject = {
            str(n): {"name": str(n), "inputSchema": {"type": "object"}}
            for n in (names if isinstance(names, list) else [])
        }
        data.append(
            {
                "name": str(server["name"]),
                "authStatus": "unsupported",
                "tools": tools,
                "resources": [],
                "resourceTemplates": [],
            }
        )
    return {"data": data, "nextCursor": None}


async def skills_list(up: Upstream, p: JsonObject) -> JsonObject:
    cwds = p.get("cwds")
    data: list[JsonValue] = [
        {"cwd": str(c), "skills": [], "errors": []}
        for c in (cwds if isinstance(cwds, list) else [])
    ]
    return {"data": data}


async def empty_list(up: Upstream, p: JsonObject) -> JsonObject:
    return {"data": []}


async def empty_page(up: Upstream, p: JsonObject) -> JsonObject:
    return {"data": [], "nextCursor": None}


async def no_plugins(up: Upstream, p: JsonObject) -> JsonObject:
    return {"marketplaces": [], "featuredPluginIds": [], "marketplaceLoadErrors": []}


async def requirements(up: Upstream, p: JsonObject) -> JsonObject:
    return {"requirements": None, "supportsIndependentSpeedModes": None}


async def rate_limits(up: Upstream, p: JsonObject) -> JsonObject:
    return {"rateLimits": {"limitId": None, "limitName": None, "primary": None, "secondary": None}}


async def no_govcloud(up: Upstream, p: JsonObject) -> JsonObject:
    return {"isGovCloud": False, "shouldWarn": False}


ANSWERS: Final[dict[str, Answer]] = {
    "model/list": model_list,
    "collaborationMode/list": collaboration_modes,
    "config/read": config_read,
    "configRequirements/read": requirements,
    "account/read": account_read,
    "account/rateLimits/read": rate_limits,
    "account/bedrock/checkGovCloudRequirements": no_govcloud,
    "mcpServerStatus/list": mcp_status,
    "skills/list": skills_list,
    "hooks/list": empty_list,
    "app/list": empty_page,
    "thread/backgroundTerminals/list": empty_page,
    "plugin/installed": no_plugins,
    "plugin/list": no_plugins,
    "experimentalFeature/list": empty_page,
}
