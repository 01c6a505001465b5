"""The text of `/status`: where this conversation stands, in one place (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server.protocol.display import format_tokens

if TYPE_CHECKING:
    from collections.abc import Mapping

    from openvaala_server.protocol.payloads import AgentInfo, Usage


def status_text(
    *,
    agent: AgentInfo | None,
    session: Mapping[str, object],
    usage: Usage,
    cwd: str,
    address: str,
    config_path: str,
    mode: str | None = None,
) -> str:
    """`agent`: its `agents/list` entry (None when it is not configured); `session`: the followed
    session's info; `usage`: its `Usage`; `mode`: the conversation's permission mode, which
    narrows the sandbox and approval shown (docs/security.md, "Permission modes")."""
    name = str(session.get("agent") or (agent and agent["name"]) or "?")
    model = str(session.get("model") or (agent and agent["model"]) or "?")
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
            f"  mode       {mode or 'auto-edit'} (Shift+Tab or /approvals changes it)",
            f"  directory  {cwd}",
            f"  context    {context}",
            f"  daemon     {address or 'not connected'}",
            f"  config     {config_path}",
        ]
    )
