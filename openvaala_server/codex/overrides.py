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
WIDEST: Final = MODES[-1]
_UNSET: Final = "?"  # nothing sent yet


def policy_mode(approval: object, sandbox: object) -> str | None:
    """The permission mode a Codex client's approval and sandbox policies stand for (None: the
    client sent neither). The inverse of threads.policies, so that a client sending back what
    it was told changes nothing: a read-only sandbox is `plan`, a policy that asks before what is
    not trusted (`untrusted`, granular) is `ask`, and `on-request` — Codex's own default,
    "Auto" in its `/approvals`, which the Codex TUI sends with every turn — or "Full access"
    (`never`) is `auto-edit`, which narrows nothing (the agent's configuration decides)."""
    if isinstance(sandbox, dict) and sandbox.get("type") == "readOnly":
        return "plan"
    if approval == "untrusted" or isinstance(approval, dict):
        return "ask"
    if approval in ("on-request", "never") or sandbox is not None:
        return WIDEST
    return None


def narrower(a: str, b: str) -> str:
    return a if MODES.index(a) <= MODES.index(b) else b


@dataclass
class PolicyMode:
    """The permission mode a Codex client's approval and sandbox policies choose. A client sends
    its settings with every turn, either those it holds or those it was told last, so a policy
    counts only when it is neither (as sent_choice). A choice narrows from the mode the
    conversation had when this client first narrowed it and never goes wider than that; going
    back to `auto-edit` ("Auto", "Full access") restores that mode."""

    sent: str | None = _UNSET  # the mode the client's last policies asked for
    told: str | None = None  # the mode the daemon last reported to the client (threads.policies)
    before: str | None = None  # the mode before this client narrowed it

    def choice(self, asked: str | None, current: str) -> str | None:
        """The mode to switch to now (None: none). `current` is the conversation's mode."""
        if asked is None:
            return None
        known, self.sent = (self.sent, self.told), asked
        if asked in known or current not in MODES:
            return None
        if asked == WIDEST:
            target, self.before = self.before, None
            return target if target not in (None, current) else None
        if self.before is None:
            self.before = current
        target = narrower(asked, self.before)
        return target if target != current else None
