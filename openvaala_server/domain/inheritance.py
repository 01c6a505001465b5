"""No agent gets more than its parent: a subagent's permissions are the stricter of its own and
its parent's (docs/security.md, "Subagents").

Pure. `narrowed` folds a parent's (already narrowed) permissions into a child's own: the
stricter sandbox, the network only if both have it, every `deny` pattern of both, the smaller
of each resource limit, and the parent's approval rules kept beside the child's
(`Permissions.inherited`), since two approval modes do not always meet in a third one
("always" and "never" together: every command asks, and nothing may leave the sandbox). `wider`
says, in words, where a child's own configuration asks for more than its parent has: what a
spawn must refuse or ask the user about. `shared_tools` is the same fold for an agent's `tools`:
a child may use only the tools of its own list that its parent may use too, so a trusted MCP
server's tools, which never ask, reach a subagent only when every agent above it has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace

from openvaala_server.domain.permissions import Bound, Limits, Permissions, SandboxMode
from openvaala_server.domain.tool_names import COLLAB, SPAWN_AGENT

ALL_MCP = "mcp:*"

_SANDBOX_RANK: dict[SandboxMode, int] = {"read-only": 0, "workspace": 1, "off": 2}


def narrowed(own: Permissions, parent: Permissions, parent_agent: str) -> Permissions:
    """A child's permissions under a parent whose permissions are `parent`."""
    sandbox = min(own.sandbox, parent.sandbox, key=_SANDBOX_RANK.__getitem__)
    deny = own.deny + tuple(p for p in parent.deny if p not in own.deny)
    bound = Bound(parent_agent, parent.approval, parent.allow)
    return replace(
        own,
        sandbox=sandbox,
        network=own.network and parent.network,
        deny=deny,
        limits=Limits(
            processes=min(own.limits.processes, parent.limits.processes),
            memory_mb=min(own.limits.memory_mb, parent.limits.memory_mb),
            tmp_mb=min(own.limits.tmp_mb, parent.limits.tmp_mb),
        ),
        inherited=(*own.inherited, bound, *parent.inherited),
    )


def _offered(tools: Sequence[str]) -> set[str]:
    """The names `tools` gives: `spawn_agent` brings every collaboration tool with it."""
    names = set(tools)
    if SPAWN_AGENT in names:
        names.update(COLLAB)
    return names


def _has(offered: set[str], name: str) -> bool:
    return name in offered or (name.startswith("mcp:") and ALL_MCP in offered)


def shared_tools(own: Sequence[str], parent: Sequence[str]) -> tuple[str, ...]:
    """The tools of `own` (a child agent's `tools`) that `parent` (its parent's, already
    shared) gives too. `mcp:*` in one list and `mcp:NAME` in the other meet in `mcp:NAME`."""
    offered = _offered(parent)
    out: list[str] = []
    for name in own:
        if name == ALL_MCP and ALL_MCP not in offered:
            out.extend(sorted(n for n in offered if n.startswith("mcp:")))
        elif _has(offered, name):
            out.append(name)
    return tuple(dict.fromkeys(out))


def tool_allowed(tools: Sequence[str], name: str) -> bool:
    """Whether a tool named `name` (a built-in or daemon tool) is one `tools` gives."""
    return name in _offered(tools)


def tools_beyond(own: Sequence[str], parent: Sequence[str]) -> list[str]:
    """The tools `own` lists that `parent` does not give."""
    offered = _offered(parent)
    return [name for name in own if not _has(offered, name)]


def wider(
    own: Permissions,
    parent: Permissions,
    own_tools: Sequence[str] | None = None,
    parent_tools: Sequence[str] | None = None,
) -> list[str]:
    """Where `own` (a child agent's configuration) exceeds `parent`, one phrase each; with
    both tool lists, a tool the parent lacks is wider too."""
    found = [*_wider_sandbox(own, parent), *_wider_approval(own, parent)]
    for limit in fields(Limits):
        mine, theirs = getattr(own.limits, limit.name), getattr(parent.limits, limit.name)
        if isinstance(mine, int) and isinstance(theirs, int) and mine > theirs:
            found.append(f"limits.{limit.name} = {mine} (the parent's is {theirs})")
    if own_tools is not None and parent_tools is not None:
        beyond = tools_beyond(own_tools, parent_tools)
        if beyond:
            found.append(f"its tools {beyond} are not the parent's")
    return found


def _wider_sandbox(own: Permissions, parent: Permissions) -> list[str]:
    found: list[str] = []
    if _SANDBOX_RANK[own.sandbox] > _SANDBOX_RANK[parent.sandbox]:
        found.append(f'sandbox = "{own.sandbox}" (the parent\'s is "{parent.sandbox}")')
    if own.network and not parent.network:
        found.append("network = true (the parent has no network)")
    return found


def _wider_approval(own: Permissions, parent: Permissions) -> list[str]:
    """Where `own` asks less, denies less or allows more than `parent` and those above it."""
    found: list[str] = []
    modes = parent.approvals
    if "never" in modes and own.approval != "never":
        found.append(
            f'approval = "{own.approval}" could let calls leave the sandbox '
            '(the parent\'s approval is "never")'
        )
    if "always" in modes and own.approval != "always":
        found.append(f'approval = "{own.approval}" asks less (the parent\'s is "always")')
    missing_deny = [p for p in parent.deny if p not in own.deny]
    if missing_deny:
        found.append(f"it lacks the parent's deny patterns {missing_deny}")
    levels = [(parent.approval, parent.allow), *((b.approval, b.allow) for b in parent.inherited)]
    extra = {p for mode, allow in levels if mode == "always" for p in own.allow if p not in allow}
    if extra:
        found.append(f"its allow patterns {sorted(extra)} are not the parent's")
    return found
