"""The editor's files and terminals for the agent's tools (docs/editors.md, "Agent Client
Protocol").

When the editor offers `fs.readTextFile` and `fs.writeTextFile`, each session's conversation is
hosted by this agent (`files/host`): the daemon then asks it for each file its file tools read
or write (`files/requested`), and it answers with what the editor's `fs/read_text_file` and
`fs/write_text_file` did (`files/respond`) — unsaved buffers read, edits made in them. Approvals
and checkpoints stay the daemon's (docs/design.md, "Files held by an editor"). When it offers
`terminal` too, the shell tool's command lines (the sandbox included) run in its terminals
(`terminal/create` … `terminal/release`), shown in their tool call."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    ClientCapabilities,
    EnvVariable,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
)

from openvaala_acp.link import DaemonLink
from openvaala_acp.outbox import Outbox
from openvaala_acp.terminal_output import OutputTail
from openvaala_server.protocol import methods
from openvaala_server.protocol.file_payloads import (
    FilesHostParams,
    FilesOutputParams,
    FilesRespondParams,
)
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002  # ACP's error for a file the editor does not have
ERROR_MAX = 2000  # characters of a reason `files/respond` takes (docs/protocol.md)
OUTPUT_BYTE_LIMIT = 1024 * 1024  # of a command's output the editor keeps (the daemon cuts more)
# How often a running command's output is read from the editor and passed on to the daemon (ACP
# has no notification for it): the other clients see it live at this pace, the editor is asked
# at most this often per command.
OUTPUT_POLL_S = 0.25


def offers_files(capabilities: ClientCapabilities | None) -> bool:
    fs = capabilities.fs if capabilities is not None else None
    return bool(fs is not None and fs.read_text_file and fs.write_text_file)


def offers_terminal(capabilities: ClientCapabilities | None) -> bool:
    return bool(capabilities is not None and capabilities.terminal)


class EditorFiles:
    def __init__(
        self,
        link: DaemonLink,
        tasks: Supervisor,
        outbox: Outbox,
        shown: Callable[[str, str], bool] = lambda _session, _call: True,
        in_terminal: Callable[[str, str], None] = lambda _session, _call: None,
    ) -> None:
        self.link = link
        self.tasks = tasks
        self.outbox = outbox
        # Whether the editor was shown this tool call (a subagent's calls are not shown: a
        # terminal is put in no call the editor does not know).
        self.shown = shown
        # Told of each call shown as a terminal (its text output is then not sent over it).
        self.in_terminal = in_terminal
        self.conn: Client | None = None
        self.enabled = False  # the editor offered both fs methods (initialize)
        self.terminal = False  # the editor offered `terminal` (initialize)
        self.hosted: set[str] = set()  # conversation ids this agent hosts
        self._terminals: dict[str, tuple[str, str]] = {}  # requestId → (session, terminal)
        # Commands whose terminal the editor is still creating, and those of them the daemon
        # cancelled meanwhile: killed as soon as the editor names their terminal.
        self._creating: set[str] = set()
        self._cancelled: set[str] = set()

    async def host(self, conversation_id: str) -> None:
        if not self.enabled and not self.terminal:
            return
        params: FilesHostParams = {"conversationId": conversation_id, "terminal": self.terminal}
        if not self.enabled:  # commands only: the daemon reads the disk
            params["files"] = False
        await self.link.request(methods.FILES_HOST, params)
        self.hosted.add(conversation_id)

    def reconnected(self) -> None:
        """A new daemon connection hosts nothing: ask again for every session."""
        for cid in list(self.hosted):
            self.tasks.spawn(partial(self._host_again, cid), f"acp-host-{cid}")

    async def _host_again(self, conversation_id: str) -> None:
        try:
            await self.host(conversation_id)
        except RequestError as exc:  # the daemon went again: the next reconnection retries
            log.warning("could not host the files of %s again: %s", conversation_id, exc)

    def requested(self, params: JsonObject) -> None:
        request_id = str(params.get("requestId"))
        if params.get("op") == "cancel":  # an interrupted call: stop its command
            self.tasks.spawn(partial(self._kill, request_id), f"acp-kill-{request_id}")
            return
        self.tasks.spawn(partial(self._serve, params), f"acp-file-{request_id}")

    async def _serve(self, params: JsonObject) -> None:
        answer: FilesRespondParams = {"requestId": str(params.get("requestId"))}
        session_id, path = str(params.get("conversationId")), str(params.get("path"))
        try:
            if self.conn is None:
                raise RequestError(-32603, "the editor is not connected")
            if params.get("op") == "run":
                answer.update(await self._run(self.conn, params))
            elif params.get("op") == "write":
                await self.conn.write_text_file(
                    session_id=session_id, path=path, content=str(params.get("text") or "")
                )
            else:
                read = await self.conn.read_text_file(session_id=session_id, path=path)
                answer["text"] = read.content
        except RequestError as exc:
            if exc.code == RESOURCE_NOT_FOUND and params.get("op") == "read":
                answer["text"] = None
            else:
                answer["error"] = f"the editor answered: {exc}"
        except Exception as exc:  # the editor's connection broke: the daemon must hear of it
            answer["error"] = f"the editor could not be asked: {exc}"
        error = answer.get("error")
        if isinstance(error, str) and len(error) > ERROR_MAX:  # the daemon takes no more
            answer["error"] = error[: ERROR_MAX - 1] + "…"
        try:
            await self.link.request(methods.FILES_RESPOND, answer)
        except RequestError as exc:  # timed out on the daemon's side, or the daemon went away
            log.warning("a file answer was not taken: %s", exc)

    async def _run(self, conn: Client, params: JsonObject) -> FilesRespondParams:
        """Run the daemon's command line in an editor terminal, shown in its tool call."""
        session_id, request_id = str(params.get("conversationId")), str(params.get("requestId"))
        argv = [str(a) for a in _list(params.get("argv"))]
        env = params.get("env")
        variables = [
            EnvVariable(name=str(k), value=str(v))
            for k, v in (env.items() if isinstance(env, dict) else [])
        ]
        timeout = params.get("timeoutS")
        self._creating.add(request_id)  # before the first await: a cancel may come during it
        try:
            created = await conn.create_terminal(
                session_id=session_id,
                command=argv[0],
                args=argv[1:],
                cwd=str(params.get("cwd")),
                env=variables,
                output_byte_limit=OUTPUT_BYTE_LIMIT,
            )
        finally:
            self._creating.discard(request_id)
            cancelled = request_id in self._cancelled
            self._cancelled.discard(request_id)
        terminal_id = created.terminal_id
        self._terminals[request_id] = (session_id, terminal_id)
        if cancelled:  # interrupted while the editor made its terminal
            await self._kill(request_id)
        call_id = str(params.get("callId"))
        if self.shown(session_id, call_id):
            self.in_terminal(session_id, call_id)
            self.outbox.put(
                session_id,
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=call_id,
                    content=[TerminalToolCallContent(type="terminal", terminal_id=terminal_id)],
                ),
            )
        timed_out = False
        read = partial(conn.terminal_output, session_id=session_id, terminal_id=terminal_id)
        passing = asyncio.create_task(self._pass_output(read, request_id))
        try:
            try:
                limit = float(timeout) if isinstance(timeout, int | float) else None
                async with asyncio.timeout(limit):
                    await conn.wait_for_terminal_exit(
                        session_id=session_id, terminal_id=terminal_id
                    )
            except TimeoutError:
                timed_out = True
                await conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            finally:
                passing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await passing
            out = await read()
        finally:
            self._terminals.pop(request_id, None)
            await conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
        status = out.exit_status
        return {
            "requestId": request_id,
            "output": out.output,
            "truncated": out.truncated,
            "exitCode": status.exit_code if status is not None else None,
            "signal": status.signal if status is not None else None,
            "timedOut": timed_out,
        }

    async def _pass_output(
        self, read: Callable[[], Awaitable[TerminalOutputResponse]], request_id: str
    ) -> None:
        """While the command runs: what it printed since the last look, to the daemon, which
        streams it to every client as it does a command it runs itself (`files/output`)."""
        tail = OutputTail()
        while True:
            await asyncio.sleep(OUTPUT_POLL_S)  # a pace, not a wait for something
            try:
                text = tail.new((await read()).output)
                if text:
                    output: FilesOutputParams = {"requestId": request_id, "output": text}
                    await self.link.request(methods.FILES_OUTPUT, output)
            except Exception as exc:  # the command ended meanwhile, the daemon or editor went
                # The result still carries the output: only the live view stops here.
                log.info("a command's output was not passed on: %s", exc)
                return

    async def _kill(self, request_id: str) -> None:
        running = self._terminals.get(request_id)
        if running is None and request_id in self._creating:
            self._cancelled.add(request_id)  # `_run` kills it once the editor names it
            return
        if running is None or self.conn is None:
            return
        session_id, terminal_id = running
        try:
            await self.conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
        except RequestError as exc:
            log.warning("the editor did not kill a command's terminal: %s", exc)


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
