"""The conversation manager: every conversation the server owns, and the operations clients ask
for (it was called `Runtime`; the package `runtime/` is the manager and the parts it is built of).

Handlers in `api/` call these methods; they validate what only the runtime can know (is a turn
running, does the working directory exist, is the model configured) and raise `errors.*`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
import orjson

from openvaala_server import errors
from openvaala_server.config import Config, ModelConfig, config_path
from openvaala_server.domain import meta as meta_fold
from openvaala_server.domain import records as r
from openvaala_server.domain import recovery, snippets, tool_names
from openvaala_server.domain.approvals import Answer
from openvaala_server.domain.compaction_policy import decide
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.images import Image
from openvaala_server.domain.inbox import Input, InputGone, Mode
from openvaala_server.domain.inheritance import tool_allowed
from openvaala_server.domain.joined import list_page
from openvaala_server.domain.permission_mode import apply_mode
from openvaala_server.domain.permissions import Confinement, Permissions
from openvaala_server.domain.status import last_status
from openvaala_server.mcp.manager import LISTINGS_FILE, McpManager
from openvaala_server.models.base import Provider
from openvaala_server.models.registry import make_provider
from openvaala_server.protocol import methods
from openvaala_server.runtime import early, history, memory, residency
from openvaala_server.runtime import images as runtime_images
from openvaala_server.runtime.broadcast import Broadcast
from openvaala_server.runtime.compaction import compact
from openvaala_server.runtime.context_view import copy_pins, history_tools
from openvaala_server.runtime.conversation import (
    SNAPSHOT_PAGE,
    LiveConversation,
    PendingConversation,
    directory_exists,
    new_item,
)
from openvaala_server.runtime.file_hosts import FileHosts
from openvaala_server.runtime.hub import Hub
from openvaala_server.runtime.list_feed import ListFeed
from openvaala_server.runtime.session import LiveSession, LiveTurn
from openvaala_server.runtime.session_mcp import SessionServers
from openvaala_server.runtime.subagents import (
    SubagentService,
    effective_permissions,
    effective_tools,
)
from openvaala_server.runtime.turn import TurnRunner
from openvaala_server.store.index import Summary, parse_summaries
from openvaala_server.store.paths import NotFound as StoreNotFound
from openvaala_server.structured import Activity, ActivityCancelled, Supervisor
from openvaala_server.tools.plan import UPDATE_PLAN_TOOL, UpdatePlanTool
from openvaala_server.tools.registry import tools_for as builtin_tools
from openvaala_server.tools.sandbox import ensure_private_dir, ensure_private_file
from openvaala_server.tools.web_fetch import WebFetchTool

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.reload import ConfigWatcher
    from openvaala_server.store.interface import ConversationStore
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)
T = TypeVar("T")
TITLE_MAX = 200


# How many input ids are remembered, to tell an input that ended from one that never was.
INPUT_IDS_KEPT = 10_000


class ConversationManager:
    """Owns the loaded conversations and implements the services their parts use
    (`runtime/ports.Services`)."""

    def __init__(
        self,
        config: Config,
        store: ConversationStore,
        *,
        providers: Callable[[ModelConfig], Provider] = make_provider,
    ) -> None:
        self.config = config
        self.store = store
        # What makes a configured model's provider: the registry; unit tests pass a scripted one.
        self._make_provider = providers
        self.conversations: dict[str, LiveConversation] = {}
        # By model name, with the configuration each was made from (a reload may change it).
        self._providers: dict[str, tuple[ModelConfig, Provider]] = {}
        self._open_locks: dict[str, asyncio.Lock] = {}
        self._persist_locks: dict[str, asyncio.Lock] = {}
        # Which conversation and session a waiting input belongs to, for input/* by id.
        self._inputs: dict[str, tuple[str, str]] = {}
        # The ids of the inputs this daemon took lately, waiting or not: an id not among them
        # was never an input here (`not_found`), one among them is `input_consumed`.
        self._input_ids: OrderedDict[str, None] = OrderedDict()
        self.shutting_down = False
        # Owns turns and MCP servers; entered by the server for the daemon's life (server.py).
        self.tasks = Supervisor("runtime")
        self.subagents = SubagentService(self)
        # MCP servers, started when a turn of an agent naming them first needs them, shared.
        self.mcp = McpManager(config.mcp_servers, self.tasks, store.data_dir.root / LISTINGS_FILE)
        # Daemon-wide notifications (config/reloaded, config/error), and the config file's state.
        self.broadcast = Broadcast()
        self.mcp.on_status = partial(self.broadcast.publish, methods.MCP_STATUS_CHANGED)
        self.list_feed = ListFeed()  # conversation/listChanged to whoever watches the list
        self.file_hosts = FileHosts()  # editors that hold conversations' files (files/host)
        self.session_mcp = SessionServers(self.tasks)  # MCP servers a client brought for one
        self.config_watch: ConfigWatcher | None = None

    # -- services used by the loop -------------------------------------------------------

    async def store_call(self, call: Awaitable[T]) -> T:
        """Run a store operation; an I/O failure becomes a clear `storage_failed` error."""
        try:
            return await call
        except errors.OpenVaalaError:
            raise
        except Exception as exc:
            failure = errors.storage_failure(exc)
            if failure is None:
                raise
            log.error("%s", failure.message)
            raise failure from None

    def config_for(self, session: LiveSession) -> Config:
        """The configuration `session` runs with: its running turn's, else the current one."""
        turn = session.turn
        return turn.config if turn is not None and turn.config is not None else self.config

    def model_config(self, name: str, config: Config | None = None) -> ModelConfig:
        config = config or self.config
        model = config.models.get(name)
        if model is None:
            raise errors.ModelMissing(
                # Also the text of a turn's failure notice, which every client shows as it is:
                # no protocol method names (the kind and `available` say it to a program).
                f"model {name!r} is not configured on this machine: choose another model for "
                f"this conversation (available: {', '.join(config.models)})",
                model=name,
                available=list(config.models),
            )
        return model

    def require_agent(self, name: str, config: Config | None = None) -> None:
        """An agent the conversation names but this machine lacks (after a move or a config
        edit) is refused like a missing model: running it would mean no prompt and no tools."""
        config = config or self.config
        if name not in config.agents:
            raise errors.AgentMissing(
                f"agent {name!r} is not configured on this machine: choose another agent for "
                f"this conversation (available: {', '.join(config.agents)})",
                agent=name,
                available=list(config.agents),
            )

    def provider(self, name: str, config: Config | None = None) -> Provider:
        """The provider of model `name` as `config` (default: the current one) defines it."""
        model = self.model_config(name, config)
        cached = self._providers.get(name)
        if cached is not None and cached[0] == model:
            return cached[1]
        provider = self._make_provider(model)
        if model == self.config.models.get(name):
            self._providers[name] = (model, provider)
            if cached is not None:  # made from an older config: its connections go
                cached[1].retire()
        else:  # a running turn's older model: not kept, its connection closes after this call
            provider.retire()
        return provider

    def kept_providers(self) -> list[Provider]:
        """Every provider kept for later calls: a release (runtime/warmup.py `forget`) clears
        what each holds of a history, not only the one of the session's current model."""
        return [provider for _, provider in self._providers.values()]

    def retire_stale_providers(self) -> None:
        """After a reload: providers whose model changed or went away release their connections
        (once the turns still streaming from them are done)."""
        for name, (model, provider) in list(self._providers.items()):
            if self.config.models.get(name) != model:
                del self._providers[name]
                provider.retire()

    def tools_for(self, conv: Conversation, session: LiveSession) -> dict[str, Tool]:
        # A subagent's: those its agent lists that every agent above it has (docs/security.md,
        # "Subagents").
        config = self.config_for(session)
        names = effective_tools(config, conv.sessions, session)
        tools = {t.spec.name: t for t in builtin_tools(names)}
        if tool_names.WEB_FETCH in names:  # with the limits of its [web_fetch] table
            tools[tool_names.WEB_FETCH] = WebFetchTool(config.web_fetch)
        if UPDATE_PLAN_TOOL in names:  # bound to the session whose plan it replaces
            tools[UPDATE_PLAN_TOOL] = UpdatePlanTool(partial(conv.set_plan, session))
        tools.update(self.subagents.tools_for(conv, session))
        tools.update(memory.tools_for(conv, session))
        # As last listed: `TurnRunner` starts the servers before each model call.
        mcp = {t.spec.name: t for t in self.mcp.current_tools(names)}
        if session.session_id == conv.root_session_id:  # a client's servers: its agent's only
            mcp = self.session_mcp.with_tools(conv.conversation_id, mcp)
        tools.update(mcp)
        tools.update(history_tools(conv, session, lambda: history.root_history(self, conv)))
        # The hooks above read the agent's own list: what the chain does not give goes.
        return {n: t for n, t in tools.items() if n in mcp or tool_allowed(names, n)}

    def permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions:
        """What the session's calls run under: its own (`own_permissions_for`), narrowed by
        the conversation's permission mode (docs/security.md, "Permission modes")."""
        return apply_mode(self.own_permissions_for(conv, session), conv.permission_mode)

    def own_permissions_for(self, conv: Conversation, session: LiveSession) -> Permissions:
        """The session's agent's permissions, narrowed by every agent above it (a subagent
        never gets more than its parent: docs/security.md, "Subagents")."""
        return effective_permissions(self.config_for(session), conv.sessions, session)

    def confinement_for(self, conv: Conversation, session: LiveSession) -> Confinement:
        """The limits of a tool call of this session (docs/security.md)."""
        perms = self.permissions_for(conv, session)
        cfg_file = self.config.path or config_path()
        protected: tuple[Path, ...] = (self.store.data_dir.root, cfg_file)
        if not os.environ.get("OPENVAALA_CONFIG") and cfg_file == config_path():
            # The default config directory holds only ours; one named by OPENVAALA_CONFIG may
            # be any directory (a project's, a test's), so only the file itself is hidden there.
            protected += (cfg_file.parent,)
            # Hidden even before the user writes a config: a tool must not create it first.
            ensure_private_dir(cfg_file.parent)
        # Key files (`openvaala setup`) wherever they are: a command must not read a key.
        key_files = [Path(m.api_key_file) for m in self.config.models.values() if m.api_key_file]
        for key_file in key_files:
            ensure_private_file(key_file)  # hidden even before `openvaala setup` writes it
        protected += tuple(key_files)
        hidden = set(self.config.secret_env_names())
        hidden.update(k for k in os.environ if k.startswith("OPENVAALA_"))
        return Confinement(
            mode=perms.sandbox,
            network=perms.network or perms.sandbox == "off",
            protected=tuple(p.resolve() for p in protected),
            hidden_env=frozenset(hidden),
            limits=perms.limits,
        )

    # -- conversations -------------------------------------------------------------------

    def create(
        self, cwd: str, agent: str | None, model: str | None, title: str | None
    ) -> LiveConversation:
        if not os.path.isabs(cwd):
            raise errors.InvalidParams('"cwd" must be an absolute path', param="cwd")
        cwd = os.path.normpath(cwd)
        if not os.path.isdir(cwd):
            raise errors.CwdMissing(f"the working directory {cwd} does not exist", cwd=cwd)
        agent_name = agent or self.config.default_agent
        agent_config = self.config.agents.get(agent_name)
        if agent_config is None:
            raise errors.NotFound(
                f"no agent {agent_name!r} (configured: {', '.join(self.config.agents)})",
                param="agent",
            )
        model_name = model or agent_config.model
        self.model_config(model_name)
        if title is not None:
            title = _clean_title(title)
        cid = new_id()
        conv = LiveConversation(self, cid, Hub(cid, self.config.server.replay_events))
        conv.pending = PendingConversation(cwd, agent_name, model_name, title, r.utc_now())
        conv.root_session_id = new_id()
        root = conv.make_session(conv.root_session_id, None, agent_name, model_name, title or "", 0)
        root.model_chosen = model is not None
        # Usage counts the system prompt and the tool schemas from the first message on.
        conv.refresh_usage_estimate(root)
        self.conversations[cid] = conv
        self._evict_idle(keep=cid)
        return conv

    async def open(self, cid: str) -> LiveConversation:
        conv = self.conversations.get(cid)
        if conv is not None:
            return conv
        lock = self._open_locks.setdefault(cid, asyncio.Lock())
        async with lock:
            conv = self.conversations.get(cid)
            if conv is None:
                conv = await self._load(cid)
                self.conversations[cid] = conv
                self._evict_idle(keep=cid)
        self._open_locks.pop(cid, None)
        return conv

    def _evict_idle(self, keep: str) -> None:
        """Unload conversations nobody watches or runs, past the configured number, oldest first.

        Everything they hold is on disk; a later open loads them again (with a new hub, so a
        client resubscribing with an old seq gets a fresh snapshot)."""
        excess = len(self.conversations) - self.config.server.loaded_conversations
        if excess <= 0:
            return
        for cid, conv in list(self.conversations.items()):
            if excess <= 0:
                break
            if cid != keep and conv.persisted and conv.is_dormant():
                del self.conversations[cid]
                excess -= 1

    async def _load(self, cid: str) -> LiveConversation:
        try:
            meta = await self.store_call(self.store.load_meta(cid))
        except errors.StorageFailed as exc:
            raise errors.ConversationUnreadable(
                f"conversation {cid} cannot be opened: {exc.message}"
            ) from None
        except meta_fold.MetaError as exc:
            raise errors.ConversationUnreadable(
                f"conversation {cid} cannot be opened: {exc}"
            ) from None
        if meta is None:
            raise errors.NotFound(f"no conversation {cid}", param="conversationId")
        conv = LiveConversation(self, cid, Hub(cid, self.config.server.replay_events))
        conv.meta = meta
        conv.cwd_exists = await directory_exists(meta.cwd)  # nobody to tell yet
        conv.root_session_id = meta.root_session_id
        # Only the last page of each session now, read from the end of its file: the screen can
        # be drawn at once. The rest loads in the background (`LiveConversation.ensure_history`).
        pages = await self.store_call(
            self.store.read_last_pages(cid, list(meta.sessions), SNAPSHOT_PAGE)
        )
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
            session.items, more = pages[sid]
            session.history_complete = not more
        cut = meta.running_turns()
        if cut:
            await self._recover(conv, cut)
        for sid, session in conv.sessions.items():
            status = meta_fold.session_status(meta, sid)
            session.closed = status == "closed"
            session.last_status = last_status(status)
            if session.model in self.config.models and session.history_complete:
                conv.refresh_usage_estimate(session)
        conv.load_history_in_background()
        return conv

    async def _recover(self, conv: LiveConversation, cut: list[meta_fold.TurnMeta]) -> None:
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
                session.items = await self.store_call(
                    self.store.read_all_items(conv.conversation_id, session.session_id)
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

    async def recover_cut_turns(self) -> None:
        """At start: close turns a crash left open, so lists show them interrupted. The index
        names the conversations that have one, so a start costs the same with 50 or 50,000."""
        for cid in await self.store.running_conversations():
            try:
                await self.open(cid)
            except errors.OpenVaalaError as exc:
                log.warning("could not recover %s: %s", cid, exc)

    async def list_conversations(
        self, archived: bool, search: str | None, limit: int, cursor: str | None
    ) -> p.ListResult:
        try:
            rows, next_cursor = await self.store_call(
                self.store.list_summaries(
                    archived=archived, search=search, limit=limit, cursor=cursor
                )
            )
        except ValueError:
            raise errors.InvalidParams(
                '"cursor" is not one this server gave out', param="cursor"
            ) from None
        # With a search, each row that matched in a message says where (docs/protocol.md).
        found = (
            await self.store_call(self.store.search_snippets([cid for cid, _ in rows], search))
            if search and rows
            else {}
        )
        # Stored summaries go out as they are (no dict per row); only a conversation loaded
        # here has a fresher status than its last finished turn.
        conversations: list[Summary | orjson.Fragment] = []
        for cid, text in rows:
            live = self.conversations.get(cid)
            status = live.status if live is not None and live.sessions else None
            if status is not None or cid in found:
                [summary] = parse_summaries([text])
                if status is not None:
                    summary["status"] = status
                if cid in found:
                    summary["snippet"] = snippets.from_marked(found[cid])
                conversations.append(summary)
            else:
                conversations.append(orjson.Fragment(text))
        # A pre-encoded row is the same summary on the wire (protocol/payloads.ListResult).
        result: p.ListResult = {"conversations": cast("list[p.ConversationSummary]", conversations)}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return result

    async def rename(self, cid: str, title: str) -> None:
        conv = await self.open(cid)
        title = _clean_title(title)
        if conv.pending is not None:
            conv.pending.title = title
            conv.root.title = title
        else:
            await conv.append_meta(
                {"type": r.CONVERSATION_RENAMED, "title": title, "titleSource": "user"}
            )
            conv.root.title = title
        conv.publish_updated()

    async def set_archived(self, cid: str, archived: bool) -> None:
        conv = await self.open(cid)
        if conv.meta is None:
            raise errors.NotFound(
                f"conversation {cid} is not saved yet: it is saved with its first message",
                param="conversationId",
            )
        if conv.meta.archived != archived:
            record: r.ConversationArchived = (
                {"type": r.CONVERSATION_ARCHIVED}
                if archived
                else {"type": r.CONVERSATION_UNARCHIVED}
            )
            await conv.append_meta(record)
        conv.publish_updated()

    async def delete(self, cid: str) -> None:
        conv = await self.open(cid)
        if conv.any_turn_running():
            raise errors.TurnRunning(
                "a turn is running: interrupt it before deleting the conversation"
            )
        if conv.persisted:
            await self.store_call(self.store.delete_conversation(cid))
        for session in conv.sessions.values():
            for inp in session.inbox.waiting:
                self._inputs.pop(inp.input_id, None)
        self.conversations.pop(cid, None)
        conv.hub.publish(methods.CONVERSATION_DELETED, {})
        conv.hub.close()
        self.list_feed.deleted(cid)

    async def set_model(self, cid: str, sid: str | None, model: str) -> None:
        conv = await self.open(cid)
        await conv.ensure_history()
        session = conv.session(sid)
        self.model_config(model)
        await self._switch_model(conv, session, model, chosen=True)

    async def _switch_model(
        self, conv: LiveConversation, session: LiveSession, model: str, *, chosen: bool
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
        config = self.config.models[model]
        session.usage.context_window = config.context_window
        session.usage.max_output_tokens = config.max_output_tokens
        conv.refresh_usage_estimate(session)
        conv.publish_session(session)
        conv.publish_usage(session)
        if session.session_id == conv.root_session_id:
            conv.publish_updated()

    async def set_agent(self, cid: str, agent: str) -> None:
        """Choose the root session's agent (its prompt and tools); it brings its model unless the
        user chose one for this conversation (docs/protocol.md, conversation/setAgent)."""
        conv = await self.open(cid)
        await conv.ensure_history()
        self.require_agent(agent)
        _refuse_while_running(conv, "change the agent")
        root = conv.root
        if conv.meta is not None:
            await conv.append_meta(
                {"type": r.SESSION_AGENT_SET, "sessionId": root.session_id, "agent": agent}
            )
        elif conv.pending is not None:
            conv.pending.agent = agent
        root.agent = agent
        # An agent brings its model, unless the user chose one for this conversation.
        brings = self.config.agents[agent]
        switch = brings.model_set and not root.model_chosen and brings.model != root.model
        if switch and brings.model in self.config.models:
            await self._switch_model(conv, root, brings.model, chosen=False)
            return  # published with the model (_switch_model)
        if root.model in self.config.models:
            conv.refresh_usage_estimate(root)
        conv.publish_session(root)
        conv.publish_usage(root)
        conv.publish_updated()

    async def set_cwd(self, cid: str, cwd: str) -> None:
        """Point the conversation at another working directory (its own moved or is gone)."""
        if not os.path.isabs(cwd):
            raise errors.InvalidParams('"cwd" must be an absolute path', param="cwd")
        cwd = os.path.normpath(cwd)  # noqa: ASYNC240 - pure string work, no I/O
        conv = await self.open(cid)
        await conv.ensure_history()
        if not await directory_exists(cwd):
            raise errors.CwdMissing(f"the directory {cwd} does not exist", cwd=cwd)
        _refuse_while_running(conv, "change the working directory")
        conv.cwd_exists = True  # just checked
        if conv.meta is not None:
            await conv.append_meta({"type": r.CONVERSATION_CWD_SET, "cwd": cwd})
        elif conv.pending is not None:
            conv.pending.cwd = cwd
        for session in conv.sessions.values():
            session.surroundings = None  # the new directory's, gathered at the next turn
            session.surroundings_loading = None
            if session.model in self.config.models and session.history_complete:
                conv.refresh_usage_estimate(session)
                conv.publish_usage(session)
        conv.publish_updated()

    # -- history -------------------------------------------------------------------------

    async def adopt(
        self, created: dict[str, Any], items: list[r.Item], *, images_from: str | None = None
    ) -> LiveConversation:
        """Write a new conversation that starts with `items` (a fork), and open it. The images
        the items refer to are copied from conversation `images_from` first."""
        cid = created["conversationId"]
        await self.store_call(self.store.create_conversation(created))
        if images_from is not None:
            await runtime_images.copy(self, images_from, cid, items)
        if items:
            await self.store_call(self.store.append_items(cid, created["rootSessionId"], items))
        return await self.open(cid)

    async def fork(self, cid: str, up_to_item_id: str | None) -> p.ConversationResult:
        conv = await self.open(cid)
        await conv.ensure_history()
        new = await history.fork(self, conv, up_to_item_id, pinned=conv.pinned(conv.root))
        await copy_pins(conv, new)
        info = new.info()
        self.list_feed.changed(info)
        return {"conversation": info}

    async def rewind(
        self, cid: str, message_id: str, restore_files: bool = False, force: bool = False
    ) -> p.RewindResult:
        conv = await self.open(cid)
        await conv.ensure_history()
        items, text = history.rewind_target(conv, message_id)
        files = None
        if restore_files:  # first: a conflict refuses the whole rewind (docs/protocol.md)
            _refuse_while_running(conv, "restore files")
            turn_id = next(i.get("turnId") for i in conv.root.items if i["itemId"] == message_id)
            files = await conv.checkpoints.restore_since(turn_id, force)
        new = await history.fork(
            self, conv, kind="rewind", items=items, pinned=conv.pinned(conv.root)
        )
        await copy_pins(conv, new)
        # The message's images come back with its text (copied, so the new one serves them).
        images = await runtime_images.carry_over(self, conv, new.conversation_id, message_id)
        info = new.info()
        self.list_feed.changed(info)
        result: p.RewindResult = {"conversation": info, "composerText": text}
        if images:
            result["composerImages"] = images
        if files is not None:
            result["files"] = files
        return result

    async def undo_files(self, cid: str, force: bool) -> p.RestoreResult:
        """Put back the files the last turn that changed any changed (conversation/undo)."""
        conv = await self.open(cid)
        _refuse_while_running(conv, "undo")
        return await conv.checkpoints.undo_last(force)

    async def read(self, cid: str, sid: str | None, before: str | None, limit: int) -> p.ReadResult:
        conv = await self.open(cid)
        session = conv.session(sid)
        conv.residency.read()  # the next page may follow: keep the history a while
        joins_original = session.session_id == conv.root_session_id and _has_older_history(conv)
        if not joins_original:
            if session.history_complete:
                return _page_of(session, before, limit)
            # Partly loaded (just opened, or let go): the held tail and the journal answer it,
            # without waiting for the whole history (docs/design.md "Performance at scale").
            page = await self._read_partial(conv, session, before, limit)
            if page is not None:
                return page
        await conv.ensure_history()
        if joins_original:  # a fork's history joined with its original's
            return await history.root_page(self, conv, before, limit)
        return _page_of(session, before, limit)

    async def _read_partial(
        self, conv: LiveConversation, session: LiveSession, before: str | None, limit: int
    ) -> p.ReadResult | None:
        """A page of a partly loaded history from its held tail and its journal; None when
        the journal cannot say (an item it does not find): then the whole history decides."""
        split = residency.split_page(session, before, limit)
        if split is None:
            return None
        if split.before is None:
            return {"items": split.held, "hasMore": True}  # more lies before the held tail
        try:
            older, more = await self.store_call(
                self._journal_page(conv.conversation_id, session.session_id, split)
            )
        except _NoSuchItem:
            return None
        return {"items": [*older, *split.held], "hasMore": more}

    async def _journal_page(
        self, cid: str, sid: str, split: residency.Split
    ) -> tuple[list[r.Item], bool]:
        try:
            return await self.store.read_items(
                cid, sid, before_item=split.before, limit=split.count
            )
        except StoreNotFound:
            raise _NoSuchItem from None

    async def compact_now(self, cid: str) -> p.CompactResult:
        """Manual compaction of the root agent's history, only while nothing runs or waits."""
        conv = await self.open(cid)
        await conv.ensure_history()
        for session in conv.sessions.values():
            if session.turn is not None or session.compacting:
                raise errors.NotIdle("a turn is running: compact when it has finished")
            if session.inbox.waiting:
                raise errors.NotIdle("input is waiting: compact when it has been handled")
        root = conv.root
        if conv.meta is None:
            return {"compacted": False, "reason": "the conversation has no messages yet"}
        root.compacting = True
        early.cancel(root)
        conv.publish_session(root)
        # By hand, everything but the latest step is summarized. A task, so turn/interrupt
        # can stop it like a turn.
        # An activity of the runtime's supervisor, so shutdown cancels and waits for it too.
        decision = decide("manual", early.context_state(conv, root))
        task = self.tasks.start_job(
            partial(compact, conv, root, decision.reason, keep_ratio=decision.keep_ratio),
            f"compaction-{cid}",
        )
        root.compaction_task = task
        try:
            summary = await task.result()
        except ActivityCancelled:
            return {"compacted": False, "reason": "interrupted"}
        except anyio.get_cancelled_exc_class():
            task.cancel()  # this request itself was cancelled: stop the compaction too
            raise
        finally:
            root.compacting = False
            root.compaction_task = None
            conv.publish_session(root)
            self._start_waiting(conv, root)
        if summary is None:
            return {"compacted": False, "reason": "the history is too short to compact"}
        return {"compacted": True, "summaryItemId": summary["itemId"]}

    # -- input and turns -----------------------------------------------------------------

    async def persist_first(self, conv: LiveConversation, text: str) -> None:
        """Write a pending conversation to disk with its first message (`text` titles it)."""
        lock = self._persist_locks.setdefault(conv.conversation_id, asyncio.Lock())
        async with lock:
            await conv.ensure_persisted(text)
        self._persist_locks.pop(conv.conversation_id, None)

    async def send_input(
        self,
        cid: str,
        sid: str | None,
        text: str,
        mode: Mode,
        origin: str = "user",
        from_session_id: str | None = None,
        *,
        images: list[Image] | None = None,
    ) -> p.SendResult:
        conv = await self.open(cid)
        session = conv.session(sid)
        await conv.ensure_history()
        if self.shutting_down:
            raise errors.Busy("the server is shutting down")
        # A message from another session (a subagent's task, a report) comes from a turn that
        # checked the directory as it started: no thread hop here, so a spawn has registered
        # its child before the parent's next tool call of the same response (`wait`) runs.
        usable = conv.cwd_exists if from_session_id is not None else await conv.check_cwd()
        if not usable:
            raise errors.CwdMissing(
                f"the working directory {conv.cwd} no longer exists: recreate it, or point the "
                "conversation at another one with conversation/setCwd",
                cwd=conv.cwd,
            )
        self.require_agent(session.agent)
        runtime_images.require_vision(self.model_config(session.model), len(images or ()))
        if session.closed:
            raise errors.NotIdle("this subagent session was closed")
        if not conv.persisted:
            await self.persist_first(conv, text)
        refs = await runtime_images.store(self, cid, images or ())
        # From here on nothing awaits: the inbox and the turn change together.
        inp = Input(new_id(), text, mode, origin, from_session_id)  # type: ignore[arg-type]
        inp.images = refs
        self._input_ids[inp.input_id] = None
        while len(self._input_ids) > INPUT_IDS_KEPT:
            self._input_ids.popitem(last=False)
        busy = session.turn is not None or session.compacting
        disposition = session.inbox.add(inp, turn_running=busy)
        if disposition == "started":
            turn = self.start_turn(conv, session, [inp], by_request=True)
            # Answer once `turn/started` is out: a client reading "started" has then seen the
            # turn start, never an idle session that is in fact about to run. A message that
            # could not be saved fails the request instead (docs/protocol.md, input/send).
            await _until_announced(turn)
            if turn.refused is not None:
                raise turn.refused
        else:
            self._inputs[inp.input_id] = (cid, session.session_id)
            conv.publish_inbox(session)
            conv.publish_session(session)
            if disposition == "jumped":
                self.interrupt_session(conv, session, "jump")
        return {"inputId": inp.input_id, "disposition": disposition}

    def start_turn(
        self,
        conv: LiveConversation,
        session: LiveSession,
        inputs: list[Input],
        *,
        by_request: bool = False,
    ) -> LiveTurn:
        turn = LiveTurn(new_id(), config=self.config, by_request=by_request)
        session.turn = turn
        runner = TurnRunner(conv, session, turn)
        turn.task = self.tasks.spawn(partial(runner.run, inputs), f"turn-{turn.turn_id}")
        return turn

    def interrupt_session(self, conv: Conversation, session: LiveSession, reason: str) -> bool:
        if reason == "user":
            session.inbox.on_user_interrupt()
        if session.compaction_task is not None and not session.compaction_task.finished:
            session.compaction_task.cancel()
            return True
        turn = session.turn
        if turn is None or turn.task is None:
            return False
        if turn.stop_reason is None:
            turn.stop_reason = reason
            session.interrupt()
        return True

    async def interrupt(self, cid: str, sid: str | None) -> p.InterruptResult:
        conv = await self.open(cid)
        session = conv.session(sid)
        return {"interrupted": self.interrupt_session(conv, session, "user")}

    def on_turn_ended(
        self,
        conv: Conversation,
        session: LiveSession,
        status: str,
        error: r.ErrorInfo | None,
    ) -> None:
        """Called by the loop as a turn ends (synchronously): start what waits next."""
        self.subagents.on_turn_ended(conv, session, status, error)
        if error and error.get("kind") == errors.StorageFailed.kind:
            # The disk refused a write: starting the next turn would fail the same way. What
            # waits stays waiting until the user acts (send, jump, steer).
            return
        # The loaded conversation itself (the loop names it by its interface): none once deleted.
        live = self.conversations.get(conv.conversation_id)
        if live is None:
            return
        self._start_waiting(live, session)
        early.maybe_prepare(live, session)
        live.residency.check()  # nobody may be watching (runtime/residency.py)

    def return_inputs(self, conv: Conversation, session: LiveSession, inputs: list[Input]) -> None:
        """Put inputs a turn could not save back at the front of the waiting list, as queued."""
        session.inbox.put_back(inputs)
        for inp in inputs:
            self._inputs[inp.input_id] = (conv.conversation_id, session.session_id)
        conv.publish_inbox(session)

    def _start_waiting(self, conv: LiveConversation, session: LiveSession) -> None:
        """If input waits and the session is free, start the next turn with it."""
        if self.shutting_down or conv.conversation_id not in self.conversations:
            return
        if session.turn is not None or session.compacting:
            return
        nxt = session.inbox.next_turn()
        if nxt:
            for inp in nxt:
                self._inputs.pop(inp.input_id, None)
            conv.publish_inbox(session)
            self.start_turn(conv, session, nxt)

    def drop_waiting_inputs(self, session: LiveSession) -> None:
        """Forget every input waiting in `session` (it was closed): none will ever run."""
        for inp in session.inbox.drop_all():
            self._inputs.pop(inp.input_id, None)

    def _owner(self, input_id: str) -> tuple[LiveConversation, LiveSession]:
        owner = self._inputs.get(input_id)
        conv = self.conversations.get(owner[0]) if owner else None
        if owner is None and input_id not in self._input_ids:
            raise errors.NotFound(f"no input {input_id} on this daemon", param="inputId")
        if owner is None or conv is None:
            raise errors.InputConsumed(
                f"input {input_id} is no longer waiting: it was already handled or withdrawn",
                inputId=input_id,
            )
        return conv, conv.sessions[owner[1]]

    def edit_input(self, input_id: str, text: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.edit(input_id, text)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)

    def withdraw_input(self, input_id: str) -> p.WithdrawResult:
        conv, session = self._owner(input_id)
        try:
            inp = session.inbox.withdraw(input_id)
        except InputGone:
            self._consumed(input_id)
        self._inputs.pop(input_id, None)
        conv.publish_inbox(session)
        conv.publish_session(session)
        result: p.WithdrawResult = {"text": inp.text}
        if inp.images:
            result["images"] = inp.images
        return result

    def steer_input(self, input_id: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.steer(input_id)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)
        self._start_waiting(conv, session)

    def jump_input(self, input_id: str) -> None:
        conv, session = self._owner(input_id)
        try:
            session.inbox.jump(input_id)
        except InputGone:
            self._consumed(input_id)
        conv.publish_inbox(session)
        if not self.interrupt_session(conv, session, "jump"):
            self._start_waiting(conv, session)

    def _consumed(self, input_id: str) -> None:
        self._inputs.pop(input_id, None)
        raise errors.InputConsumed(
            f"input {input_id} is no longer waiting: it was already handled or withdrawn",
            inputId=input_id,
        )

    # -- approvals -----------------------------------------------------------------------

    async def respond_approval(
        self, cid: str, approval_id: str, decision: Answer, message: str | None
    ) -> p.RespondResult:
        """An answer to `approval/requested` from any client; the first one wins."""
        conv = await self.open(cid)
        return conv.approvals.resolve(approval_id, decision, message or None)

    # -- lifecycle -----------------------------------------------------------------------

    async def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every running turn (kept as interrupted) and wait until it is all on disk."""
        self.shutting_down = True
        tasks: list[Activity] = []
        for conv in self.conversations.values():
            for session in conv.sessions.values():
                early.cancel(session)
                if session.turn is not None and session.turn.task is not None:
                    tasks.append(session.turn.task)
                    self.interrupt_session(conv, session, "shutdown")
        with anyio.move_on_after(timeout):
            for task in tasks:
                await task.wait()
        await self.mcp.shutdown()
        await self.session_mcp.shutdown()
        providers = [provider for _, provider in self._providers.values()]
        self._providers.clear()
        await asyncio.gather(*(provider.aclose() for provider in providers))
        log.info("closed the connections of %d model providers", len(providers))


class _NoSuchItem(Exception):
    """The journal has no such item (store_call would make the store's NotFound a failure)."""


def _has_older_history(conv: LiveConversation) -> bool:
    """A fork made after a compaction: its root's older items are its original's."""
    forked = conv.meta.forked_from if conv.meta else None
    return bool(forked and forked.get("olderHistory"))


def _page_of(session: LiveSession, before: str | None, limit: int) -> p.ReadResult:
    """The last `limit` items of the session's history before the item `before` (the end
    without one), found by its position index: the same at any length."""
    page = list_page(session.items, before, limit, session.positions)
    if page is None:
        raise errors.NotFound(f"no item {before} in this session", param="beforeItem")
    return {"items": page.items, "hasMore": page.has_more}


def _refuse_while_running(conv: LiveConversation, what: str) -> None:
    for session in conv.sessions.values():
        if session.turn is not None or session.compacting:
            raise errors.TurnRunning(f"a turn is running: {what} when it has finished")


def _clean_title(title: str) -> str:
    title = " ".join(title.split())
    if not title:
        raise errors.InvalidParams("the title must not be empty", param="title")
    if len(title) > TITLE_MAX:
        raise errors.InvalidParams(
            f"the title is longer than {TITLE_MAX} characters", param="title"
        )
    return title


async def _until_announced(turn: LiveTurn) -> None:
    """Until the turn has published `turn/started` or is over (its runner always starts, even
    when cancelled at once, and sets `announced` as it ends)."""
    await turn.announced.wait()
