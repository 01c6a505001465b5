"""The ACP agent: each ACP method as daemon requests (docs/editors.md, "Agent Client Protocol").

An ACP session is a daemon conversation and its id is the conversation id, so `session/load`
and `session/list` need nothing but the daemon. Prompts are `input/send` with mode `queue`, the
daemon's default: a prompt sent while a turn runs (one started from another client) waits for
it and starts its own turn, so each prompt's answer is the end of exactly its own turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar, cast

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AvailableCommandsUpdate,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
)

from openvaala_acp import __version__, commands, content, options
from openvaala_acp.editor_files import EditorFiles, offers_files, offers_terminal
from openvaala_acp.editor_mcp import EditorServers, Entry
from openvaala_acp.link import DaemonLink, daemon_lost
from openvaala_acp.mcp_prompts import McpPrompts
from openvaala_acp.outbox import Outbox
from openvaala_acp.permissions import Permissions
from openvaala_acp.remote_dir import (
    There,
    explain_missing,
    filter_directory,
    remote_of,
    session_directory,
)
from openvaala_acp.stream import SessionStream, plan_update, usage_update
from openvaala_server import prompts
from openvaala_server.client import SNAPSHOT
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor

if TYPE_CHECKING:
    from openvaala_server.domain.records import Item
    from openvaala_server.protocol import payloads
    from openvaala_server.protocol.payloads import PermissionMode

log = logging.getLogger(__name__)

T = TypeVar("T")
HISTORY_LIMIT = 2000  # items replayed by session/load (the newest ones)


class OpenVaalaAgent:
    def __init__(self, link: DaemonLink | None = None, *, tasks: Supervisor) -> None:
        self.link = link or DaemonLink()
        self.tasks = tasks
        self.outbox = Outbox(tasks)
        self.permissions = Permissions(self.link, self.outbox, tasks, self._question_cancelled)
        self.sessions: dict[str, SessionStream] = {}
        self._cancels: dict[str, asyncio.Event] = {}  # running prompts, by session
        self._models: list[payloads.ModelInfo] = []
        self.mcp_prompts = McpPrompts(self.link)  # offered as slash commands too
        # The editor's buffers and terminals, when it offers them.
        self.files = EditorFiles(
            self.link, tasks, self.outbox, self._shows_call, self._call_in_terminal
        )
        self.editor_servers = EditorServers(self.link, tasks)  # the editor's mcpServers
        self.link.listeners.append(self._on_note)

    def _shows_call(self, session_id: str, call_id: str) -> bool:
        stream = self.sessions.get(session_id)
        return stream is not None and call_id in stream.calls

    def _call_in_terminal(self, session_id: str, call_id: str) -> None:
        if (stream := self.sessions.get(session_id)) is not None:
            stream.terminal_calls.add(call_id)

    def on_connect(self, conn: Client) -> None:
        self.permissions.conn = conn
        self.files.conn = conn
        self.outbox.start(conn)

    # -- lifecycle -----------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kw: object,
    ) -> InitializeResponse:
        self.files.enabled = offers_files(client_capabilities)
        self.files.terminal = offers_terminal(client_capabilities)
        return InitializeResponse(
            protocol_version=_version(protocol_version),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="openvaala", title="OpenVaala", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kw: object) -> None:
        return None  # the daemon's token is read from its data directory: nothing to ask

    async def new_session(
        self, cwd: str, mcp_servers: list[Entry] | None = None, **kw: object
    ) -> NewSessionResponse:
        there = await remote_of(self.link)
        try:
            created = await self.link.request(
                methods.CONVERSATION_CREATE, {"cwd": session_directory(cwd, there)}
            )
        except RequestError as exc:
            raise explain_missing(exc, cwd, there) from None
        cid = str(created["conversation"]["conversationId"])
        stream, modes = await self._open(cid)
        await self._host_files(cid, there)
        await self.editor_servers.bring(cid, mcp_servers)
        await self.mcp_prompts.load()
        self._announce(stream)
        return NewSessionResponse(
            session_id=cid, modes=modes, config_options=self._config_options(stream)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Entry] | None = None, **kw: object
    ) -> LoadSessionResponse:
        _check_id(session_id)
        stream, modes = await self._open(session_id, replay=True)
        await self._host_files(session_id, await remote_of(self.link))
        await self.editor_servers.bring(session_id, mcp_servers)
        await self.mcp_prompts.load()
        self._announce(stream)
        await self.outbox.flush()  # the whole history is out before the answer
        return LoadSessionResponse(modes=modes, config_options=self._config_options(stream))

    async def _host_files(self, cid: str, there: There | None) -> None:
        """The editor's buffers and terminals are this machine's: over `--remote` the tools
        read and run on the daemon's machine instead (remote_dir.py)."""
        if there is None:
            await self.files.host(cid)

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kw: object
    ) -> ListSessionsResponse:
        cwd = filter_directory(cwd, await remote_of(self.link))
        params: payloads.ListParams = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        page = await self.link.request(methods.CONVERSATION_LIST, params)
        sessions = [
            SessionInfo(
                session_id=str(c["conversationId"]),
                cwd=str(c["cwd"]),
                title=c.get("title"),
                updated_at=c.get("updatedAt"),
            )
            for c in page.get("conversations") or []
            if cwd is None or c.get("cwd") == cwd
        ]
        return ListSessionsResponse(sessions=sessions, next_cursor=page.get("nextCursor"))

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kw: object
    ) -> SetSessionModeResponse:
        stream = self._session(session_id)
        await self.link.request(
            methods.CONVERSATION_SET_AGENT,
            {"conversationId": stream.conversation_id, "agent": mode_id},
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kw: object
    ) -> SetSessionConfigOptionResponse:
        stream = self._session(session_id)
        if not isinstance(value, str):
            raise RequestError.invalid_params({"configId": config_id, "message": "not a value"})
        if config_id == options.MODEL_OPTION:
            await self.link.request(
                methods.CONVERSATION_SET_MODEL,
                {"conversationId": stream.conversation_id, "model": value},
            )
            stream.model = value
        elif config_id == options.PERMISSION_OPTION:
            # The daemon checks the mode and refuses one wider than the agent allows, with an
            # error naming it (docs/security.md, "Permission modes").
            await self.link.request(
                methods.CONVERSATION_SET_PERMISSION_MODE,
                {"conversationId": stream.conversation_id, "mode": cast("PermissionMode", value)},
            )
            stream.permission_mode = value
        else:
            raise RequestError.invalid_params({"configId": config_id, "message": "unknown option"})
        return SetSessionConfigOptionResponse(config_options=self._config_options(stream))

    def _config_options(self, stream: SessionStream) -> list[options.ConfigOption]:
        return options.config_options(
            self._models, stream.model, stream.permission_mode, stream.permission_modes
        )

    # -- opening a session ---------------------------------------------------------------

    async def _open(
        self, cid: str, *, replay: bool = False
    ) -> tuple[SessionStream, SessionModeState]:
        agents = (await self.link.request(methods.AGENTS_LIST, {})).get("agents") or []
        self._models = (await self.link.request(methods.MODELS_LIST, {})).get("models") or []
        subscribed = await self.link.subscribe(cid)
        snapshot = subscribed["snapshot"]
        if snapshot is None:  # a subscription always brings one (docs/protocol.md)
            raise RequestError.internal_error({"message": f"no snapshot of {cid}"})
        info = snapshot["conversation"]
        root_id = info["rootSessionId"]
        root = next((s for s in snapshot["sessions"] if s["sessionId"] == root_id), None)
        stream = SessionStream(
            conversation_id=cid,
            root_session_id=str(info["rootSessionId"]),
            cwd=str(info["cwd"]),
            title=str(info.get("title") or ""),
            agent=str((root and root.get("agent")) or info.get("agent") or ""),
            model=str((root and root.get("model")) or info.get("model") or ""),
            permission_mode=str(info.get("permissionMode") or ""),
            permission_modes=[str(m) for m in info.get("permissionModes") or []],
            config_options=lambda s: options.config_update(
                self._models, s.model, s.permission_mode, s.permission_modes
            ),
        )
        # Loaded again (the editor reopened it): a reply a crash cut short stays, as the fold
        # this process kept has it and no daemon does (openvaala_server/client/cut_stream.py).
        earlier = self.sessions.get(cid)
        if earlier is not None and earlier.view is not None:
            stream.view = earlier.view
            stream.view.load(snapshot, subscribed["seq"])
        else:
            stream.load(snapshot, subscribed["seq"])
        self.sessions[cid] = stream
        if replay and root is not None:
            items = stream.with_kept_cut(await self._history(cid, root))
            # A call of the history that never got a result (cut by a crash) shows as failed.
            turn = root.get("turn")
            for update in [*stream.replay(items), *stream.settle(turn and turn["turnId"])]:
                self.outbox.put(cid, update)
            if plan := root.get("plan"):
                self.outbox.put(cid, plan_update(plan))
            # What the running turn streamed so far; its deltas follow.
            for item in turn["items"] if turn else []:
                for update in stream.on_note(methods.ITEM_STARTED, {"item": item}):
                    self.outbox.put(cid, update)
        for approval in snapshot.get("approvals") or []:
            self.permissions.requested(stream, approval)
        return stream, options.modes(agents, stream.agent)

    async def _history(self, cid: str, root: payloads.SessionSnapshot) -> list[Item]:
        items = list(root.get("items") or [])
        more = bool(root.get("hasMore"))
        while more and items and len(items) < HISTORY_LIMIT:
            page = await self.link.request(
                methods.CONVERSATION_READ,
                {"conversationId": cid, "beforeItem": items[0]["itemId"], "limit": 500},
            )
            items = list(page.get("items") or []) + items
            more = bool(page.get("hasMore")) and bool(page.get("items"))
        return items

    def _announce(self, stream: SessionStream) -> None:
        """What the editor shows around the chat: the commands and the context usage. Queued
        last in the request, so it follows the response that names the session."""
        cid = stream.conversation_id
        self.outbox.put(
            cid,
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=commands.COMMANDS + self.mcp_prompts.commands(),
            ),
        )

    def _session(self, session_id: str) -> SessionStream:
        stream = self.sessions.get(session_id)
        if stream is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "message": "no such session here: use session/load"}
            )
        return stream

    # -- daemon events -------------------------------------------------------------------

    def _on_note(self, method: str, params: JsonObject) -> None:
        if method == methods.MCP_STATUS_CHANGED:  # the daemon's, no conversation
            if self.mcp_prompts.changed(cast("payloads.McpServerState", params)):
                for session in self.sessions.values():
                    self._announce(session)
            return
        if method == methods.FILES_REQUESTED:
            self.files.requested(params)
            return
        stream = self.sessions.get(str(params.get("conversationId")))
        if stream is None:
            if method == "client/connection" and params.get("state") == "reconnecting":
                self.permissions.drop_all()
            if method == "client/connection" and params.get("state") == "connected":
                self.files.reconnected()
                self.editor_servers.reconnected()
            return
        if method == methods.APPROVAL_REQUESTED:
            self.permissions.requested(stream, cast("payloads.ApprovalRequestedNote", params))
            return
        if method == methods.APPROVAL_RESOLVED:
            self.permissions.resolved(cast("payloads.ApprovalResolvedNote", params))
            return
        if method == SNAPSHOT:  # the daemon restarted: questions it had are gone
            for update in stream.on_note(method, params):  # the fold starts again from it
                self.outbox.put(stream.conversation_id, update)
            snapshot = cast("payloads.Snapshot", params["snapshot"])
            for approval in snapshot.get("approvals") or []:
                self.permissions.requested(stream, approval)
            return
        for update in stream.on_note(method, params):
            self.outbox.put(stream.conversation_id, update)

    # -- prompts -------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[content.Block], **kw: object
    ) -> PromptResponse:
        stream = self._session(session_id)
        try:
            message = content.from_blocks(prompt)
        except content.UnsupportedContent as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        command = commands.parse(message.text) if not message.images else None
        if command is not None and command[0] == "init":
            message, command = replace(message, text=prompts.init_request()), None
        if command is not None:
            return await self._command(stream, command)
        cancel = asyncio.Event()
        # Before the first await: a session/cancel that came while an MCP server filled in the
        # prompt or read a resource found no prompt here, and the turn ran anyway.
        self._cancels[session_id] = cancel
        try:
            message = await self._expanded(message)
            if not message.text and not message.images:
                raise RequestError.invalid_params({"message": "the prompt is empty"})
            # Cancelled before anything was sent: nothing to withdraw, the turn never starts.
            ended = None if cancel.is_set() else await self._turn(stream, message, cancel)
        finally:
            if self._cancels.get(session_id) is cancel:
                del self._cancels[session_id]
        await self.outbox.flush()
        return PromptResponse(stop_reason=_stop_reason(ended))

    async def _expanded(self, message: content.PromptInput) -> content.PromptInput:
        """`/mcp__SERVER__PROMPT …` as the server's filled-in prompt, and each `@SERVER:URI`
        with that resource's text."""
        if not message.images:
            mcp_prompt = await self.mcp_prompts.expand(message.text)
            if mcp_prompt is not None:  # /mcp__SERVER__PROMPT: the server's text is the message
                message = replace(message, text=mcp_prompt)
        return replace(message, text=await self.mcp_prompts.attach(message.text))

    async def _command(self, stream: SessionStream, command: tuple[str, str]) -> PromptResponse:
        session_id = stream.conversation_id
        text = await commands.run(self.link, session_id, *command)
        self.outbox.put(
            session_id,
            AgentMessageChunk(
                session_update="agent_message_chunk",
                content=TextContentBlock(type="text", text=text),
            ),
        )
        if command[0] == "usage":
            usage = await self.link.request(
                methods.CONVERSATION_USAGE, {"conversationId": session_id}
            )
            if (update := usage_update(usage)) is not None:
                self.outbox.put(session_id, update)
        await self.outbox.flush()
        return PromptResponse(stop_reason="end_turn")

    async def _turn(
        self, stream: SessionStream, message: content.PromptInput, cancel: asyncio.Event
    ) -> payloads.TurnEndedNote | None:
        """How the turn of `message` ended; None: the message was withdrawn before any took it."""
        link, turns = self.link, self.link.turns
        params: payloads.SendParams = {
            "conversationId": stream.conversation_id,
            "text": message.text,
            "mode": "queue",
        }
        if message.images:
            # `input/send` checks each image itself (docs/protocol.md, "Images").
            params["images"] = cast("list[JsonObject]", message.images)
        stream.own_texts.append(params["text"])
        try:
            sent = await link.request(methods.INPUT_SEND, params)
        except RequestError:
            stream.own_texts.remove(params["text"])
            raise
        epoch = turns.epoch
        input_id = str(sent["inputId"])
        turn_id = await _unless(turns.turn_of(input_id), cancel)
        ended = await _unless(turns.ended(turn_id), cancel) if turn_id is not None else None
        if ended is not None:
            return _ended(ended)
        # session/cancel: withdraw the message if no turn took it yet, else interrupt the turn.
        if turns.epoch != epoch:
            raise daemon_lost()
        turn_id = turn_id or turns.known_turn_of(input_id)
        if turn_id is None:
            try:
                await link.request(methods.INPUT_WITHDRAW, {"inputId": input_id})
                return None
            except RequestError:  # taken into a turn meanwhile
                turn_id = await turns.turn_of(input_id)
        if not turns.has_ended(turn_id):
            await link.request(methods.TURN_INTERRUPT, {"conversationId": stream.conversation_id})
        return _ended(await turns.ended(turn_id))

    async def cancel(self, session_id: str, **kw: object) -> None:
        cancel = self._cancels.get(session_id)
        if cancel is not None:
            cancel.set()
        elif session_id in self.sessions:  # a turn started elsewhere: stop it too
            await self.link.request(methods.TURN_INTERRUPT, {"conversationId": session_id})

    async def _question_cancelled(self, session_id: str) -> None:
        """The editor answered a permission question "cancelled": its prompt turn ends
        cancelled, as after `session/cancel` (the interrupt denies the call). A turn started by
        another client is left to that client's answer."""
        cancel = self._cancels.get(session_id)
        if cancel is not None:
            cancel.set()

    async def close(self) -> None:
        self.permissions.drop_all()
        await self.outbox.close()
        await self.link.close()


def _version(asked: int) -> int:
    """The version asked for when this agent speaks it, else the latest it speaks (ACP,
    "Protocol version": there is no version 0 to fall back to)."""
    return asked if 1 <= asked <= PROTOCOL_VERSION else PROTOCOL_VERSION


def _check_id(session_id: str) -> None:
    if not is_valid_id(session_id):
        raise RequestError.invalid_params(
            {"sessionId": session_id, "message": "not an OpenVaala conversation id"}
        )


def _ended(params: JsonObject) -> payloads.TurnEndedNote:
    # The tracker keeps `turn/ended`'s params as they came (client/turns.py).
    return cast("payloads.TurnEndedNote", params)


def _stop_reason(ended: payloads.TurnEndedNote | None) -> StopReason:
    if ended is None:  # withdrawn before a turn took it
        return "cancelled"
    status = ended.get("status")
    if status == "interrupted" and ended.get("interruptedBy") == "shutdown":
        raise daemon_lost()  # not the user's doing: say so rather than "cancelled"
    if status == "interrupted":
        return "cancelled"
    if status == "failed":
        error = ended.get("error")
        raise RequestError(
            -32000,
            (error and error.get("message")) or "the turn failed",
            {"kind": (error and error.get("kind")) or "internal"},
        )
    model_stop = ended.get("modelStop")
    if model_stop == "max_tokens":
        return "max_tokens"
    if model_stop == "content_filter":
        return "refusal"
    return "end_turn"


async def _unless(work: Awaitable[T], cancel: asyncio.Event) -> T | None:
    """The result of `work`, or None if `cancel` is set first."""
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if task in done:
        return task.result()
    task.cancel()
    return None
