"""A conversation's permission mode: the user narrows its agent's permissions while it runs.

Pure. Three modes, narrowest first (docs/security.md, "Permission modes"):

- `plan`: read-only. The sandbox is `read-only` and nothing may leave it, so every write is
  refused with an error the model reads; the agent can still read, search and run commands
  that only read.
- `ask`: every write and every shell command not in the agent's `allow` patterns asks first,
  as under `approval = "always"`.
- `auto-edit`: the agent's configuration as it is (by default, `escalate`: what the sandbox
  allows, such as edits in the workspace, runs at once).

A mode never widens the configuration: it is applied as one more rule a call must pass (a
`Bound`, as an agent above a subagent is), and `ceiling` says which modes an agent allows. A
mode wider than the agent's ceiling (after a switch of agent) counts as the ceiling.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final, Literal, TypeGuard

from openvaala_server.domain.permissions import MODE_BOUND, Bound, Permissions

PermissionMode = Literal["plan", "ask", "auto-edit"]
# Narrowest first: the order `ceiling` and `effective` compare in, and the order clients cycle.
PERMISSION_MODES: Final[tuple[PermissionMode, ...]] = ("plan", "ask", "auto-edit")


def is_mode(value: object) -> TypeGuard[PermissionMode]:
    return value in PERMISSION_MODES


def ceiling(perms: Permissions) -> PermissionMode:
    """The widest mode `perms` allows: `ask` when some agent of the chain asks every write."""
    return "ask" if "always" in perms.approvals else "auto-edit"


def allowed_modes(perms: Permissions) -> tuple[PermissionMode, ...]:
    top = PERMISSION_MODES.index(ceiling(perms))
    return PERMISSION_MODES[: top + 1]


def effective(chosen: PermissionMode | None, perms: Permissions) -> PermissionMode:
    """The mode in force: the one chosen, but never wider than the agent allows."""
    top = ceiling(perms)
    if chosen is None:
        return top
    return min(chosen, top, key=PERMISSION_MODES.index)


def apply_mode(perms: Permissions, chosen: PermissionMode | None) -> Permissions:
    """`perms` narrowed by the conversation's mode (unchanged when none was chosen)."""
    mode = effective(chosen, perms)
    if mode == ceiling(perms):  # what the configuration does already
        return perms
    if mode == "ask":
        bound = Bound(MODE_BOUND, "always", perms.allow)
        return replace(perms, inherited=(*perms.inherited, bound))
    return replace(
        perms,
        sandbox="read-only",
        inherited=(*perms.inherited, Bound(MODE_BOUND, "never")),
    )
