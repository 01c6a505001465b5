"""What a session's agent may do given the agents above it: a subagent never gets more than its
parent (docs/security.md, "Subagents")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from openvaala_server.domain.inheritance import narrowed, shared_tools
from openvaala_server.domain.permissions import Permissions

if TYPE_CHECKING:
    from openvaala_server.config import Config
    from openvaala_server.runtime.session import LiveSession


def own_permissions(config: Config, agent: str) -> Permissions:
    found = config.agents.get(agent)
    return found.permissions if found else Permissions()


def own_tools(config: Config, agent: str) -> tuple[str, ...]:
    found = config.agents.get(agent)
    return found.tools if found else ()


def _agents_above(sessions: Mapping[str, LiveSession], session: LiveSession) -> list[str]:
    """The agents of the session's chain, root first, the session's own last."""
    chain = [session]
    while chain[-1].parent_session_id is not None:
        parent = sessions.get(chain[-1].parent_session_id)
        if parent is None or parent in chain:  # a session tree on disk is never cyclic
            break
        chain.append(parent)
    return [s.agent for s in reversed(chain)]


def effective_permissions(
    config: Config, sessions: Mapping[str, LiveSession], session: LiveSession
) -> Permissions:
    """The session's agent's permissions narrowed by each agent above it, root first: a
    subagent never gets more than its parent (docs/security.md, "Subagents")."""
    root, *below = _agents_above(sessions, session)
    perms = own_permissions(config, root)
    above = root
    for child in below:
        perms = narrowed(own_permissions(config, child), perms, above)
        above = child
    return perms


def effective_tools(
    config: Config, sessions: Mapping[str, LiveSession], session: LiveSession
) -> tuple[str, ...]:
    """The tools the session may use: those of its agent's `tools` that every agent above it
    may use too (docs/security.md, "Subagents"). A subagent whose parent has no `shell`, or no
    trusted MCP server, does not get one from its own configuration."""
    root, *below = _agents_above(sessions, session)
    tools = own_tools(config, root)
    for child in below:
        tools = shared_tools(own_tools(config, child), tools)
    return tools
