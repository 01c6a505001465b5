"""The text of `/status`: where this conversation stands, in one place (pure)."""

from __future__ import annotations

from typing import Any

from openvaala_server.protocol.display import format_tokens


def status_text(
    *,
    agent: dict[str, Any],
    session: dict[str, Any],
    usage: dict[str, Any],
    cwd: str,
    address: str,
    config_path: str,
) -> str:
    """`agent`: its `agents/list` entry ({} when it is not configured); `session`: the followed
    session's info; `usage`: its `Usage`."""
    name = str(session.get("agent") or agent.get("name") or "?")
    model = str(session.get("model") or agent.get("model") or "?")
    chosen = " (chosen with /model)" if session.get("modelChosen") else ""
    if agent:
        network = "network on" if agent.get("network") else "network off"
        sandbox = f"{agent.get('sandbox')} ({network})"
        approval = str(agent.get("approval"))
    else:
        sandbox = approval = "unknown: the agent is not configured"
    used = int(usage.get("used") or 0)
    window = int(usage.get("contextWindow") or 0)
    context = f"{format_tokens(used)} tokens"
    if window > 0:
        context += f" of {format_tokens(window)} ({round(100 * used / window)}%)"
    return "\n".join(
        [
            "Status:",
            f"  model      {model}{chosen}",
            f"  agent      {name}",
            f"  sandbox    {sandbox}",
            f"  approval   {approval}",
            f"  directory  {cwd}",
            f"  context    {context}",
            f"  daemon     {address or 'not connected'}",
            f"  config     {config_path}",
        ]
    )
