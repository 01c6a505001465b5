"""A conversation's life in the daemon: created, opened (loaded from disk, turns a crash cut
short recovered), unloaded when idle, deleted (docs/design.md "Runtime split by
responsibility")."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Protocol

from openvaala_server import errors
from openvaala_server.domain import meta as meta_fold
from openvaala_server.domain import records as r
from openvaala_server.domain import recovery
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.status import last_status
from openvaala_server.protocol import methods
from openvaala_server.runtime.conversation import (
    SNAPSHOT_PAGE,
    LiveConversation,
    PendingConversation,
    directory_exists,
)
from openvaala_server.runtime.hub import Hub
from openvaala_server.runtime.item_factory import new_item
from openvaala_server.runtime.ports import Services
from openvaala_server.runtime.session import LiveSession
from openvaala_server.runtime.settings import clean_title
from openvaala_server.runtime.typed_paths import absolute_path

if TYPE_CHECKING:
    from openvaala_server.runtime.inputs import Inputs

log = logging.getLogger(__name__)


class Owner(Services, Protocol):
    """What a conversation's life uses of the conversation manager."""

    conversations: dict[str, LiveConversation]
    inputs: Inputs

    async def open(self, cid: str) -> LiveConversation: ...


def create(
    runtime: Owner, cwd: str, agent: str | None, model: str | None, title: str | None
) -> LiveConversation:
    cwd = absolute_path(cwd, "cwd")
    if not os.path.isdir(cwd):
        raise errors.CwdMissing(f"the working directory {cwd} does not exist", cwd=cwd)
    agent_name = agent or runtime.config.default_agent
    agent_config = runtime.config.agents.get(agent_name)
    if agent_config is None:
        raise errors.NotFound(
            f"no agent {agent_name!r} (configured: {', '.join(runtime.config.agents)})",
            param="agent",
        )
    model_name = model or agent_config.model
    runtime.model_config(model_name)
    if title is not None:
        title = clean_title(title)
    cid = new_id()
    conv = LiveConversation(runtime, cid, Hub(cid, runtime.config.server.replay_events))
    conv.pending = PendingConversation(cwd, agent_name, model_name, title, r.utc_now())
    conv.root_session_id = new_id()
    root = conv.make_session(conv.root_session_id, None, agent_name, model_name, title or "", 0)
    root.model_chosen = model is not None
    # Usage counts the system prompt and the tool schemas from the first message on.
    conv.refresh_usage_estimate(root)
    runtime.conversations[cid] = conv
    evict_idle(runtime, keep=cid)
    return conv


def evict_idle(runtime: Owner, keep: str) -> None:
    """Unload conversations nobody watches or runs, past the configured number, oldest first.

    Everything they hold is on disk; a later open loads them again (with a new hub, so a
    client resubscribing with an old seq gets a fresh snapshot)."""
    excess = len(runtime.conversations) - runtime.config.server.loaded_conversations
    if excess <= 0:
        return
    for cid, conv in list(runtime.conversations.items()):
        if excess <= 0:
            break
        if cid != keep and conv.persisted and conv.is_dormant():
            del runtime.conversations[cid]
            excess -= 1


async def load(runtime: Owner, cid: str) -> LiveConversation:
    try:
        meta = await runtime.store_call(runtime.store.load_meta(cid))
    except errors.StorageFailed as exc:
        raise errors.ConversationUnreadable(
            f"conversation {cid} cannot be opened: {exc.message}"
        ) from None
    except meta_fold.MetaError as exc:
        raise errors.ConversationUnreadable(f"conversation {cid} cannot be opened: {exc}") from None
    if meta is None:
        raise errors.NotFound(f"no conversation {cid}", param="conversationId")
    conv = LiveConversation(runtime, cid, Hub(cid, runtime.config.server.replay_events))
    conv.meta = meta
    conv.cwd_exists = await directory_exists(meta.cwd)  # nobody to tell yet
    conv.root_session_id = meta.root_session_id
    # Only the last page of each session now, read from the end of its file: the screen can
    # be drawn at once. The rest loads in the background (`LiveConversation.ensure_history`).
    # A subagent session's page is not in the snapshot while it is at rest, as every one is
    # when loaded (`LiveSession.paged_on_demand`): none is read for it.
    shown = [sid for sid, s in meta.sessions.items() if s.parent_session_id is None]
    pages = await runtime.store_call(runtime.store.read_last_pages(cid, shown, SNAPSHOT_PAGE))
    for sid, smeta in meta.sessions.items():
        depth = 0
        parent = smeta.parent_session_id
        while parent and parent in meta.sessions and depth < 64:
            depth += 1
            parent = meta.sessions[parent].parent_session_id
        session = conv.make_session(
            sid, smeta.parent_session_id, smeta.agent, smeta.model, smeta.title, depth
        )
        session.model_chosen = smeta.model_chosen
        session.items, more = pages.get(sid, ([], True))
        session.history_complete = not more
    cut = meta.running_turns()
    if cut:
        await recover(runtime, conv, cut)
    later: list[LiveSession] = []
    for sid, session in conv.sessions.items():
        status = meta_fold.session_status(meta, sid)
        session.closed = status == "closed"
        session.last_status = last_status(status)
        if session.model in runtime.config.models and session.history_complete:
            # A closed subagent session's is estimated after the open's answer
            # (docs/design.md, "The cold open's snapshot first").
            if session.closed:
                later.append(session)
            else:
                conv.refresh_usage_estimate(session)
    conv.load_history_in_background()
    conv.estimate_later(later)
    return conv


async def recover(runtime: Owner, conv: LiveConversation, cut: list[meta_fold.TurnMeta]) -> None:
    """End turns a crash or a kill cut short, so nothing looks pending forever.

    Their unanswered tool calls get interrupted results and each turn a `server_stopped`
    notice (kept: every client and the model see why it stopped), then the end record.
    Items first: a crash in between leaves the turn open, and the next open completes it
    without writing anything twice."""
    for t in cut:
        session = conv.sessions.get(t.session_id)
        if session is None:
            continue
        if not session.history_complete:
            # A cut turn is at the end, but its calls may be further back than one page.
            session.items = await runtime.store_call(
                runtime.store.read_all_items(conv.conversation_id, session.session_id)
            )
            session.history_complete = True
        items: list[r.Item] = [
            new_item(
                r.TOOL_RESULT,
                session.session_id,
                t.turn_id,
                status=r.INTERRUPTED,
                callId=call["callId"],
                name=call.get("name", ""),
                output=recovery.STOPPED_RESULT,
                isError=True,
            )
            for call in recovery.unanswered_calls(session.items, t.turn_id)
        ]
        if not recovery.has_stopped_notice(session.items, t.turn_id):
            items.append(
                new_item(
                    r.NOTICE,
                    session.session_id,
                    t.turn_id,
                    status=r.COMPLETED,
                    kind=recovery.SERVER_STOPPED,
                    text=recovery.STOPPED_NOTICE,
                )
            )
        await conv.persist_items(session, items, publish_usage=False)
    ended: list[r.TurnEnded] = [
        {
            "type": r.TURN_ENDED,
            "sessionId": t.session_id,
            "turnId": t.turn_id,
            "status": "interrupted",
            "error": {
                "kind": recovery.SERVER_STOPPED,
                "message": "the server stopped during this turn",
            },
        }
        for t in cut
    ]
    await conv.append_meta(*ended)


async def recover_cut_turns(
    runtime: Owner,
) -> None:
    """At start: close turns a crash left open, so lists show them interrupted. The index
    names the conversations that have one, so a start costs the same with 50 or 50,000."""
    for cid in await runtime.store.running_conversations():
        try:
            await runtime.open(cid)
        except errors.OpenVaalaError as exc:
            log.warning("could not recover %s: %s", cid, exc)


async def delete(runtime: Owner, cid: str) -> None:
    conv = await runtime.open(cid)
    if conv.any_turn_running():
        raise errors.TurnRunning("a turn is running: interrupt it before deleting the conversation")
    if conv.persisted:
        await runtime.store_call(runtime.store.delete_conversation(cid))
    runtime.inputs.forget(conv)
    runtime.conversations.pop(cid, None)
    conv.hub.publish(methods.CONVERSATION_DELETED, {})
    conv.hub.close()
    runtime.list_feed.deleted(cid)
