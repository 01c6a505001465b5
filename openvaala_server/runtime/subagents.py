"""Subagents: sessions an agent starts with `spawn_agent`, and the tools to work with them.

The runtime calls two hooks: `tools_for` (the collaboration tools a session may use) and
`on_turn_ended` (a subagent reports back to its parent after each of its turns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openvaala_server.runtime.conversation import LiveConversation
    from openvaala_server.runtime.manager import Runtime
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.base import Tool


class SubagentService:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def tools_for(self, conv: LiveConversation, session: LiveSession) -> dict[str, Tool]:
        """The collaboration tools this session's agent may use (none yet)."""
        return {}

    def on_turn_ended(
        self,
        conv: LiveConversation,
        session: LiveSession,
        status: str,
        error: dict[str, Any] | None,
    ) -> None:
        """Called synchronously as any session's turn ends."""
