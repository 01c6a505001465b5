"""The JSON-RPC methods: read params, call the runtime, shape the result. No logic of their own."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

from openvaala_server import __version__, errors
from openvaala_server.api.command_methods import command_methods
from openvaala_server.api.connection import Connection, Reply
from openvaala_server.api.context_methods import context_methods
from openvaala_server.api.debug_methods import debug_methods
from openvaala_server.api.directory_methods import directory_methods
from openvaala_server.api.file_host_methods import file_host_methods
from openvaala_server.api.mcp_methods import mcp_methods
from openvaala_server.api.memory_methods import memory_methods
from openvaala_server.api.session_mcp_methods import session_mcp_methods
from openvaala_server.domain.approvals import ANSWERS
from openvaala_server.domain.bundle import ON_CONFLICT
from openvaala_server.domain.inbox import MODES
from openvaala_server.domain.permission_mode import PERMISSION_MODES
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol import validate
from openvaala_server.protocol.json_types import JsonMapping, JsonObject
from openvaala_server.protocol.params import Params
from openvaala_server.runtime import bundles, history, permission_mode, resume
from openvaala_server.runtime import images as runtime_images
from openvaala_server.runtime.context_view import usage_wire

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

PROTOCOL_VERSION = 1
# Checked against its TypedDict by its handler, not here: a refused `files/respond` also fails
# the tool call waiting for it at once (api/file_host_methods.py).
CHECKED_BY_HANDLER: Final = frozenset({m.FILES_RESPOND})
TEXT_MAX = 200_000  # characters of one input message
# A handler answers with its method's result (protocol/payloads.py), or a Reply that carries it.
Result = JsonMapping | Reply
Handler = Callable[[Connection, Params], Awaitable[Result]]


class Dispatcher:
    def __init__(self, runtime: ConversationManager) -> None:
        self.runtime = runtime
        self.methods: dict[str, Handler] = {
            m.INITIALIZE: self.initialize,
            m.CONVERSATION_LIST: self.conversation_list,
            m.CONVERSATION_CREATE: self.conversation_create,
            m.CONVERSATION_SUBSCRIBE: self.conversation_subscribe,
            m.CONVERSATION_UNSUBSCRIBE: self.conversation_unsubscribe,
            m.CONVERSATION_WATCH_LIST: self.conversation_watch_list,
            m.CONVERSATION_UNWATCH_LIST: self.conversation_unwatch_list,
            m.CONVERSATION_READ: self.conversation_read,
            m.CONVERSATION_RENAME: self.conversation_rename,
            m.CONVERSATION_ARCHIVE: self.conversation_archive,
            m.CONVERSATION_UNARCHIVE: self.conversation_unarchive,
            m.CONVERSATION_DELETE: self.conversation_delete,
            m.CONVERSATION_USAGE: self.conversation_usage,
            m.CONVERSATION_FORK: self.conversation_fork,
            m.CONVERSATION_REWIND: self.conversation_rewind,
            m.CONVERSATION_UNDO: self.conversation_undo,
            m.CONVERSATION_CHECKPOINTS: self.conversation_checkpoints,
            m.CONVERSATION_DIFF: self.conversation_diff,
            m.CONVERSATION_EXPORT: self.conversation_export,
            m.CONVERSATION_TREE: self.conversation_tree,
            m.CONVERSATION_IMPORT: self.conversation_import,
            m.CONVERSATION_COMPACT: self.conversation_compact,
            m.CONVERSATION_SET_MODEL: self.conversation_set_model,
            m.CONVERSATION_SET_AGENT: self.conversation_set_agent,
            m.CONVERSATION_SET_CWD: self.conversation_set_cwd,
            m.CONVERSATION_SET_PERMISSION_MODE: self.conversation_set_permission_mode,
            m.MCP_LIST: self.mcp_list,
            m.INPUT_SEND: self.input_send,
            m.INPUT_EDIT: self.input_edit,
            m.INPUT_WITHDRAW: self.input_withdraw,
            m.INPUT_STEER: self.input_steer,
            m.INPUT_JUMP: self.input_jump,
            m.TURN_INTERRUPT: self.turn_interrupt,
            m.TURN_RESUME: self.turn_resume,
            m.APPROVAL_RESPOND: self.approval_respond,
            m.AGENTS_LIST: self.agents_list,
            m.MODELS_LIST: self.models_list,
            m.SESSIONS_LIST: self.sessions_list,
        }
        self.methods.update(context_methods(runtime))
        self.methods.update(memory_methods(runtime))
        self.methods.update(directory_methods())
        self.methods.update(command_methods(runtime))
        self.methods.update(mcp_methods(runtime))
        self.methods.update(file_host_methods(runtime))
        self.methods.update(session_mcp_methods(runtime))
        self.methods.update(debug_methods(runtime))  # only with OPENVAALA_DEBUG_TASKS=1

    async def dispatch(self, conn: Connection, method: str, raw: JsonObject) -> Result:
        handler = self.methods.get(method)
        if handler is None:
            raise errors.MethodNotFound(f"unknown method {method[:100]!r}")
        if not conn.initialized and method != m.INITIALIZE:
            raise errors.NotInitialized("the first request on a connection must be initialize")
        shape = w.REQUEST_PARAMS.get(method)  # None: `debug/tasks`, which reads no params
        if shape is not None and method not in CHECKED_BY_HANDLER:
            validate.check(shape, raw)
        return await handler(conn, Params(raw))

    # -- handshake -----------------------------------------------------------------------

    async def initialize(self, conn: Connection, p: Params) -> w.InitializeResult:
        conn.client_info = p.obj("clientInfo") or {}
        conn.initialized = True
        watch = self.runtime.config_watch
        return {
            # A client that connects after a bad edit learns of it at once (docs/protocol.md).
            "config": watch.status.to_wire() if watch is not None else None,
            "serverInfo": {
                "name": "openvaala",
                "version": __version__,
                "machine": socket.gethostname(),
            },
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {
                "inputModes": list(MODES),
                "maxFrameBytes": self.runtime.config.server.max_frame_bytes,
                "methods": sorted(self.methods),
            },
        }

    # -- conversations -------------------------------------------------------------------

    async def conversation_list(self, conn: Connection, p: Params) -> w.ListResult:
        return await self.runtime.list_conversations(
            archived=p.boolean("archived", False),
            search=p.string("search", None, max_len=500) or None,
            limit=p.integer("limit", 50, minimum=1, maximum=500),
            cursor=p.string("cursor", None, max_len=500),
        )

    async def conversation_create(self, conn: Connection, p: Params) -> w.ConversationResult:
        conv = self.runtime.create(
            cwd=p.string("cwd", max_len=4096),
            agent=p.string("agent", None, max_len=200),
            model=p.string("model", None, max_len=200),
            title=p.string("title", None, max_len=1000),
        )
        return {"conversation": conv.info()}

    async def conversation_subscribe(
        self, conn: Connection, p: Params
    ) -> w.SubscribeResult | Reply:
        cid = p.id("conversationId")
        after = p.integer("afterSeq", None, minimum=0)
        loaded = cid in self.runtime.conversations
        conv = await self.runtime.open(cid)
        # A client opening it is told whether its directory is still there (it may have been
        # removed or moved while the conversation stayed loaded); checked off the loop. An open
        # that loads it has just checked: the snapshot is then built without leaving the loop,
        # before the history's background load competes with it (docs/design.md, "The cold
        # open's snapshot first").
        if loaded:
            await conv.check_cwd()
        # No await from here on: the snapshot or replay and the subscription are one step.
        hub = conv.hub
        if after is not None:
            missed = hub.replay_after(after)
            if missed is not None:
                conn.subscribe(cid, hub)

                def replay() -> None:
                    for frame in missed:
                        conn.deliver(frame)

                return Reply({"snapshot": None, "seq": hub.seq, "replayed": len(missed)}, replay)
        snapshot = conv.snapshot()
        conn.subscribe(cid, hub)
        return {"snapshot": snapshot, "seq": hub.seq}

    async def conversation_unsubscribe(self, conn: Connection, p: Params) -> w.UnsubscribeResult:
        return {"unsubscribed": conn.unsubscribe(p.id("conversationId"))}

    async def conversation_watch_list(self, conn: Connection, p: Params) -> w.WatchResult:
        self.runtime.list_feed.join(conn)  # left when the connection closes (app.py)
        return {"watching": True}

    async def conversation_unwatch_list(self, conn: Connection, p: Params) -> w.WatchResult:
        self.runtime.list_feed.leave(conn)
        return {"watching": False}

    async def conversation_read(self, conn: Connection, p: Params) -> w.ReadResult:
        return await self.runtime.read(
            p.id("conversationId"),
            p.id("sessionId", None),
            p.id("beforeItem", None),
            p.integer("limit", 100, minimum=1, maximum=1000),
        )

    async def conversation_fork(self, conn: Connection, p: Params) -> w.ConversationResult:
        return await self.runtime.fork(p.id("conversationId"), p.id("upToItemId", None))

    async def conversation_rewind(self, conn: Connection, p: Params) -> w.RewindResult:
        return await self.runtime.rewind(
            p.id("conversationId"),
            p.id("messageId"),
            restore_files=p.boolean("restoreFiles", False),
            force=p.boolean("force", False),
        )

    async def conversation_undo(self, conn: Connection, p: Params) -> w.RestoreResult:
        return await self.runtime.undo_files(p.id("conversationId"), p.boolean("force", False))

    async def conversation_checkpoints(self, conn: Connection, p: Params) -> w.CheckpointsResult:
        conv = await self.runtime.open(p.id("conversationId"))
        return await conv.checkpoints.report()

    async def conversation_diff(self, conn: Connection, p: Params) -> w.DiffResult:
        # At the first use: not on a start's way to its first turn (docs/design.md, "Exec's
        # spawn and the daemon's first turn").
        from openvaala_server.runtime import worktree_diff

        return await worktree_diff.conversation_diff(
            await self.runtime.open(p.id("conversationId"))
        )

    async def conversation_tree(self, conn: Connection, p: Params) -> w.TreeResult:
        return await history.tree(self.runtime, p.id("conversationId"))

    async def conversation_export(self, conn: Connection, p: Params) -> w.ExportResult:
        return await bundles.export_to_file(
            self.runtime, p.id("conversationId"), p.string("path", max_len=4096)
        )

    async def conversation_import(self, conn: Connection, p: Params) -> w.ImportResult:
        return await bundles.import_from_file(
            self.runtime,
            p.string("path", max_len=4096),
            p.string("cwd", max_len=4096),
            p.choice("onConflict", ON_CONFLICT, "ask"),
        )

    async def conversation_compact(self, conn: Connection, p: Params) -> w.CompactResult:
        return await self.runtime.compact_now(p.id("conversationId"))

    async def conversation_rename(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.rename(p.id("conversationId"), p.string("title", max_len=1000))
        return {}

    async def conversation_archive(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.set_archived(p.id("conversationId"), True)
        return {}

    async def conversation_unarchive(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.set_archived(p.id("conversationId"), False)
        return {}

    async def conversation_delete(self, conn: Connection, p: Params) -> w.EmptyResult:
        cid = p.id("conversationId")
        await self.runtime.delete(cid)
        conn.unsubscribe(cid)
        return {}

    async def conversation_usage(self, conn: Connection, p: Params) -> w.Usage:
        conv = await self.runtime.open(p.id("conversationId"))
        session = conv.session(p.id("sessionId", None))
        await conv.ensure_context()  # the estimate needs the whole context
        await conv.load_surroundings(session)  # and the whole system prompt
        return usage_wire(conv, session)

    async def conversation_set_model(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.set_model(
            p.id("conversationId"), p.id("sessionId", None), p.string("model", max_len=200)
        )
        return {}

    async def conversation_set_agent(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.set_agent(p.id("conversationId"), p.string("agent", max_len=200))
        return {}

    async def conversation_set_cwd(self, conn: Connection, p: Params) -> w.EmptyResult:
        await self.runtime.set_cwd(p.id("conversationId"), p.string("cwd", max_len=4096))
        return {}

    async def conversation_set_permission_mode(self, conn: Connection, p: Params) -> w.EmptyResult:
        mode = p.choice("mode", PERMISSION_MODES)
        await permission_mode.set_mode(self.runtime, p.id("conversationId"), mode)
        return {}

    # -- input ---------------------------------------------------------------------------

    async def input_send(self, conn: Connection, p: Params) -> w.SendResult:
        images = runtime_images.parse(p.value("images"))
        # Text is required unless images are sent (a missing one used to be an internal error).
        text = (
            p.string("text", "", max_len=TEXT_MAX) if images else p.string("text", max_len=TEXT_MAX)
        )
        if not text.strip() and not images:
            raise errors.InvalidParams("the message is empty", param="text")
        return await self.runtime.send_input(
            p.id("conversationId"),
            p.id("sessionId", None),
            text,
            p.choice("mode", MODES, "queue"),
            images=images,
        )

    async def input_edit(self, conn: Connection, p: Params) -> w.EmptyResult:
        text = p.string("text", max_len=TEXT_MAX)
        if not text.strip():
            raise errors.InvalidParams("the message is empty: withdraw it instead", param="text")
        self.runtime.edit_input(p.id("inputId"), text)
        return {}

    async def input_withdraw(self, conn: Connection, p: Params) -> w.WithdrawResult:
        return self.runtime.withdraw_input(p.id("inputId"))

    async def input_steer(self, conn: Connection, p: Params) -> w.EmptyResult:
        self.runtime.steer_input(p.id("inputId"))
        return {}

    async def input_jump(self, conn: Connection, p: Params) -> w.EmptyResult:
        self.runtime.jump_input(p.id("inputId"))
        return {}

    async def turn_interrupt(self, conn: Connection, p: Params) -> w.InterruptResult:
        return await self.runtime.interrupt(p.id("conversationId"), p.id("sessionId", None))

    async def turn_resume(self, conn: Connection, p: Params) -> w.ResumeResult:
        return await resume.resume(self.runtime, p.id("conversationId"), p.id("sessionId", None))

    async def approval_respond(self, conn: Connection, p: Params) -> w.RespondResult:
        return await self.runtime.respond_approval(
            p.id("conversationId"),
            p.id("approvalId"),
            p.choice("decision", ANSWERS),
            p.string("message", None, max_len=TEXT_MAX),
        )

    # -- configuration -------------------------------------------------------------------

    async def agents_list(self, conn: Connection, p: Params) -> w.AgentsResult:
        config = self.runtime.config
        return {
            "agents": [
                {
                    "name": a.name,
                    "description": a.description,
                    "model": a.model,
                    "default": a.name == config.default_agent,
                    "sandbox": a.permissions.sandbox,
                    "network": a.permissions.network,
                    "approval": a.permissions.approval,
                }
                for a in config.agents.values()
            ]
        }

    async def mcp_list(self, conn: Connection, p: Params) -> w.McpResult:
        return {"servers": self.runtime.mcp.statuses()}

    async def models_list(self, conn: Connection, p: Params) -> w.ModelsResult:
        return {
            "models": [
                {
                    "name": m.name,
                    "provider": m.provider,
                    "model": m.model,
                    "contextWindow": m.context_window,
                    "contextWindowSource": m.window_source,
                    "maxOutputTokens": m.max_output_tokens,
                }
                for m in self.runtime.config.models.values()
            ]
        }

    async def sessions_list(self, conn: Connection, p: Params) -> w.SessionsResult:
        conv = await self.runtime.open(p.id("conversationId"))
        return {"sessions": [s.to_wire() for s in conv.sessions.values()]}
