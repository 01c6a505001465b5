"""Clients that hold a conversation's files (docs/design.md, "Files held by an editor").

An editor client (`openvaala acp` for an editor that offers its file system) calls `files/host`
for a conversation; from then on the file tools of that conversation's calls read and write the
files inside its working directory through that client: the daemon sends the client a
`files/requested` notification and waits for its `files/respond` (docs/protocol.md). One host per
conversation, the latest to ask. When the client goes away its requests fail at once and the
tools use the disk again; a host that does not answer in `timeout_s` fails the call with a
message that says so (nothing is written behind the editor's back).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from openvaala_server import errors
from openvaala_server.domain.ids import new_id
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonMapping, JsonObject
from openvaala_server.tools.base import FileHost, HostFailed, TerminalHost, TerminalRun

HOST_TIMEOUT_S = 30.0  # for one read or write by the editor, and past a command's own time-out

Send = Callable[[str, JsonMapping], None]  # a notification to the hosting client only


@dataclass(eq=False)
class _Host:
    owner: object  # the client's connection
    send: Send
    # requestId → the answer awaited (the params of its files/respond)
    pending: dict[str, asyncio.Future[JsonObject]] = field(default_factory=dict)
    # requestId of a command still running → where what it prints goes (files/output)
    streams: dict[str, Callable[[str], None]] = field(default_factory=dict)


class FileHosts:
    def __init__(self, timeout_s: float = HOST_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._hosts: dict[str, _Host] = {}  # conversation id → its host
        # conversation id → what its host serves there: (files, terminal); one client may
        # host several conversations, each as it asked.
        self._serves: dict[str, tuple[bool, bool]] = {}
        self._owners: dict[int, _Host] = {}  # id(connection) → its host record

    def host(
        self,
        conversation_id: str,
        owner: object,
        send: Send,
        terminal: bool = False,
        files: bool = True,
    ) -> bool:
        """Make `owner` the host of the conversation's files (unless not `files`) and
        commands (if `terminal`); True the first time this owner hosts anything (the caller
        then arranges `release` when it goes away)."""
        record = self._owners.get(id(owner))
        first = record is None
        if record is None:
            record = self._owners[id(owner)] = _Host(owner, send)
        self._hosts[conversation_id] = record
        self._serves[conversation_id] = (files, terminal)
        return first

    def release(self, owner: object) -> None:
        """The client left: it hosts nothing more, and what waited on it fails now."""
        record = self._owners.pop(id(owner), None)
        if record is None:
            return
        for cid in [c for c, h in self._hosts.items() if h is record]:
            del self._hosts[cid]
            del self._serves[cid]
        gone = HostFailed("the editor holding the files went away before answering")
        for future in record.pending.values():
            if not future.done():
                future.set_exception(gone)
        record.pending.clear()

    def for_conversation(self, conversation_id: str, root: Path) -> FileHost | None:
        record = self._hosts.get(conversation_id)
        if record is None or not self._serves[conversation_id][0]:
            return None
        return HostedFiles(self, record, conversation_id, root)

    def terminal_for(self, conversation_id: str) -> TerminalHost | None:
        record = self._hosts.get(conversation_id)
        if record is None or not self._serves[conversation_id][1]:
            return None
        return HostedTerminal(self, record, conversation_id)

    def respond(self, owner: object, answer: JsonObject) -> None:
        """A host's `files/respond` (its params): what the request it names waited for."""
        request_id = str(answer.get("requestId"))
        record = self._owners.get(id(owner))
        future = record.pending.pop(request_id, None) if record is not None else None
        if future is None:
            raise errors.NotFound(f"no file request {request_id} waits for this client")
        if future.done():  # timed out meanwhile
            return
        error = answer.get("error")
        if isinstance(error, str):
            future.set_exception(HostFailed(error))
        else:
            future.set_result(answer)

    def output(self, owner: object, request_id: str, text: str) -> None:
        """A host's `files/output`: what a command it runs printed since its last one, passed
        on as the daemon's own shell passes its output (the tool result's deltas)."""
        record = self._owners.get(id(owner))
        stream = record.streams.get(request_id) if record is not None else None
        if stream is None:
            raise errors.NotFound(f"no command {request_id} of this client is running")
        stream(text)

    async def ask(
        self,
        record: _Host,
        params: dict[str, object],
        timeout_s: float | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> JsonObject:
        request_id = new_id()
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        record.pending[request_id] = future
        if on_output is not None:
            record.streams[request_id] = on_output
        waited = timeout_s if timeout_s is not None else self.timeout_s
        try:
            record.send(methods.FILES_REQUESTED, {**params, "requestId": request_id})
            async with asyncio.timeout(waited):
                return await future
        except TimeoutError:
            raise HostFailed(f"the editor did not answer within {waited:g} s") from None
        except asyncio.CancelledError:
            # The call was interrupted: the editor stops what it does for it (a command).
            # (Cancelling the task cancelled the awaited future too: not an answer.)
            answered = future.done() and not future.cancelled()
            if not answered and self._owners.get(id(record.owner)) is record:
                cancel = {"conversationId": params["conversationId"], "op": "cancel"}
                record.send(methods.FILES_REQUESTED, {**cancel, "requestId": request_id})
            raise
        finally:
            record.pending.pop(request_id, None)
            record.streams.pop(request_id, None)


@dataclass(frozen=True)
class HostedFiles:
    """The files of one conversation as its host serves them (tools/base.FileHost)."""

    hosts: FileHosts
    record: _Host
    conversation_id: str
    root: Path

    def holds(self, path: Path) -> bool:
        # Called off the loop (the tools' thread): resolving may touch the disk.
        return path.is_relative_to(self.root.resolve())

    async def read(self, path: Path) -> str | None:
        answer = await self.hosts.ask(
            self.record, {"conversationId": self.conversation_id, "op": "read", "path": str(path)}
        )
        text = answer.get("text")
        return text if isinstance(text, str) else None

    async def write(self, path: Path, text: str) -> None:
        await self.hosts.ask(
            self.record,
            {
                "conversationId": self.conversation_id,
                "op": "write",
                "path": str(path),
                "text": text,
            },
        )


@dataclass(frozen=True)
class HostedTerminal:
    """Commands of one conversation run in its host's terminals (tools/base.TerminalHost)."""

    hosts: FileHosts
    record: _Host
    conversation_id: str

    async def run(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout_s: float,
        call_id: str,
        on_output: Callable[[str], None],
    ) -> TerminalRun:
        params: dict[str, object] = {
            "conversationId": self.conversation_id,
            "op": "run",
            "argv": argv,
            "cwd": str(cwd),
            "env": env,
            "timeoutS": timeout_s,
            "callId": call_id,
        }
        # The command's own time-out is the editor's to apply; this one is for an editor
        # that never answers at all.
        answer = await self.hosts.ask(
            self.record, params, timeout_s + self.hosts.timeout_s, on_output
        )
        code, signal = answer.get("exitCode"), answer.get("signal")
        return TerminalRun(
            output=str(answer.get("output") or ""),
            exit_code=code if isinstance(code, int) else None,
            signal=signal if isinstance(signal, str) else None,
            timed_out=answer.get("timedOut") is True,
            truncated=answer.get("truncated") is True,
        )
