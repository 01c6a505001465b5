"""A `turn/start`'s per-turn overrides as changes of OpenVaala's conversation (pure;
docs/codex.md "Per-turn overrides").

Codex clients send the settings they hold with every turn ("for this turn and subsequent
turns"): a value is the user's choice only when it differs both from what this client sent (or
was answered) last and from what the conversation has now. Otherwise a value a client still holds
would undo another client's change at its next turn.

What maps: `model` (conversation/setModel), `cwd` (conversation/setCwd), `collaborationMode`'s
plan mode (the agent named `plan`, conversation/setAgent) and a narrowing `approvalPolicy` /
`sandboxPolicy` (the permission mode, conversation/setPermissionMode: never wider than where this
client found it). `effort` does not: it is the model's configuration in OpenVaala."""

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


# Narrowest first (docs/security.md, "Permission modes").
MODES: Final = ("plan", "ask", "auto-edit")
_UNSET: Final = "?"  # nothing sent yet


def policy_mode(approval: object, sandbox: object) -> str | None:
    """The permission mode a Codex client's `/approvals` choice asks for: a read-only sandbox is
    plan mode, an approval policy that asks is `ask`; "Full access" (`never`, a full or external
    sandbox) narrows nothing (None)."""
    if isinstance(sandbox, dict) and sandbox.get("type") == "readOnly":
        return "plan"
    if approval in ("untrusted", "on-request") or isinstance(approval, dict):
        return "ask"
    return None


def narrower(a: str, b: str) -> str:
    return a if MODES.index(a) <= MODES.index(b) else b


@dataclass
class PolicyMode:
    """The permission mode a Codex client's approval and sandbox policies choose. Only a change
    of what the client sends counts (it sends its settings with every turn); a choice narrows
    from the mode the conversation had when this client first narrowed it and never goes wider
    than that; going back to "Full access" restores that mode."""

    told: str | None = _UNSET  # the mode the client's last policies asked for
    before: str | None = None  # the mode before this client narrowed it

    def choice(self, asked: str | None, current: str) -> str | None:
        """The mode to switch to now (None: none). `current` is the conversation's mode."""
        if asked == self.told or current not in MODES:
            return None
        self.told = asked
        if asked is None:
            target, self.before = self.before, None
            return target if target not in (None, current) else None
        if self.before is None:
            self.before = current
        target = narrower(asked, self.before)
        return target if target != current else None
