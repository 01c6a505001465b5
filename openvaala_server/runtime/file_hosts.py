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
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.tools.base import FileHost, HostFailed

HOST_TIMEOUT_S = 30.0  # for one read or write by the editor

Send = Callable[[str, JsonMapping], None]  # a notification to the hosting client only


@dataclass(eq=False)
class _Host:
    owner: object  # the client's connection
    send: Send
    # requestId → the answer awaited (text for a read, None for a write or "no such file")
    pending: dict[str, asyncio.Future[str | None]] = field(default_factory=dict)


class FileHosts:
    def __init__(self, timeout_s: float = HOST_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._hosts: dict[str, _Host] = {}  # conversation id → its host
        self._owners: dict[int, _Host] = {}  # id(connection) → its host record

    def host(self, conversation_id: str, owner: object, send: Send) -> bool:
        """Make `owner` the host of the conversation's files; True the first time this owner
        hosts anything (the caller then arranges `release` when it goes away)."""
        record = self._owners.get(id(owner))
        first = record is None
        if record is None:
            record = self._owners[id(owner)] = _Host(owner, send)
        self._hosts[conversation_id] = record
        return first

    def release(self, owner: object) -> None:
        """The client left: it hosts nothing more, and what waited on it fails now."""
        record = self._owners.pop(id(owner), None)
        if record is None:
            return
        for cid in [c for c, h in self._hosts.items() if h is record]:
            del self._hosts[cid]
        gone = HostFailed("the editor holding the files went away before answering")
        for future in record.pending.values():
            if not future.done():
                future.set_exception(gone)
        record.pending.clear()

    def for_conversation(self, conversation_id: str, root: Path) -> FileHost | None:
        record = self._hosts.get(conversation_id)
        if record is None:
            return None
        return HostedFiles(self, record, conversation_id, root)

    def respond(self, owner: object, request_id: str, text: str | None, error: str | None) -> None:
        record = self._owners.get(id(owner))
        future = record.pending.pop(request_id, None) if record is not None else None
        if future is None:
            raise errors.NotFound(f"no file request {request_id} waits for this client")
        if future.done():  # timed out meanwhile
            return
        if error is not None:
            future.set_exception(HostFailed(error))
        else:
            future.set_result(text)

    async def ask(self, record: _Host, params: dict[str, object]) -> str | None:
        request_id = new_id()
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        record.pending[request_id] = future
        try:
            record.send(methods.FILES_REQUESTED, {**params, "requestId": request_id})
            async with asyncio.timeout(self.timeout_s):
                return await future
        except TimeoutError:
            raise HostFailed(
                f"the editor holding the files did not answer within {self.timeout_s:g} s"
            ) from None
        finally:
            record.pending.pop(request_id, None)


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
        return await self.hosts.ask(
            self.record, {"conversationId": self.conversation_id, "op": "read", "path": str(path)}
        )

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
