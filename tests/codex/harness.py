"""A Codex app-server client for the tests, over the daemon's websocket or over
`openvaala app-server` (stdio JSONL): the same tests drive both. Every message it receives is
checked against Codex's schema (`schema_check.py`) before a test sees it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any, Protocol

from websockets.asyncio.client import ClientConnection, connect

from tests.codex import schema_check
from tests.support.daemon import Daemon

TIMEOUT = 30.0  # generous: the machine is shared; nothing waits this long when all is well
Message = dict[str, Any]


class Transport(Protocol):
    async def send(self, text: str) -> None: ...
    async def recv(self) -> str | None: ...
    async def close(self) -> None: ...


class WebSocketTransport:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, daemon: Daemon, path: str = "/app-server") -> WebSocketTransport:
        ws = await connect(
            f"ws://{daemon.address}{path}",
            additional_headers={"Authorization": f"Bearer {daemon.token}"},
            max_size=None,
            proxy=None,
        )
        return cls(ws)

    async def send(self, text: str) -> None:
        await self.ws.send(text)

    async def recv(self) -> str | None:
        try:
            frame = await self.ws.recv()
        except Exception:
            return None
        return frame if isinstance(frame, str) else frame.decode()

    async def close(self) -> None:
        await self.ws.close()


class StdioTransport:
    """`openvaala app-server` in a child process, as a Codex client would spawn it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def open(cls, daemon: Daemon) -> StdioTransport:
        # The two-line wrapper docs/codex.md gives the IDE extension (CODEX_CLI_PATH), called
        # the way the extension calls `codex`.
        wrapper = daemon.home.parent / "codex-wrapper"
        if not wrapper.exists():
            wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m openvaala_server app-server\n")
            wrapper.chmod(0o755)
        process = await asyncio.create_subprocess_exec(
            str(wrapper),
            "app-server",
            "--analytics-default-enabled",
            env=daemon.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    async def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode() + b"\n")
        await self.process.stdin.drain()

    async def recv(self) -> str | None:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        return line.decode() if line else None

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), TIMEOUT)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


class CodexClient:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._next = 0
        self._waiting: dict[object, asyncio.Future[Message]] = {}
        self._methods: dict[object, str] = {}
        self.notes: list[Message] = []  # every notification, in order
        self.requests: list[Message] = []  # every server request, in order
        self._changed = asyncio.Event()
        self.answer: Callable[[Message], object] | None = None  # answers server requests
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while (text := await self.transport.recv()) is not None:
            message = json.loads(text)
            if "method" in message and "id" in message:
                schema_check.check_server_request(message)
                self.requests.append(message)
                if self.answer is not None:
                    result = self.answer(message)
                    if result is not None:
                        await self.respond(message["id"], result)
            elif "method" in message:
                schema_check.check_notification(message)
                self.notes.append(message)
            else:
                future = self._waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)
            self._changed.set()

    async def send_raw(self, text: str) -> None:
        await self.transport.send(text)

    async def call(self, method: str, params: Message | None = None) -> Message:
        """The whole response message (result or error)."""
        self._next += 1
        msg_id = self._next
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        await self.transport.send(
            json.dumps({"id": msg_id, "method": method, "params": params or {}})
        )
        message = await asyncio.wait_for(future, TIMEOUT)
        if "result" in message:
            schema_check.check_response(method, message["result"])
        else:
            schema_check.check_error(message)
        return message

    async def request(self, method: str, params: Message | None = None) -> Any:
        message = await self.call(method, params)
        assert "error" not in message, f"{method} failed: {message['error']}"
        return message["result"]

    async def notify(self, method: str, params: Message | None = None) -> None:
        payload: Message = {"method": method}
        if params is not None:
            payload["params"] = params
        await self.transport.send(json.dumps(payload))

    async def respond(self, msg_id: object, result: object) -> None:
        await self.transport.send(json.dumps({"id": msg_id, "result": result}))

    async def initialize(self, **capabilities: Any) -> Message:
        result = await self.request(
            "initialize",
            {
                "clientInfo": {"name": "openvaala-tests", "title": None, "version": "1"},
                "capabilities": {
                    "experimentalApi": True,
                    "requestAttestation": False,
                    **capabilities,
                },
            },
        )
        await self.notify("initialized")
        return result  # type: ignore[no-any-return]

    async def wait_for(
        self, method: str, where: Callable[[Message], bool] = lambda p: True, *, after: int = 0
    ) -> Message:
        """The params of the first notification `method` (from index `after`) matching `where`."""

        async def find() -> Message:
            while True:
                for note in self.notes[after:]:
                    if note["method"] == method and where(note["params"]):
                        return note["params"]  # type: ignore[no-any-return]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), TIMEOUT)

    async def wait_request(self, method: str, *, after: int = 0) -> Message:
        async def find() -> Message:
            while True:
                for request in self.requests[after:]:
                    if request["method"] == method:
                        return request
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), TIMEOUT)

    def after(self, index: int, method: str) -> list[Message]:
        return [n["params"] for n in self.notes[index:] if n["method"] == method]

    async def close(self) -> None:
        await self.transport.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


async def open_client(daemon: Daemon, transport: str) -> CodexClient:
    if transport == "stdio":
        client = CodexClient(await StdioTransport.open(daemon))
    else:
        client = CodexClient(await WebSocketTransport.open(daemon))
    await client.initialize()
    return client
