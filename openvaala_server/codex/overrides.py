"""A `turn/start`'s per-turn overrides as changes of OpenVaala's conversation (pure;
docs/codex.md "Per-turn overrides").

Codex clients send the settings they hold with every turn ("for this turn and subsequent
turns"): a value is the user's choice only when it differs both from what this client sent (or
was answered) last and from what the conversation has now. Otherwise a value a client still holds
would undo another client's change at its next turn.

What maps: `model` (conversation/setModel), `cwd` (conversation/setCwd) and `collaborationMode`'s
plan mode (the agent named `plan`, conversation/setAgent). `effort`, `approvalPolicy` and
`sandboxPolicy` do not: they are the agent's configuration in OpenVaala."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Final

# Codex's plan mode is OpenVaala's agent of this name (docs/codex.md "Per-turn overrides").
PLAN_AGENT: Final = "plan"


def sent_choice(sent: object, told: str | None, current: str) -> str | None:
    """`sent` when it is the user's choice: neither what the client held (`told`) nor now."""
    if not isinstance(sent, str) or not sent:
        return None
    return sent if sent not in (told, current) else None


def cwd_choice(sent: object, told: str | None, current: str) -> str | None:
    """A working directory the user chose; the same directory written otherwise is none."""
    if not isinstance(sent, str) or not sent:
        return None
    norm = os.path.normpath(sent)
    known = {os.path.normpath(v) for v in (told, current) if v}
    return norm if norm not in known else None


def mode_kind(collaboration_mode: object) -> str | None:
    """`plan`, `default`, or None when the turn names no collaboration mode."""
    if not isinstance(collaboration_mode, dict):
        return None
    mode = collaboration_mode.get("mode")
    return mode if mode in ("plan", "default") else None


@dataclass
class PlanMode:
    """Which sessions plan mode switched to the `plan` agent, and from which agent: leaving plan
    mode goes back to it. A session switched to `plan` by another client (setAgent) stays."""

    before: dict[str, str] = field(default_factory=dict)  # session → its agent before plan mode

    def agent_choice(self, sid: str, mode: str | None, agent: str) -> str | None:
        """The agent a turn in collaboration mode `mode` needs for session `sid` (whose agent
        is `agent` now), or None when it stays."""
        if mode == "plan" and agent != PLAN_AGENT:
            self.before[sid] = agent
            return PLAN_AGENT
        if mode == "default" and agent == PLAN_AGENT and sid in self.before:
            return self.before.pop(sid)
        return None

    def refused(self, sid: str) -> None:
        """The switch to `plan` failed: the session is not in plan mode."""
        self.before.pop(sid, None)
