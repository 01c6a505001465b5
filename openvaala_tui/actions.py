"""The slash commands' behaviour (also reached from the command palette), and error display."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from textual.app import App

from openvaala_server.client import Client, ConnectionLost, RpcError
from openvaala_server.client.view import LOCAL_PREFIX, ConversationView
from openvaala_server.custom_commands import CustomCommand, directories, load
from openvaala_server.protocol import methods
from openvaala_server.protocol.display import format_tokens
from openvaala_tui import commands, errors
from openvaala_tui.screens import (
    AgentsScreen,
    ConfirmScreen,
    ListPicker,
    PromptScreen,
    ResumeScreen,
)
from openvaala_tui.widgets.composer import Composer
from openvaala_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from openvaala_server.protocol.calls import Request
    from openvaala_server.protocol.payloads import (
        AgentInfo,
        ConfigErrorNote,
        ConfigReloadedNote,
        ConfigState,
        ConversationSummary,
        ListParams,
        ModelInfo,
        SendParams,
        SessionInfo,
        Usage,
    )

_local_ids = itertools.count(1)


class SessionRef(TypedDict, total=False):
    """The session a request is about, when it is not the conversation's root."""

    sessionId: str


class CommandsMixin(App[int]):
    """Base of the app: the commands. The app supplies the state and the drawing."""

    client: Client | None
    view: ConversationView
    following: str | None
    cwd: str

    # -- provided by the app -----------------------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        raise NotImplementedError

    @property
    def composer(self) -> Composer:
        raise NotImplementedError

    async def open_conversation(self, cid: str, composer_text: str | None = None) -> None:
        raise NotImplementedError

    async def create_conversation(self, cwd: str) -> str | None:
        raise NotImplementedError

    async def interrupt(self, session_id: str | None = None) -> None:
        raise NotImplementedError

    async def redraw(self) -> None:
        raise NotImplementedError

    # -- showing things ----------------------------------------------------------------------

    async def local_notice(self, text: str, *, error: bool = False) -> None:
        """A line in the transcript from the UI itself (not part of the conversation)."""
        await self.transcript.add(
            {
                "itemId": f"{LOCAL_PREFIX}{next(_local_ids)}",
                "type": "notice",
                "kind": "error" if error else "info",
                "status": "completed",
                "text": text,
            }
        )

    async def show_config(self, status: ConfigState | ConfigReloadedNote | ConfigErrorNote) -> None:
        """A `config/error` or `config/reloaded` of the daemon (or `initialize`'s `config`)."""
        message = str(status.get("message") or "")
        if status.get("state") == "error":
            await self.local_notice(f"Config error: {message}", error=True)
            self.notify(f"Config error: {message}", severity="error", timeout=20)
        else:
            await self.local_notice(message[:1].upper() + message[1:])

    async def show_error(self, exc: Exception) -> None:
        if isinstance(exc, ConnectionLost):
            self.notify(errors.describe(exc), severity="warning")
            return
        if not isinstance(exc, RpcError):
            self.notify(errors.describe(exc), severity="error")
            return
        await self.local_notice(errors.describe(exc), error=True)
        if exc.kind == "model_missing":
            self.run_slash("model", "")

    # -- commands ----------------------------------------------------------------------------

    def run_slash(self, name: str, arg: str) -> None:
        self.run_worker(self.slash(name, arg), group="command", name=f"/{name}")

    async def slash(self, name: str, arg: str) -> None:
        handler = getattr(self, f"cmd_{name}", None)
        if handler is None:
            self.notify(f"Unknown command /{name}", severity="warning")
            return
        if self.client is None and name not in ("help", "exit", "quit"):
            self.notify("Not connected to the daemon.", severity="warning")
            return
        try:
            await handler(arg)
        except (RpcError, ConnectionLost, TimeoutError) as exc:
            await self.show_error(exc)

    @property
    def call(self) -> Request:
        """The client's `request`, typed by method (protocol/calls.py); commands run connected."""
        assert self.client is not None
        return self.client.request

    @property
    def cid(self) -> str:
        return self.view.conversation_id

    def _session_param(self) -> SessionRef:
        if self.following and self.following != self.view.root_id:
            return {"sessionId": self.following}
        return {}

    def user_commands_dir(self) -> Path:
        """The user's custom commands: `commands/` beside the daemon's config.toml."""
        state = self.client.server_info.get("config") if self.client is not None else None
        path = state.get("path") if isinstance(state, dict) else None
        if not path:
            from openvaala_server.discovery import config_path

            path = str(config_path())
        return Path(str(path)).parent / "commands"

    def compose_text(self, text: str) -> None:
        """Put `text` in the composer to finish (the palette's custom commands)."""
        self.composer.set_text(text)
        self.composer.focus()

    def custom_commands(self) -> dict[str, CustomCommand]:
        cwd = str(self.view.conversation.get("cwd") or self.cwd)
        return load(directories(self.user_commands_dir(), cwd), set(commands.COMMANDS))

    async def cmd_help(self, arg: str) -> None:
        custom = self.custom_commands()
        extra = ""
        if custom:
            extra = "\nCustom commands (prompt files): " + " · ".join(
                f"/{name} ({c.description})" if c.description else f"/{name}"
                for name, c in sorted(custom.items())
            )
        await self.local_notice(commands.HELP + extra)

    async def cmd_shell(self, arg: str) -> None:
        """`!command` (not a slash command: `slash` is how it reaches the daemon and errors)."""
        try:
            await self.call(methods.SHELL_RUN, {"conversationId": self.cid, "command": arg})
        except RpcError as exc:
            if exc.kind != "turn_running" or "output" not in exc.data:
                raise
            # A turn started meanwhile: the output is shown here, not kept (docs/protocol.md).
            await self.local_notice(
                f"{errors.describe(exc)}\n$ {arg}\n{exc.data['output']}", error=True
            )

    async def cmd_exit(self, arg: str) -> None:
        await self.action_quit()

    async def cmd_quit(self, arg: str) -> None:
        await self.action_quit()

    async def cmd_status(self, arg: str) -> None:
        from openvaala_tui.status_report import status_text

        assert self.client is not None
        session = self.view.sessions.get(self.following or self.view.root_id)
        info = session.info if session is not None else {}
        name = info.get("agent") or self.view.conversation.get("agent")
        agents = (await self.call(methods.AGENTS_LIST, {})).get("agents") or []
        agent = next((a for a in agents if a["name"] == name), None)
        state = self.client.server_info.get("config")
        await self.local_notice(
            status_text(
                agent=agent,
                session={"agent": name, **info},
                # The view keeps the last `usage/updated` (or the snapshot's) as it came.
                usage=cast("Usage", session.usage if session is not None else {}),
                cwd=str(self.view.conversation.get("cwd") or self.cwd),
                address=self.client.dialer.where() if self.client.dialer else self.client.address,
                config_path=str(state.get("path") if isinstance(state, dict) else "?"),
                mode=str(self.view.conversation.get("permissionMode") or "") or None,
            )
        )

    async def cmd_mcp(self, arg: str) -> None:
        from openvaala_tui.mcp_status import mcp_status_text

        result = await self.call(methods.MCP_LIST, {})
        await self.local_notice(mcp_status_text(result["servers"]))

    async def cmd_new(self, arg: str) -> None:
        cwd = str(self.view.conversation.get("cwd") or self.cwd)
        cid = await self.create_conversation(cwd)
        if cid is not None:
            await self.open_conversation(cid)

    async def load_conversations(self, search: str, archived: bool) -> list[ConversationSummary]:
        """The resume list's rows (newest first)."""
        params: ListParams = {"archived": archived, "limit": 100}
        if search:
            params["search"] = search
        result = await self.call(methods.CONVERSATION_LIST, params)
        return result["conversations"]

    async def cmd_resume(self, arg: str) -> None:
        chosen = await self.push_screen_wait(ResumeScreen(self.load_conversations))
        if chosen:
            await self.open_conversation(chosen)

    async def cmd_fork(self, arg: str) -> None:
        result = await self.call(methods.CONVERSATION_FORK, {"conversationId": self.cid})
        await self.open_conversation(str(result["conversation"]["conversationId"]))
        self.notify("Forked: you are in the copy now.")

    async def cmd_compact(self, arg: str) -> None:
        self.notify("Compacting the history…")
        result = await self.call(methods.CONVERSATION_COMPACT, {"conversationId": self.cid})
        if result.get("compacted"):
            self.notify("Compacted: the summary replaces the older history for the model.")
        else:
            reason = result.get("reason") or "nothing to compact"
            await self.local_notice(f"Nothing compacted: {reason}.")

    def session_infos(self) -> list[SessionInfo]:
        """The sessions as `sessions/list` gives them, from the live view (which keeps each
        `session/updated`'s session as it came)."""
        return [
            cast("SessionInfo", {**s.info, "sessionId": sid})
            for sid, s in self.view.sessions.items()
        ]

    async def cmd_agents(self, arg: str) -> None:
        result = await self.call(methods.SESSIONS_LIST, {"conversationId": self.cid})
        listed = {s["sessionId"]: s for s in result["sessions"]}
        live = {str(s["sessionId"]): s for s in self.session_infos()}
        sessions = list({**listed, **live}.values())  # the live view has the latest status
        chosen = await self.push_screen_wait(AgentsScreen(sessions, self.following))
        if not chosen:
            return
        action, sid = chosen
        info = live.get(sid) or listed.get(sid)
        name = (info and (info.get("title") or info.get("agent"))) or "agent"
        if action == "follow":
            self.following = sid
            await self.redraw()
            if sid != self.view.root_id:
                self.notify(f"Following {name}: what you send goes to it. /agents to switch back.")
        elif action == "interrupt":
            session = self.view.sessions.get(sid)
            if session is not None and not session.running:
                self.notify(f"{name} is not running.", severity="warning")
                return
            await self.interrupt(sid)
        elif action == "message":
            text = await self.push_screen_wait(PromptScreen(f"Message to {name}"))
            if text:
                params: SendParams = {"conversationId": self.cid, "text": text, "mode": "steer"}
                if sid != self.view.root_id:
                    params["sessionId"] = sid
                await self.call(methods.INPUT_SEND, params)
                self.notify(f"Sent to {name}.")

    async def cmd_model(self, arg: str) -> None:
        if not arg:
            result = await self.call(methods.MODELS_LIST, {})
            choices = [(m["name"], model_label(m)) for m in result["models"]]
            session = self.view.sessions.get(self.following or self.view.root_id)
            current = session.info.get("model") if session is not None else None
            current = current or self.view.conversation.get("model")
            picked = await self.push_screen_wait(
                ListPicker("Switch the model", choices, current=str(current or ""))
            )
            arg = picked or ""
        if arg:
            await self.call(
                methods.CONVERSATION_SET_MODEL,
                {"conversationId": self.cid, "model": arg, **self._session_param()},
            )
            self.notify(f"Model: {arg}")

    async def cmd_agent(self, arg: str) -> None:
        """`/agent NAME` chooses the conversation's agent; alone, a list to pick from. The
        status bar shows it once the daemon says so (`conversation/updated`)."""
        if not arg:
            result = await self.call(methods.AGENTS_LIST, {})
            choices = [(a["name"], agent_label(a)) for a in result["agents"]]
            picked = await self.push_screen_wait(ListPicker("Choose the agent", choices))
            arg = picked or ""
        if arg:
            await self.call(
                methods.CONVERSATION_SET_AGENT, {"conversationId": self.cid, "agent": arg}
            )
            self.notify(f"Agent: {arg}")

    async def cmd_cwd(self, arg: str) -> None:
        """`/cwd PATH` points the conversation at another directory: absolute, or relative to
        its current one; `~` is expanded."""
        current = str(self.view.conversation.get("cwd") or self.cwd)
        if not arg:
            await self.local_notice(
                f"The working directory is {current}. /cwd PATH points this conversation at "
                "another one."
            )
            return
        path = commands.resolve_dir(arg, current)
        await self.call(methods.CONVERSATION_SET_CWD, {"conversationId": self.cid, "cwd": path})
        self.notify(f"Working directory: {path}")

    async def cmd_rename(self, arg: str) -> None:
        title: str | None = arg
        if not title:
            title = await self.push_screen_wait(
                PromptScreen("Rename the conversation", value=self.view.title)
            )
        if title:
            await self.call(
                methods.CONVERSATION_RENAME, {"conversationId": self.cid, "title": title}
            )

    async def cmd_archive(self, arg: str) -> None:
        await self.call(methods.CONVERSATION_ARCHIVE, {"conversationId": self.cid})
        self.notify("Archived. /resume shows it with the archived switch on.")

    async def cmd_delete(self, arg: str) -> None:
        sure = await self.push_screen_wait(ConfirmScreen(f"Delete “{self.view.title}” for good?"))
        if not sure:
            return
        await self.call(methods.CONVERSATION_DELETE, {"conversationId": self.cid})
        await self.cmd_new("")


def agent_label(agent: AgentInfo) -> str:
    default = ", the default" if agent.get("default") else ""
    description = f": {agent['description']}" if agent.get("description") else ""
    return f"{agent.get('name')}  ({agent.get('model')}{default}){description}"


def model_label(model: ModelInfo) -> str:
    window = format_tokens(int(model.get("contextWindow") or 0))
    # Where the window came from (docs/configuration.md, "Context window"), unless written in
    # the file: a window the daemon filled in is worth knowing about.
    source = str(model.get("contextWindowSource") or "config")
    origin = "" if source == "config" else f" from the {source}"
    if source.startswith(("server: ", "default: ")):
        origin = f" ({source})"
    return f"{model.get('name')}  ({model.get('provider')}, {window} context{origin})"
