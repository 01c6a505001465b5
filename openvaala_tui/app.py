"""The OpenVaala terminal UI: one conversation on screen, driven live through the daemon.

The app owns a `Client` (from `openvaala_server.client`) and a `ConversationView`. One worker,
the pump, reads every notification, folds it into the view and draws the resulting changes; a
lock keeps folding and drawing in order, also while a conversation is being (re)opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.worker import WorkType

from openvaala_server.client import Client, ConnectionLost, RpcError
from openvaala_server.client.remote import (
    NoDirectory,
    configured,
    working_directory,
)
from openvaala_server.client.view import (
    LOCAL_PREFIX,
    ApprovalsChanged,
    Change,
    ConversationView,
    Deleted,
    InboxChanged,
    ItemAdded,
    ItemDelta,
    ItemRemoved,
    ItemUpdated,
    PlanChanged,
    Reset,
    SessionsChanged,
    StatusChanged,
)
from openvaala_server.domain.images import Image
from openvaala_server.protocol import methods
from openvaala_tui import commands, mcp_input
from openvaala_tui import format as fmt
from openvaala_tui.completion import Attached, attach_mentions
from openvaala_tui.context_panel import ContextCommands
from openvaala_tui.diff_actions import DiffCommands
from openvaala_tui.history_actions import HistoryMixin
from openvaala_tui.image_actions import ImagesMixin
from openvaala_tui.mcp_live import McpServers
from openvaala_tui.memory_actions import MemoryCommands, memory_note
from openvaala_tui.permission_modes import PermissionModeCommands
from openvaala_tui.quit_screen import QuitChoice, QuitScreen
from openvaala_tui.screens import AgentsScreen, ResumeScreen
from openvaala_tui.setup_actions import SetupMixin
from openvaala_tui.widgets.approval import ApprovalPrompt
from openvaala_tui.widgets.completions import CompletionPopup
from openvaala_tui.widgets.composer import Composer
from openvaala_tui.widgets.footer import QuietFooter
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from openvaala_tui.widgets.plan import PlanPanel
from openvaala_tui.widgets.status import StatusBar
from openvaala_tui.widgets.transcript import FIRST_PAGE, Transcript
from openvaala_tui.widgets.welcome import welcome_text

if TYPE_CHECKING:  # a type only: the records' shapes are not on the way to the first screen
    from openvaala_server.client.notes import Note
    from openvaala_server.client.view import Item
    from openvaala_server.domain.approvals import Answer
    from openvaala_server.domain.inbox import InputWire
    from openvaala_server.domain.inbox import Mode as InputMode
    from openvaala_server.domain.plan import Plan
    from openvaala_server.protocol.payloads import (
        ConfigState,
        ListParams,
        RespondParams,
        SendParams,
        SessionParams,
    )

DOUBLE_ESCAPE_S = 0.8
LIST_PAGES = 10  # --continue looks this far back (pages of 200 conversations)
DOUBLE_CTRL_C_S = 2.0  # a second Ctrl+C within this many seconds quits
SEND_TIMEOUT_S = 600  # how long a message sent while the daemon is away waits for it


class VaalaApp(
    ImagesMixin,
    HistoryMixin,
    MemoryCommands,
    ContextCommands,
    SetupMixin,
    PermissionModeCommands,
    DiffCommands,
    App[int],
):
    CSS_PATH = "vaala.tcss"
    TITLE = "OpenVaala"
    COMMANDS: ClassVar[set[Any]] = App.COMMANDS | {commands.SlashCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        # One of the two is shown, as `check_action` says: Esc cancels an edit first.
        Binding("escape", "escape", "Interrupt", show=True),
        Binding("escape", "cancel_edit", "Cancel edit", show=True),
        Binding("ctrl+c", "ctrl_c", "Clear/quit", priority=True, show=False),
        Binding("ctrl+w", "focus_inbox", "Waiting", priority=True, show=False),
        Binding("ctrl+o", "focus_approval", "Approval", priority=True, show=False),
        Binding("f1", "slash('help')", "Help"),
        Binding("ctrl+r", "slash('rewind')", "Rewind", show=False),
        # Before focus moves back (Textual's Shift+Tab): on the main screen only (`check_action`).
        Binding("shift+tab", "cycle_mode", "Mode", priority=True, show=False),
    ]

    def __init__(
        self,
        *,
        cwd: str | None = None,
        client: Client | None = None,
        conversation_id: str | None = None,
        snapshot: Mapping[str, object] | None = None,
        connect: bool = True,
        continue_last: bool = False,
        resume_id: str | None = None,
        pick: bool = False,
    ) -> None:
        """`client`: an already connected client (tests); else one is connected at start.
        `snapshot`: draw this fixed snapshot with no daemon at all (appearance tests).
        What opens first: `conversation_id` or `resume_id` (`openvaala --resume ID`); with
        `continue_last`, the conversation last active in `cwd` (`--continue`); with `pick`,
        the conversation list (`--resume`); else a new conversation in `cwd`."""
        super().__init__()
        self.continue_last = continue_last
        self.pick = pick
        remote = configured()
        # With --remote the directory is the remote machine's, resolved once connected.
        self.cwd = working_directory(cwd, remote) or ""
        self.client = client
        self.start_conversation = conversation_id or resume_id
        self.fixed_snapshot = snapshot
        self.should_connect = connect and snapshot is None
        self.view = ConversationView()
        self.following: str | None = None  # the session whose transcript is shown
        self.mcp_servers = McpServers()  # what the composer offers of MCP, followed live
        self._lock = asyncio.Lock()
        self._opening: str | None = None  # conversation being subscribed: its notes wait
        self._held: list[Note] = []
        self._last_escape = 0.0
        self._last_ctrl_c = 0.0
        self._continued: str | None = None  # what --continue found
        self._owns_client = client is None
        self._sending = asyncio.Lock()  # messages reach the daemon in the order they were sent
        self._pending: dict[str, Item] = {}  # sent while disconnected, not delivered yet
        self._pending_ids = itertools.count(1)
        self._editing_shown = False  # the footer shows "Cancel edit" for Esc (`check_action`)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield PlanPanel(id="plan")
        yield Transcript(id="transcript")
        yield InboxPanel(id="inbox")
        yield ApprovalPrompt(id="approval")
        yield CompletionPopup(id="completions")
        yield Composer(id="composer")
        yield QuietFooter()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def approval_prompt(self) -> ApprovalPrompt:
        return self.query_one(ApprovalPrompt)

    async def on_mount(self) -> None:
        gc.freeze()  # the modules and the app: long-lived, nothing for the collector to find
        self.composer.popup = self.query_one(CompletionPopup)
        self.composer.cwd = self.cwd
        self.composer.focus()
        if self.fixed_snapshot is not None:
            self.composer.cursor_blink = False  # a fixed picture for appearance tests
            async with self._lock:
                self.view.load(self.fixed_snapshot, 0)
                self.following = self.view.root_id
                await self.redraw()
                self.show_welcome()
            return
        self.run_worker(self._boot(), name="boot", exclusive=True, group="boot")

    async def on_unmount(self) -> None:
        gc.unfreeze()
        if self.client is not None and self._owns_client:
            await self.client.close()

    # -- connecting and opening --------------------------------------------------------------

    async def _boot(self) -> None:
        try:
            await self._connect_and_open()
        finally:
            # `openvaala` starts with the garbage collector off (docs/design.md, "Start-up
            # time"): on again once the first screen is up, or start-up failed.
            gc.enable()

    async def _connect_and_open(self) -> None:
        if self.client is None:
            if not self.should_connect:
                return
            self.composer.placeholder = "Connecting to the OpenVaala daemon…"
            try:
                self.client = await Client.connect(client_name="openvaala-tui")
            except Exception as exc:  # no daemon and none could be started (e.g. a bad config)
                reason = str(exc).replace(": openvaala: ", ": ")  # `serve start`'s own prefix
                self.exit(
                    return_code=1,
                    message=f"openvaala: could not reach or start the daemon: {reason}\n"
                    "Run it in the foreground to see why: openvaala serve",
                )
                return
        if self.client.dialer is not None:
            self.cwd = self.client.dialer.resolve(self.cwd)
            self.query_one(StatusBar).machine = self.client.dialer.remote.host
            self.composer.local_files = False
        self.run_worker(self._pump(), name="pump", group="pump")
        # Servers ready before this client came are told of no change: read them once.
        self.refresh_mcp_offers_soon()
        try:
            cid = await self._first_conversation()
            if cid is None:
                return
            try:
                await self.open_conversation(cid)
            except RpcError as exc:
                if exc.kind != "not_found" or cid != self.start_conversation:
                    raise
                self.exit(
                    return_code=1, message=f"openvaala: no conversation {cid} (--resume lists them)"
                )
                return
            if self.continue_last and cid != self._continued:
                await self.local_notice(
                    f"No earlier conversation in {self.cwd}: this is a new one."
                )
            config = self.client.server_info.get("config") if self.client else None
            if isinstance(config, dict) and config.get("state") == "error":
                # broken before this client connected
                await self.show_config(cast("ConfigState", config))
            await self.offer_setup()
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)

    async def _first_conversation(self) -> str | None:
        if self.start_conversation is not None and self.client is not None:
            from openvaala_server.client.conversation_ids import resolve
            from openvaala_server.domain.short_ids import IdPrefixError

            try:  # `--resume 80cd7c40`: the short id the lists show (docs/design.md)
                self.start_conversation = await resolve(self.client, self.start_conversation)
            except IdPrefixError as exc:
                self.exit(return_code=2, message=f"openvaala: --resume: {exc}")
                return None
            return self.start_conversation
        if self.continue_last:
            self._continued = await self.last_conversation_in(self.cwd)
            if self._continued is not None:
                return self._continued
        if self.pick:
            gc.enable()  # the list is the first screen: the user may stay on it a while
            chosen = await self.push_screen_wait(ResumeScreen(self.load_conversations))
            if chosen:
                return chosen
        return await self._create_first()

    async def _create_first(self) -> str | None:
        """The conversation the TUI opens on. A start directory that does not exist is refused
        as `--cwd` is here (cli.py), before a conversation that could never run is shown: over
        `--remote` only the daemon over there can tell (docs/remote.md)."""
        assert self.client is not None
        try:
            result = await self.client.request(methods.CONVERSATION_CREATE, {"cwd": self.cwd})
        except RpcError as exc:
            if exc.kind != "cwd_missing":
                await self.show_error(exc)
                return None
            dialer = self.client.dialer
            where = f" on {dialer.remote.host}" if dialer is not None else ""
            self.exit(return_code=2, message=f"openvaala: {self.cwd} does not exist{where}")
            return None
        return str(result["conversation"]["conversationId"])

    async def last_conversation_in(self, cwd: str) -> str | None:
        """The conversation last active in `cwd` (the list is newest first), if any."""
        assert self.client is not None
        params: ListParams = {"archived": False, "limit": 200}
        here = {cwd, await asyncio.to_thread(os.path.realpath, cwd)}
        for _ in range(LIST_PAGES):
            result = await self.client.request(methods.CONVERSATION_LIST, params)
            for conv in result["conversations"]:
                if conv["cwd"] in here:
                    return conv["conversationId"]
            cursor = result.get("nextCursor")
            if not cursor:
                break
            params["cursor"] = cursor
        return None

    async def create_conversation(self, cwd: str) -> str | None:
        assert self.client is not None
        try:
            result = await self.client.request(methods.CONVERSATION_CREATE, {"cwd": cwd})
        except RpcError as exc:
            await self.show_error(exc)
            return None
        return str(result["conversation"]["conversationId"])

    async def open_conversation(self, cid: str, composer_text: str | None = None) -> None:
        """Subscribe to `cid` and show it (in place of the conversation shown now)."""
        assert self.client is not None
        old = self.view.conversation_id
        self._opening = cid
        self._held = []
        if old and old != cid:
            with contextlib.suppress(RpcError, ConnectionLost):
                await self.client.unsubscribe(old)
        result = await self.client.subscribe(cid)
        if old:
            gc.unfreeze()  # what the last conversation left behind can be collected again
        async with self._lock:
            self.view.load(result["snapshot"] or {}, result["seq"])
            for note in self._held:
                self.view.apply(note)
            self._opening = None
            self._held = []
            self.following = self.view.root_id
            self.composer.cwd = str(self.view.conversation.get("cwd") or self.cwd)
            self.composer.user_commands = self.user_commands_dir()
            await self.redraw()
            self.show_welcome()
            # What is alive once the conversation is shown (modules, styles, the widgets and
            # items of the page) is left out of the garbage collector's full passes: with it
            # they took 25-45 ms each, every few seconds while a reply streams.
            gc.freeze()
            self.composer.placeholder = "Message (Enter send · Tab queue · /help)"
            if composer_text is not None:
                self.composer.set_text(composer_text)
            await self._warn_about(self.view.conversation)

    def show_welcome(self) -> None:
        """The first screen's text, from the conversation shown (used while it is empty)."""
        conversation = self.view.conversation
        info = self.client.server_info if self.client is not None else {}
        state = info.get("config")  # the file the daemon read (`initialize`'s config.path)
        config = state.get("path") if isinstance(state, dict) else None
        if not config:
            from openvaala_server.discovery import config_path  # not on the start-up path

            config = str(config_path())
        self.transcript.set_welcome(
            welcome_text(
                str(conversation.get("cwd") or self.cwd),
                str(conversation.get("agent") or "?"),
                str(conversation.get("model") or "?"),
                str(config),
                self.setup_offer,
            )
        )

    async def _warn_about(self, conversation: Mapping[str, object]) -> None:
        if conversation.get("cwdExists") is False:
            await self.local_notice(
                f"The working directory {conversation.get('cwd')} does not exist: point it "
                "elsewhere with /cwd PATH (or recreate it).",
                error=True,
            )
        if conversation.get("agentAvailable") is False:
            await self.local_notice(
                f"The agent {conversation.get('agent')!r} is not configured here; choose "
                "another with /agent NAME (/agent alone lists them).",
                error=True,
            )
        if conversation.get("modelAvailable") is False:
            await self.local_notice(
                f"The model {conversation.get('model')!r} is not configured: pick one with /model.",
                error=True,
            )

    # -- notifications -----------------------------------------------------------------------

    async def _pump(self) -> None:
        assert self.client is not None
        async for note in self.client.notifications():
            await self.handle_note(note)

    async def handle_note(self, note: Note) -> None:
        # The whole daemon's notifications first: they name no conversation.
        if note["method"] == methods.CONFIG_ERROR or note["method"] == methods.CONFIG_RELOADED:
            await self.show_config(note["params"])
            return
        if note["method"] == methods.MCP_STATUS_CHANGED:
            failed = self.mcp_servers.changed(note["params"])
            self.composer.mcp_offers = self.mcp_servers.offers()
            if failed is not None:
                self.notify(failed, severity="warning")
            return
        if note["method"] == methods.CONVERSATION_LIST_CHANGED:
            return  # this screen does not watch the list
        cid = note["params"].get("conversationId")
        if note["method"] == methods.TURN_ENDED:  # servers may have started meanwhile
            self.refresh_mcp_offers_soon()
        async with self._lock:
            if cid is not None and cid != self.view.conversation_id:
                if cid == self._opening:
                    self._held.append(note)
                return
            await self.draw(self.view.apply(note))

    async def draw(self, changes: list[Change]) -> None:
        status = False
        sessions = False
        for change in changes:
            if isinstance(change, Reset):
                if self.following not in self.view.sessions:
                    self.following = self.view.root_id
                await self.redraw()
                sessions = True
                continue
            if isinstance(change, (SessionsChanged, StatusChanged)):
                sessions = True
            if isinstance(change, ApprovalsChanged):
                self.refresh_approvals()  # whichever session asks: the user answers here
                continue
            if isinstance(change, PlanChanged):
                self.refresh_plan()
                continue
            if isinstance(change, Deleted):
                await self.local_notice(
                    "This conversation was deleted. /new starts another one.", error=True
                )
                continue
            if not isinstance(change, ItemDelta):  # a delta changes nothing in the status
                status = True
            if change.session_id != self.following:
                continue
            if isinstance(change, ItemAdded):
                await self.transcript.add(change.item)
            elif isinstance(change, ItemDelta):
                await self.transcript.delta(change.item_id, change.field, change.delta)
            elif isinstance(change, ItemUpdated):
                await self.transcript.update(change.item)
            elif isinstance(change, ItemRemoved):
                await self.transcript.remove_item(change.item_id)
            elif isinstance(change, InboxChanged):
                self.refresh_inbox()
        if status:
            self.refresh_status()
        if sessions and isinstance(self.screen, AgentsScreen):
            self.screen.set_sessions(self.session_infos())  # the agents tree stays live

    async def redraw(self) -> None:
        session = self.view.sessions.get(self.following or "")
        if session is None:
            await self.transcript.show([], False)
        else:
            await self.page_in(session.session_id)
            await self.transcript.show(session.items, session.has_more)
        for pending in self._pending.values():
            await self.transcript.add(pending)
        self.refresh_inbox()
        self.refresh_status()
        self.refresh_approvals()
        self.refresh_plan()

    def refresh_plan(self) -> None:
        """The followed session's plan above the transcript (hidden while it has none)."""
        session = self.view.sessions.get(self.following or "")
        # The view keeps the last `plan/updated`'s plan (and the inbox below) as it came.
        self.query_one(PlanPanel).show_plan(cast("Plan | None", session.plan if session else None))

    def refresh_inbox(self) -> None:
        """The followed session's waiting inputs. A panel that empties while it has the focus
        hands it to the composer: hidden, it would take every key typed next."""
        session = self.view.sessions.get(self.following or "")
        panel = self.query_one(InboxPanel)
        had_focus = panel.has_focus_within
        panel.set_inputs(cast("list[InputWire]", session.inbox if session else []))
        if had_focus and not panel.display:
            self.composer.focus()

    def refresh_approvals(self) -> None:
        """Show the next approval to answer, or hide the prompt. A prompt that appears takes
        the focus unless the user is typing a message (then Ctrl+O reaches it)."""
        prompt = self.approval_prompt
        approval = self.view.next_approval()
        had_focus = prompt.has_focus_within
        if approval is None:
            prompt.clear()
            if had_focus:
                self.composer.focus()
            return
        appeared = not prompt.display
        waiting = sum(1 for a in self.view.approvals if a not in self.view.answered_here) - 1
        prompt.show_approval(approval, self.view.agent_of(approval), waiting)
        on_main_screen = self.screen is prompt.screen
        if on_main_screen and appeared and (self.composer.is_empty or had_focus):
            prompt.focus()

    def refresh_status(self) -> None:
        self.query_one(StatusBar).refresh_from(self.view, self.following)
        mode = self.view.conversation.get("permissionMode")
        self.query_one(QuietFooter).show_permission_mode(str(mode) if mode else None)
        # /cwd (here or from another client) moves where @path completes and reads.
        self.composer.cwd = str(self.view.conversation.get("cwd") or self.cwd)
        session = self.view.sessions.get(self.following or "")
        running = session is not None and session.running
        title: str | None = None
        if self.composer.editing_input:
            title = "editing a waiting input · Enter saves · Esc cancels"
        elif running:
            title = "steer the running turn · Tab queues · Ctrl+G jumps"
        if session is not None and self.following != self.view.root_id:
            name = session.info.get("title") or session.info.get("agent") or "subagent"
            to = f"to subagent: {fmt.first_line(str(name), 30)}"
            title = f"{to} · {title}" if title else to
        self.composer.border_title = title
        editing = self.composer.editing_input is not None
        if editing != self._editing_shown:  # the footer's Esc: "Interrupt" or "Cancel edit"
            self._editing_shown = editing
            self.refresh_bindings()

    async def page_in(self, session_id: str) -> None:
        """A subagent at rest comes with none of its items in a snapshot: read its last page
        when it is shown (docs/protocol.md, "Snapshot")."""
        session = self.view.sessions.get(session_id)
        if session is None or session.items or not session.has_more or self.client is None:
            return
        try:
            result = await self.client.request(
                methods.CONVERSATION_READ,
                {
                    "conversationId": self.view.conversation_id,
                    "sessionId": session_id,
                    "limit": FIRST_PAGE,
                },
            )
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)
            return
        self.view.prepend(session_id, result["items"], bool(result["hasMore"]))

    async def on_transcript_need_older(self, message: Transcript.NeedOlder) -> None:
        session = self.view.sessions.get(self.following or "")
        if session is None:
            return
        index = session.find(message.before_item_id) if message.before_item_id else None
        if index is not None and index > 0:
            start = max(0, index - FIRST_PAGE)
            await self.transcript.prepend(session.items[start:index], start > 0 or session.has_more)
            return
        if not session.has_more or self.client is None or not session.items:
            self.transcript.more_above = False
            return
        try:
            result = await self.client.request(
                methods.CONVERSATION_READ,
                {
                    "conversationId": self.view.conversation_id,
                    "sessionId": session.session_id,
                    "beforeItem": session.items[0]["itemId"],
                    "limit": FIRST_PAGE,
                },
            )
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)
            return
        async with self._lock:
            fresh = self.view.prepend(session.session_id, result["items"], bool(result["hasMore"]))
            await self.transcript.prepend(fresh, bool(result["hasMore"]))

    # -- messages from the user --------------------------------------------------------------

    async def on_composer_submitted(self, message: Composer.Submitted) -> None:
        text = message.text
        parsed = commands.parse(text)
        from_project = False  # a project's custom command: repository text (docs/configuration.md)
        if parsed is not None and message.composer.editing_input is None:
            name, arg = parsed
            if name in commands.COMMANDS:
                self.run_slash(name, arg)
                return
            if name.startswith(mcp_input.PROMPT_PREFIX):
                self.run_worker(self.send_mcp_prompt(text, message.mode), group="send")
                return
            custom = self.custom_commands().get(name)
            if custom is None:
                self.composer.restore(text)
                self.notify(f"Unknown command /{name}: /help lists them.", severity="warning")
                return
            text = custom.expand(arg)  # sent as if typed: @path, images and queueing apply
            from_project = custom.from_project
        # Only what the user typed runs as a shell command: a custom command's text is a
        # prompt, and a project's (.openvaala/commands/) is the repository's, never trusted to
        # run anything (docs/configuration.md, "Custom commands").
        typed = parsed is None
        if (
            typed
            and text.startswith("!")
            and message.composer.editing_input is None
            and text[1:].strip()
        ):
            self.run_slash("shell", text[1:].strip())
            return
        note = memory_note(text) if parsed is None else None
        if note is not None and message.composer.editing_input is None:
            self.run_slash("remember", note)
            return
        if self.client is None or not self.view.conversation_id:
            self.composer.restore(message.text)
            self.notify("Not connected to the daemon yet.", severity="warning")
            return
        if message.composer.editing_input is not None:
            await self.save_edit(message.composer.editing_input, text)
            return
        images = await self.images_for(text)
        if images is None:  # only image paths: they wait for the message
            return
        cwd = str(self.view.conversation.get("cwd") or self.cwd)
        # Over --remote the path is the remote machine's: the text keeps `@path`, for the agent
        # to read there, rather than a file of this machine that has the same name.
        remote = self.client.dialer is not None
        attached = (
            Attached(text, [], [])
            if remote
            else attach_mentions(text, cwd, inside_only=from_project)
        )
        for problem in attached.problems:
            self.notify(problem, severity="warning")
        try:  # @SERVER:URI: an MCP resource's text goes with the message
            with_resources = await mcp_input.attach_resources(self.call, attached.text)
        except (RpcError, ConnectionLost) as exc:
            self.composer.restore(message.text)  # the message goes back to the composer
            self.images_back(images)
            await self.show_error(exc)
            return
        attached_names = attached.files + with_resources.attached
        if attached_names:
            self.notify("Attached: " + ", ".join(attached_names))
        params: SendParams = {
            "conversationId": self.view.conversation_id,
            "text": with_resources.text,
            "mode": as_mode(message.mode),
        }
        if self.following and self.following != self.view.root_id:
            params["sessionId"] = self.following
        if images:
            params["images"] = self.image_params(images)
        pending: Item | None = None
        if not self.client.connected:
            pending = {
                "itemId": f"{LOCAL_PREFIX}pending-{next(self._pending_ids)}",
                "type": "user_message",
                "status": "pending",
                "text": text,
            }
            self._pending[str(pending["itemId"])] = pending
            await self.transcript.add(pending)
        # A worker: while the daemon is away the request waits for it, and the app must not.
        self.run_worker(self._deliver(params, pending, images), group="send")

    def refresh_mcp_offers_soon(self) -> None:
        # The method, not a coroutine: a worker the next one cancels before it runs leaves no
        # coroutine unawaited.
        work: WorkType[None] = self.refresh_mcp_offers
        self.run_worker(work, group="mcp-offers", exclusive=True)

    async def refresh_mcp_offers(self) -> None:
        """What the composer completes of MCP: the prompts and resources of the ready servers."""
        try:
            result = await self.call(methods.MCP_LIST, {})
        except (RpcError, ConnectionLost):
            return  # the next turn's end tries again
        self.mcp_servers.load(result.get("servers") or [])
        self.composer.mcp_offers = self.mcp_servers.offers()

    async def send_mcp_prompt(self, text: str, mode: str) -> None:
        """`/mcp__SERVER__PROMPT name=value …`: the server's prompt, sent as the user's message."""
        try:
            call = mcp_input.parse_prompt_command(text)
            assert call is not None  # the command's name said so
            prompt = await mcp_input.prompt_text(self.call, call)
        except mcp_input.PromptInputError as exc:
            self.notify(str(exc), severity="warning")
            return
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)
            return
        params: SendParams = {
            "conversationId": self.view.conversation_id,
            "text": prompt,
            "mode": as_mode(mode),
        }
        if session_id := self._session_param().get("sessionId"):
            params["sessionId"] = session_id
        await self._deliver(params, None)

    async def _deliver(
        self, params: SendParams, pending: Item | None, images: list[Image] | None = None
    ) -> None:
        """Send one message, after those sent before it; a pending one leaves the transcript
        once delivered (the daemon's own item replaces it), or goes back to the composer."""
        assert self.client is not None
        async with self._sending:
            try:
                await self.client.request(methods.INPUT_SEND, params, timeout=SEND_TIMEOUT_S)
            except (RpcError, ConnectionLost, TimeoutError) as exc:
                if self.composer.is_empty:
                    self.composer.restore(str(params["text"]))
                self.images_back(images or [])
                await self.show_error(exc)
            finally:
                if pending is not None:
                    self._pending.pop(str(pending["itemId"]), None)
                    await self.transcript.remove_item(str(pending["itemId"]))

    async def save_edit(self, input_id: str, text: str) -> None:
        assert self.client is not None
        try:
            await self.client.request(methods.INPUT_EDIT, {"inputId": input_id, "text": text})
        except (RpcError, ConnectionLost) as exc:
            self.composer.editing_input = None
            self.composer.restore(text)  # back in the composer: send it anew
            self.refresh_status()
            await self.show_error(exc)
            return
        self.composer.editing_input = None
        self.refresh_status()

    async def on_inbox_panel_action(self, message: InboxPanel.Action) -> None:
        if self.client is None:
            return
        panel = self.query_one(InboxPanel)
        try:
            if message.action == "edit":
                self.composer.editing_input = message.input_id
                self.composer.set_text(panel.text_of(message.input_id))
                self.composer.focus()
                self.refresh_status()
            elif message.action == "withdraw":
                result = await self.client.request(
                    methods.INPUT_WITHDRAW, {"inputId": message.input_id}
                )
                current = self.composer.text
                withdrawn = str(result.get("text") or "")
                await self.withdrawn_images(result.get("images"))
                self.composer.set_text(f"{current}\n{withdrawn}" if current.strip() else withdrawn)
                self.composer.focus()
            elif message.action == "steer":
                await self.client.request(methods.INPUT_STEER, {"inputId": message.input_id})
            elif message.action == "jump":
                await self.client.request(methods.INPUT_JUMP, {"inputId": message.input_id})
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)

    async def on_approval_prompt_answered(self, message: ApprovalPrompt.Answered) -> None:
        if self.client is None:
            return
        # No await between changing the view and drawing it: no lock needed.
        self.view.answered_here[message.approval_id] = message.decision
        self.refresh_approvals()  # the next one waiting, if any
        params: RespondParams = {
            "conversationId": self.view.conversation_id,
            "approvalId": message.approval_id,
            # The prompt's buttons answer allow | allow_conversation | deny (widgets/approval.py).
            "decision": cast("Answer", message.decision),
        }
        if message.message:
            params["message"] = message.message
        try:
            await self.client.request(methods.APPROVAL_RESPOND, params)
        except (RpcError, ConnectionLost) as exc:
            self.view.answered_here.pop(message.approval_id, None)
            self.refresh_approvals()  # still pending (e.g. the connection dropped): ask again
            if isinstance(exc, RpcError) and exc.kind in ("already_resolved", "not_found"):
                await self.local_notice(
                    "That approval was already answered (from another client, or by an "
                    "interrupt): nothing was sent.",
                    error=True,
                )
            else:
                await self.show_error(exc)

    # -- keys --------------------------------------------------------------------------------

    def action_cancel_edit(self) -> None:
        self.composer.editing_input = None
        self.composer.clear()
        self.refresh_status()

    async def action_escape(self) -> None:
        if self.composer.editing_input is not None:
            self.action_cancel_edit()
            return
        session = self.view.sessions.get(self.following or "")
        if session is not None and session.running:
            await self.interrupt(session.session_id)
            self._last_escape = 0.0
            return
        if not self.composer.is_empty:
            return
        now = time.monotonic()
        if now - self._last_escape <= DOUBLE_ESCAPE_S:
            self._last_escape = 0.0
            self.run_slash("rewind", "")
        else:
            self._last_escape = now

    async def action_ctrl_c(self) -> None:
        """Ctrl+C as in Codex and Claude Code (docs/design.md, "Ctrl+C and quitting"): a draft
        is cleared (never lost to a quit), else a running turn is interrupted, else a second
        Ctrl+C within two seconds quits. In the quit question it cancels, as Esc does: the
        user is backing out, not stopping the turn the question is about."""
        if isinstance(self.screen, QuitScreen):
            self.screen.dismiss(None)
            return
        if not self.composer.is_empty or self.composer.editing_input is not None:
            self._last_ctrl_c = 0.0
            if self.composer.editing_input is not None:
                self.composer.editing_input = None
                self.refresh_status()
            self.composer.discard()
            return
        session = self.view.sessions.get(self.following or "")
        if session is not None and session.running:
            self._last_ctrl_c = 0.0
            await self.interrupt(session.session_id)  # the daemon's notice says so, once
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= DOUBLE_CTRL_C_S:
            await self.action_quit()
            return
        self._last_ctrl_c = now
        self.notify("Ctrl+C again to quit.", timeout=DOUBLE_CTRL_C_S)

    async def action_quit(self) -> None:
        """Quit (Ctrl+Q, `/exit`, `/quit`, a second Ctrl+C); while a turn runs, first ask
        whether to stop it or leave it running in the daemon (docs/design.md)."""
        running = self._running_sessions()
        if not running or self.client is None:
            self._exit_saying(leaving=bool(running))
        elif not isinstance(self.screen, QuitScreen):  # asked already: answer that
            self.push_screen(QuitScreen(len(running)), self._quit_answered)

    async def _quit_answered(self, choice: QuitChoice | None) -> None:
        if choice is None:
            return
        running = self._running_sessions()
        if choice == "stop":
            for session_id in running:
                await self.interrupt(session_id)
        # The turn may have ended while the question was up: then nothing was stopped or left.
        stopping = choice == "stop" and bool(running)
        self._exit_saying(leaving=choice == "leave" and bool(running), stopped=stopping)

    def _running_sessions(self) -> list[str]:
        return [s.session_id for s in self.view.sessions.values() if s.running]

    def _exit_saying(self, *, leaving: bool, stopped: bool = False) -> None:
        """Exit, printing what became of a running turn and how to come back to this
        conversation (when it was stored)."""
        cid = self.view.conversation_id
        lines = ["The turn keeps running in the daemon."] if leaving else []
        lines += ["Stopped the running turn."] if stopped else []
        if cid and (self.view.conversation.get("persisted") or leaving or stopped):
            lines.append(f"To come back to this conversation: openvaala --resume {cid}")
        self.exit(return_code=0, message="\n".join(lines) or None)

    async def interrupt(self, session_id: str | None = None) -> None:
        if self.client is None:
            return
        params: SessionParams = {"conversationId": self.view.conversation_id}
        if session_id and session_id != self.view.root_id:
            params["sessionId"] = session_id
        stopped = session_id or self.view.root_id
        for approval in self.view.approvals.values():
            if approval.session_id == stopped:  # the interrupt denies them: it was us
                self.view.answered_here.setdefault(approval.approval_id, "deny")
        try:
            await self.client.request(methods.TURN_INTERRUPT, params)
        except (RpcError, ConnectionLost) as exc:
            await self.show_error(exc)

    def action_focus_inbox(self) -> None:
        panel = self.query_one(InboxPanel)
        if panel.display:
            self.query_one(InboxList).focus()
        else:
            self.composer.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Shift+Tab cycles the mode on the conversation's screen; in a dialog it moves focus.
        if action == "cycle_mode":
            return self.screen is self.screen_stack[0]
        if action in ("escape", "cancel_edit"):
            composers = self.query(Composer)
            editing = bool(composers) and composers.first().editing_input is not None
            return editing == (action == "cancel_edit")
        return True

    def action_focus_approval(self) -> None:
        prompt = self.approval_prompt
        if prompt.display:
            prompt.arm()  # moving to it on purpose: its keys answer at once
            prompt.focus()

    def on_approval_prompt_typed_ahead(self, message: ApprovalPrompt.TypedAhead) -> None:
        """Keys typed as the prompt appeared continue the message; the prompt waits for
        Ctrl+O (docs/design.md, "Approvals ignore typed-ahead keys")."""
        self.composer.focus()
        self.composer.insert(message.text)

    def action_slash(self, name: str) -> None:
        self.run_slash(name, "")


def main(
    cwd: str | None = None,
    *,
    continue_last: bool = False,
    resume_id: str | None = None,
    pick: bool = False,
) -> int:
    """`openvaala [--cwd DIR] [--continue | --resume [ID]]`: open the terminal UI. A working
    directory that does not exist, or an id prefix that names no single conversation, fails
    here, before the screen is taken over."""
    # Over --remote, `--cwd` is a path of the remote machine, which only its daemon can check
    # (docs/remote.md).
    remote = configured()
    try:
        where = working_directory(cwd, remote)
    except NoDirectory as exc:
        print(f"openvaala: {exc}", file=sys.stderr)
        return 2
    if cwd is not None and remote is None and where is not None and not os.path.isdir(where):
        what = "does not exist" if not os.path.exists(where) else "is not a directory"
        print(f"openvaala: --cwd {cwd} {what}", file=sys.stderr)
        return 2
    if resume_id:
        from openvaala_server.domain.short_ids import IdPrefixError
        from openvaala_tui.resume_id import full_resume_id

        try:  # refused here, before the screen is taken over (as `exec` refuses it)
            resume_id = full_resume_id(resume_id)
        except IdPrefixError as exc:
            print(f"openvaala: --resume: {exc}", file=sys.stderr)
            return 2
    app = VaalaApp(cwd=cwd, continue_last=continue_last, resume_id=resume_id, pick=pick)
    try:
        app.run()
    finally:
        gc.enable()  # if the app ended before its first screen
    return app.return_code or 0


def as_mode(mode: str) -> InputMode:
    """The composer's keys and commands send steer | queue | jump (widgets/composer.py); the
    daemon refuses anything else by name."""
    return cast("InputMode", mode)
