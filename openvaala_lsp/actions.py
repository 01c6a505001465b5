"""Every editor action, once: custom requests and `workspace/executeCommand` both call these.
Each is a daemon request (or a few); nothing here keeps conversation state."""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import cast

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams

from openvaala_lsp import prompt, uris
from openvaala_lsp.bridge import Bridge
from openvaala_lsp.history import HistoryActions
from openvaala_lsp.host import Host
from openvaala_lsp.images import image_params
from openvaala_lsp.mcp import McpActions
from openvaala_lsp.memory import MemoryActions
from openvaala_lsp.params import Params, optional, required, session_params
from openvaala_lsp.replies import (
    Cancelled,
    Content,
    ConversationRow,
    ConversationsReply,
    Created,
    McpReply,
    Opened,
    OpenedConversation,
    Prompted,
    RewindReply,
    SessionNode,
    SessionTree,
    Subscribed,
    UsageReport,
)
from openvaala_lsp.usage import for_status_line, report
from openvaala_server.client.restore_note import paths_text
from openvaala_server.domain.inbox import Mode as InputMode
from openvaala_server.protocol import methods, payloads
from openvaala_server.protocol.json_types import JsonObject

MODES = ("steer", "queue", "jump")
INPUT_ACTIONS = ("edit", "withdraw", "steer", "jump")
COMPOSER = "$/openvaala/composer"  # rewind from a command: the text to put back in the composer


class Actions(MemoryActions, HistoryActions, McpActions):
    def __init__(self, ls: Host) -> None:
        self.ls = ls

    @property
    def bridge(self) -> Bridge:
        return self.ls.bridge

    # -- conversations -------------------------------------------------------------------

    async def list_conversations(self, params: Params) -> ConversationsReply:
        keys = ("archived", "search", "limit", "cursor")
        # Passed on as the editor sent them: the daemon names a wrong one (docs/protocol.md).
        query = cast(payloads.ListParams, {k: params[k] for k in keys if k in params})
        result = await self.bridge.request(methods.CONVERSATION_LIST, query)
        rows: list[ConversationRow] = [
            {**conv, "uri": uris.conversation_uri(conv["conversationId"])}
            for conv in result.get("conversations", [])
        ]
        reply: ConversationsReply = {"conversations": rows}
        if "nextCursor" in result:
            reply["nextCursor"] = result["nextCursor"]
        return reply

    async def default_cwd(self) -> str:
        """The workspace's root; over `--remote` the directory there (`HOST:DIR`, else the
        remote home): this machine's paths name nothing there (docs/remote.md)."""
        there = await self.bridge.remote_directory()
        return there if there is not None else self._workspace_root()

    def _workspace_root(self) -> str:
        try:
            root = self.ls.workspace.root_path
        except RuntimeError:
            root = None
        if root and os.path.isdir(root):
            return str(root)
        return os.getcwd()

    async def new_conversation(self, params: Params) -> Created:
        named = {k: params[k] for k in ("agent", "model", "title") if k in params}
        # As the editor sent them: the daemon names a wrong one (docs/protocol.md).
        create = cast(payloads.CreateParams, named)
        create["cwd"] = optional(params, "cwd") or await self.default_cwd()
        result = await self.bridge.request(methods.CONVERSATION_CREATE, create)
        conv = result["conversation"]
        subscribed = await self.subscribe({"conversationId": conv["conversationId"]})
        return {"conversation": conv, "uri": subscribed["uri"], "seq": subscribed["seq"]}

    async def subscribe(self, params: Params) -> Subscribed:
        """Forward this conversation's events to the editor; the result is a snapshot to draw."""
        cid = required(params, "conversationId")
        self.ls.forwarder.conversations.add(cid)
        try:
            view = await self.bridge.watch(cid)
            snapshot = await self.bridge.request(
                methods.CONVERSATION_SUBSCRIBE, {"conversationId": cid}
            )
        except Exception:
            self.ls.forwarder.forget(cid)
            raise
        # The view's subscription is the one events come through; the request above only
        # fetched a snapshot for the editor (the daemon replaces a subscription, never doubles it).
        self.ls.forwarder.push_all_usage(cid)
        return {
            "conversationId": cid,
            "uri": uris.conversation_uri(cid),
            "seq": snapshot["seq"],
            "snapshot": snapshot["snapshot"],
            "rootSessionId": view.root_id,
        }

    async def unsubscribe(self, params: Params) -> dict[str, bool]:
        cid = required(params, "conversationId")
        self.ls.forwarder.forget(cid)
        if not any(
            (ref := uris.parse(uri)) and ref.conversation_id == cid
            for uri in self.ls.documents.known
        ):
            await self.bridge.unwatch(cid)
        return {"unsubscribed": True}

    # -- input and turns -----------------------------------------------------------------

    async def send(self, params: Params) -> payloads.SendResult:
        """Send a message; answers as soon as the daemon took it (`{inputId, disposition}`).
        `images`: `file://` URIs (or absolute paths) of images sent with it."""
        cid = required(params, "conversationId")
        images = image_params(params.get("images"))
        # With images the text may be empty (the images are the message).
        text = required(params, "text") if not images or params.get("text") else ""
        mode = params.get("mode") or "queue"
        if mode not in MODES:
            raise JsonRpcInvalidParams(f"mode must be one of {', '.join(MODES)}")
        if cid not in self.ls.forwarder.conversations:
            await self.subscribe({"conversationId": cid})
        call: payloads.SendParams = {
            "conversationId": cid,
            "text": text,
            "mode": cast(InputMode, mode),  # one of MODES, checked above
        }
        if (sid := optional(params, "sessionId")) is not None:
            call["sessionId"] = sid
        if images:
            call["images"] = images
        return await self.bridge.request(methods.INPUT_SEND, call)

    async def prompt(self, params: Params) -> Prompted:
        """Send a message and answer when the turn that took it ends: `{turnId, status, usage}`.
        Cancelling the request ($/cancelRequest) interrupts that turn."""
        return await prompt.run(self, params)

    async def input(self, params: Params) -> payloads.EmptyResult | payloads.WithdrawResult:
        action = required(params, "action")
        if action not in INPUT_ACTIONS:
            raise JsonRpcInvalidParams(f"action must be one of {', '.join(INPUT_ACTIONS)}")
        call: payloads.InputParams = {"inputId": required(params, "inputId")}
        if action == "edit":
            edit: payloads.EditParams = {**call, "text": required(params, "text")}
            return await self.bridge.request(methods.INPUT_EDIT, edit)
        if action == "withdraw":
            return await self.bridge.request(methods.INPUT_WITHDRAW, call)
        if action == "steer":
            return await self.bridge.request(methods.INPUT_STEER, call)
        return await self.bridge.request(methods.INPUT_JUMP, call)

    async def interrupt(self, params: Params) -> payloads.InterruptResult:
        return await self.bridge.request(methods.TURN_INTERRUPT, session_params(params))

    # -- fixing a moved conversation ----------------------------------------------------

    async def set_agent(self, params: Params) -> payloads.EmptyResult:
        """Choose the conversation's agent (its own is not configured here): `{}`, then
        `conversation/updated`; an unknown name is `agent_missing` with `data.available`."""
        call: payloads.SetAgentParams = {
            "conversationId": required(params, "conversationId"),
            "agent": required(params, "agent"),
        }
        return await self.bridge.request(methods.CONVERSATION_SET_AGENT, call)

    async def set_model(self, params: Params) -> payloads.EmptyResult:
        """Choose the model of the root agent (or of `sessionId`'s): `{}`, then
        `conversation/updated`; an unknown name is `model_missing` with `data.available`."""
        call: payloads.SetModelParams = {
            **session_params(params),
            "model": required(params, "model"),
        }
        return await self.bridge.request(methods.CONVERSATION_SET_MODEL, call)

    async def set_permission_mode(self, params: Params) -> payloads.EmptyResult:
        """Switch the conversation's permission mode (`plan`, `ask`, `auto-edit`): `{}`, then
        `conversation/updated` with it; one wider than the agent allows is the daemon's error
        naming it (docs/security.md, "Permission modes")."""
        mode = required(params, "mode")
        call: payloads.SetPermissionModeParams = {
            "conversationId": required(params, "conversationId"),
            # Checked by the daemon, which names what it allows.
            "mode": cast("payloads.PermissionMode", mode),
        }
        return await self.bridge.request(methods.CONVERSATION_SET_PERMISSION_MODE, call)

    async def models(self, params: Params) -> payloads.ModelsResult:
        """The configured models (the daemon's `models/list`), for a model picker."""
        return await self.bridge.request(methods.MODELS_LIST, {})

    async def set_cwd(self, params: Params) -> payloads.EmptyResult:
        """Point the conversation at another directory (absolute, existing): `{}`, then
        `conversation/updated`; a missing one is `cwd_missing`."""
        call: payloads.SetCwdParams = {
            "conversationId": required(params, "conversationId"),
            "cwd": required(params, "cwd"),
        }
        return await self.bridge.request(methods.CONVERSATION_SET_CWD, call)

    # -- approvals -----------------------------------------------------------------------

    async def respond_approval(self, params: Params) -> payloads.RespondResult:
        """Answer an approval: `{conversationId, approvalId, decision, message?}`."""
        return await self.ls.approvals.respond(params)

    async def approvals(self, params: Params) -> dict[str, list[JsonObject]]:
        """The pending approvals of one conversation (watching it), or of all watched ones."""
        cid = optional(params, "conversationId")
        if cid is not None:
            await self.bridge.watch(cid)
        return {"approvals": self.ls.approvals.pending(cid)}

    # -- history -------------------------------------------------------------------------

    async def compact(self, params: Params) -> payloads.CompactResult:
        cid = required(params, "conversationId")
        return await self.bridge.request(methods.CONVERSATION_COMPACT, {"conversationId": cid})

    async def fork(self, params: Params, *, show: bool = False) -> OpenedConversation:
        call: payloads.ForkParams = {"conversationId": required(params, "conversationId")}
        if (up_to := optional(params, "upToItemId")) is not None:
            call["upToItemId"] = up_to
        result = await self.bridge.request(methods.CONVERSATION_FORK, call)
        return {**result, "uri": await self._opened(result["conversation"], show)}

    async def rewind(self, params: Params, *, show: bool = False) -> RewindReply | Cancelled:
        call: payloads.RewindParams = {
            "conversationId": required(params, "conversationId"),
            "messageId": required(params, "messageId"),
        }
        # From a command the user is asked whether to restore files (openvaala_lsp/history.py).
        await self.rewind_files(call, params, ask=show)

        def send(force: bool) -> Awaitable[payloads.RewindResult]:
            forced: payloads.RewindParams = {**call, "force": True} if force else call
            return self.bridge.request(methods.CONVERSATION_REWIND, forced)

        rewound = await self.with_conflicts(send, call.get("force", False), ask=show)
        if rewound is None:
            return {"cancelled": True}
        uri = await self._opened(rewound["conversation"], show)
        result: RewindReply = {**rewound, "uri": uri}
        if show and (files := result.get("files")) is not None:
            restored = files.get("restored") or []
            if restored or files.get("missingTurnIds") or files.get("skipped"):
                done = paths_text(restored) if restored else "none"
                self.tell_restore(f"OpenVaala: files restored: {done}.", files)
        if show:
            self.ls.protocol.notify(
                COMPOSER,
                {
                    "conversationId": result["conversation"]["conversationId"],
                    "uri": result["uri"],
                    "text": result.get("composerText", ""),
                },
            )
        return result

    async def _opened(self, conversation: payloads.ConversationInfo, show: bool) -> str:
        """The new conversation's document (shown when `show`)."""
        cid = conversation["conversationId"]
        uri = uris.conversation_uri(cid)
        if show:
            await self.subscribe({"conversationId": cid})
            await self.show(uri)
        return uri

    # -- reading -------------------------------------------------------------------------

    async def read(self, params: Params) -> payloads.ReadResult:
        """`conversation/read` as it is: a page of a session's saved history (the chat panel
        reads a subagent at rest with it, docs/editors.md)."""
        where = session_params(params)
        call: payloads.ReadParams = {"conversationId": where["conversationId"]}
        if "sessionId" in where:
            call["sessionId"] = where["sessionId"]
        if (before := optional(params, "beforeItem")) is not None:
            call["beforeItem"] = before
        limit = params.get("limit")
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool):
                raise JsonRpcInvalidParams("'limit' must be an integer", data={"param": "limit"})
            call["limit"] = limit
        return await self.bridge.request(methods.CONVERSATION_READ, call)

    async def usage(self, params: Params) -> UsageReport:
        call = session_params(params)
        usage = await self.bridge.request(methods.CONVERSATION_USAGE, call)
        sid = call.get("sessionId")
        if sid is None:
            view = self.bridge.views.get(call["conversationId"])
            sid = view.root_id if view else ""
        return for_status_line(report(call["conversationId"], str(sid), usage))

    async def agents(self, params: Params) -> SessionTree | payloads.AgentsResult:
        """The conversation's sessions as a tree (`{sessions: [root]}`, each with `children`),
        or without a conversation the configured agents."""
        cid = optional(params, "conversationId")
        if cid is None:
            return await self.bridge.request(methods.AGENTS_LIST, {})
        listed = await self.bridge.request(methods.SESSIONS_LIST, {"conversationId": cid})
        nodes: dict[str, SessionNode] = {
            s["sessionId"]: {
                **s,
                "uri": uris.conversation_uri(
                    cid, s["sessionId"] if s.get("parentSessionId") else None
                ),
                "children": [],
            }
            for s in listed["sessions"]
        }
        roots: list[SessionNode] = []
        for node in nodes.values():
            parent = nodes.get(node.get("parentSessionId") or "")
            (parent["children"] if parent else roots).append(node)
        return {"conversationId": cid, "sessions": roots}

    async def mcp_servers(self, params: Params) -> McpReply:
        """The MCP servers' state (`mcp/list`) and a line of text saying it, also shown to the
        user as a message: an editor without a plugin shows no command result."""
        from openvaala_lsp.toolbox import mcp_report

        result = await self.bridge.request(methods.MCP_LIST, {})
        servers = list(result.get("servers") or [])
        text = mcp_report(servers)
        failed = any(s.get("status") == "failed" for s in servers)
        kind = types.MessageType.Warning if failed else types.MessageType.Info
        self.ls.window_show_message(types.ShowMessageParams(type=kind, message=text))
        return {"servers": servers, "text": text}

    async def render(self, params: Params) -> Content:
        since = params.get("since")
        if since is not None and not isinstance(since, int):
            raise JsonRpcInvalidParams("'since' must be an integer", data={"param": "since"})
        return await self.ls.documents.content(required(params, "uri"), "fallback", since)

    # -- showing documents ---------------------------------------------------------------

    async def show(self, uri: str) -> bool:
        caps = self.ls.client_capabilities
        if not get_capability(caps, "window.show_document.support", False):
            return False
        shown = await self.ls.window_show_document_async(
            types.ShowDocumentParams(uri=uri, external=False, take_focus=True)
        )
        return bool(shown.success)

    async def follow(self, params: Params) -> Opened:
        cid = required(params, "conversationId")
        sid = optional(params, "sessionId")
        view = await self.bridge.watch(cid)
        uri = uris.conversation_uri(cid, None if sid == view.root_id else sid)
        return {"uri": uri, "shown": await self.show(uri)}

    async def open(self, params: Params) -> Opened:
        cid = required(params, "conversationId")
        await self.subscribe({"conversationId": cid})
        uri = uris.conversation_uri(cid)
        return {"uri": uri, "shown": await self.show(uri)}
