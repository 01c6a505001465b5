"""What a session's calls may do: its tools, its permissions and the confinement its commands run
under (docs/security.md; docs/design.md "Runtime split by responsibility")."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from openvaala_server.config import config_path
from openvaala_server.domain import approvals, tool_names
from openvaala_server.domain.inheritance import tool_allowed
from openvaala_server.domain.permission_mode import apply_mode
from openvaala_server.domain.permissions import Confinement, Permissions
from openvaala_server.runtime import history, memory
from openvaala_server.runtime.agent_chain import effective_permissions, effective_tools
from openvaala_server.runtime.context_view import history_tools
from openvaala_server.tools.plan import UPDATE_PLAN_TOOL, UpdatePlanTool
from openvaala_server.tools.registry import tools_for as builtin_tools
from openvaala_server.tools.sandbox import ensure_private_dir, ensure_private_file
from openvaala_server.tools.shell import ShellTool
from openvaala_server.tools.web_fetch import WebFetchTool

if TYPE_CHECKING:
    from openvaala_server.runtime.ports import Conversation, Models
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.runtime.session_mcp import SessionServers
    from openvaala_server.runtime.subagents import SubagentService
    from openvaala_server.tools.base import Tool


class Owner(history.Manager, Protocol):
    """What a session's tools are made from: the manager and its subagent service."""

    subagents: SubagentService
    session_mcp: SessionServers  # MCP servers a client brought for one conversation


def tools_for(runtime: Owner, conv: Conversation, session: LiveSession) -> dict[str, Tool]:
    # A subagent's: those its agent lists that every agent above it has (docs/security.md,
    # "Subagents").
    config = runtime.config_for(session)
    names = effective_tools(config, conv.sessions, session)
    tools = {t.spec.name: t for t in builtin_tools(names)}
    if tool_names.WEB_FETCH in names:  # with the limits of its [web_fetch] table
        tools[tool_names.WEB_FETCH] = WebFetchTool(config.web_fetch)
    if UPDATE_PLAN_TOOL in names:  # bound to the session whose plan it replaces
        tools[UPDATE_PLAN_TOOL] = UpdatePlanTool(partial(conv.set_plan, session))
    tools.update(runtime.subagents.tools_for(conv, session))
    tools.update(memory.tools_for(conv, session))
    # As last listed: `TurnRunner` starts the servers before each model call.
    mcp = {t.spec.name: t for t in runtime.mcp.current_tools(names)}
    if session.session_id == conv.root_session_id:  # a client's servers: its agent's only
        mcp = runtime.session_mcp.with_tools(conv.conversation_id, mcp)
    tools.update(mcp)
    tools.update(history_tools(conv, session, lambda: history.root_history(runtime, conv)))
    shell = tools.get(tool_names.SHELL)
    if isinstance(shell, ShellTool) and approvals.no_way_out(
        runtime.permissions_for(conv, session)
    ):
        tools[tool_names.SHELL] = shell.confined()  # the model is not offered what is refused
    # The hooks above read the agent's own list: what the chain does not give goes.
    return {n: t for n, t in tools.items() if n in mcp or tool_allowed(names, n)}


def own_permissions_for(runtime: Models, conv: Conversation, session: LiveSession) -> Permissions:
    """The session's agent's permissions, narrowed by every agent above it (a subagent
    never gets more than its parent: docs/security.md, "Subagents")."""
    return effective_permissions(runtime.config_for(session), conv.sessions, session)


def permissions_for(runtime: Models, conv: Conversation, session: LiveSession) -> Permissions:
    """What the session's calls run under: its own (`own_permissions_for`), narrowed by
    the conversation's permission mode (docs/security.md, "Permission modes")."""
    return apply_mode(own_permissions_for(runtime, conv, session), conv.permission_mode)


def confinement_for(runtime: Owner, conv: Conversation, session: LiveSession) -> Confinement:
    """The limits of a tool call of this session (docs/security.md)."""
    perms = runtime.permissions_for(conv, session)
    config = runtime.config
    cfg_file = config.path or config_path()
    protected: tuple[Path, ...] = (runtime.store.data_dir.root, cfg_file)
    if not os.environ.get("OPENVAALA_CONFIG") and cfg_file == config_path():
        # The default config directory holds only ours; one named by OPENVAALA_CONFIG may
        # be any directory (a project's, a test's), so only the file itself is hidden there.
        protected += (cfg_file.parent,)
        # Hidden even before the user writes a config: a tool must not create it first.
        ensure_private_dir(cfg_file.parent)
    # Key files (`openvaala setup`) wherever they are: a command must not read a key.
    key_files = [Path(m.api_key_file) for m in config.models.values() if m.api_key_file]
    for key_file in key_files:
        ensure_private_file(key_file)  # hidden even before `openvaala setup` writes it
    protected += tuple(key_files)
    hidden = set(config.secret_env_names())
    hidden.update(k for k in os.environ if k.startswith("OPENVAALA_"))
    return Confinement(
        mode=perms.sandbox,
        network=perms.network or perms.sandbox == "off",
        protected=tuple(p.resolve() for p in protected),
        hidden_env=frozenset(hidden),
        limits=perms.limits,
        no_way_out=approvals.no_way_out(perms),
    )
