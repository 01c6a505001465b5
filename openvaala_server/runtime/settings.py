"""A conversation's settings: its title, archived flag, model, agent and working directory
(docs/design.md "Runtime split by responsibility")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.runtime.conversation import LiveConversation, directory_exists
from openvaala_server.runtime.ports import Models
from openvaala_server.runtime.typed_paths import absolute_path

if TYPE_CHECKING:
    from openvaala_server.runtime.session import LiveSession

TITLE_MAX = 200


class Owner(Models, Protocol):
    """What settings use of the conversation manager."""

    async def open(self, cid: str) -> LiveConversation: ...


async def rename(runtime: Owner, cid: str, title: str) -> None:
    conv = await runtime.open(cid)
    title = clean_title(title)
    if conv.pending is not None:
        conv.pending.title = title
        conv.root.title = title
    else:
        await conv.append_meta(
            {"type": r.CONVERSATION_RENAMED, "title": title, "titleSource": "user"}
        )
        conv.root.title = title
    conv.publish_updated()


async def set_archived(runtime: Owner, cid: str, archived: bool) -> None:
    conv = await runtime.open(cid)
    if conv.meta is None:
        raise errors.NotFound(
            f"conversation {cid} is not saved yet: it is saved with its first message",
            param="conversationId",
        )
    if conv.meta.archived != archived:
        record: r.ConversationArchived = (
            {"type": r.CONVERSATION_ARCHIVED} if archived else {"type": r.CONVERSATION_UNARCHIVED}
        )
        await conv.append_meta(record)
    conv.publish_updated()


async def set_model(runtime: Owner, cid: str, sid: str | None, model: str) -> None:
    conv = await runtime.open(cid)
    await conv.ensure_context()
    session = conv.session(sid)
    runtime.model_config(model)
    await switch_model(runtime, conv, session, model, chosen=True)


async def switch_model(
    runtime: Owner, conv: LiveConversation, session: LiveSession, model: str, *, chosen: bool
) -> None:
    """Put `session` on `model`: chosen by the user, or brought by its agent."""
    if conv.meta is not None:
        record: r.SessionModelSet = {
            "type": r.SESSION_MODEL_SET,
            "sessionId": session.session_id,
            "model": model,
        }
        if not chosen:
            record["by"] = "agent"
        await conv.append_meta(record)
    elif conv.pending is not None:
        conv.pending.model = model
    session.model = model
    session.model_chosen = chosen
    config = runtime.config.models[model]
    session.usage.context_window = config.context_window
    session.usage.max_output_tokens = config.max_output_tokens
    conv.refresh_usage_estimate(session)
    conv.publish_session(session)
    conv.publish_usage(session)
    if session.session_id == conv.root_session_id:
        conv.publish_updated()


async def set_agent(runtime: Owner, cid: str, agent: str) -> None:
    """Choose the root session's agent (its prompt and tools); it brings its model unless the
    user chose one for this conversation (docs/protocol.md, conversation/setAgent)."""
    conv = await runtime.open(cid)
    await conv.ensure_context()
    runtime.require_agent(agent)
    refuse_while_running(conv, "change the agent")
    root = conv.root
    if conv.meta is not None:
        await conv.append_meta(
            {"type": r.SESSION_AGENT_SET, "sessionId": root.session_id, "agent": agent}
        )
    elif conv.pending is not None:
        conv.pending.agent = agent
    root.agent = agent
    # An agent brings its model, unless the user chose one for this conversation.
    brings = runtime.config.agents[agent]
    switch = brings.model_set and not root.model_chosen and brings.model != root.model
    if switch and brings.model in runtime.config.models:
        await switch_model(runtime, conv, root, brings.model, chosen=False)
        return  # published with the model (_switch_model)
    if root.model in runtime.config.models:
        conv.refresh_usage_estimate(root)
    conv.publish_session(root)
    conv.publish_usage(root)
    conv.publish_updated()


async def set_cwd(runtime: Owner, cid: str, cwd: str) -> None:
    """Point the conversation at another working directory (its own moved or is gone)."""
    cwd = absolute_path(cwd, "cwd")
    conv = await runtime.open(cid)
    await conv.ensure_context()
    if not await directory_exists(cwd):
        raise errors.CwdMissing(f"the directory {cwd} does not exist", cwd=cwd)
    refuse_while_running(conv, "change the working directory")
    conv.cwd_exists = True  # just checked
    if conv.meta is not None:
        await conv.append_meta({"type": r.CONVERSATION_CWD_SET, "cwd": cwd})
    elif conv.pending is not None:
        conv.pending.cwd = cwd
    for session in conv.sessions.values():
        session.surroundings = None  # the new directory's, gathered at the next turn
        session.surroundings_loading = None
        if session.model in runtime.config.models and session.context_ready:
            conv.refresh_usage_estimate(session)
            conv.publish_usage(session)
    conv.publish_updated()


def refuse_while_running(conv: LiveConversation, what: str) -> None:
    for session in conv.sessions.values():
        if session.turn is not None or session.compacting:
            raise errors.TurnRunning(f"a turn is running: {what} when it has finished")


def clean_title(title: str) -> str:
    title = " ".join(title.split())
    if not title:
        raise errors.InvalidParams("the title must not be empty", param="title")
    if len(title) > TITLE_MAX:
        raise errors.InvalidParams(
            f"the title is longer than {TITLE_MAX} characters", param="title"
        )
    return title
