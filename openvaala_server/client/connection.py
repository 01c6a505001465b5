"""The async Python client of the OpenVaala protocol (used by the TUI, the LSP bridge and tests).

    client = await Client.connect()                  # finds (or starts) the local server
    conv = (await client.request("conversation/create", {"cwd": "/abs/path"}))["conversation"]
    await client.subscribe(conv["conversationId"])
    await client.request("input/send", {"conversationId": ..., "text": "hi", "mode": "queue"})
    async for note in client.notifications(): ...

It finds the server from `runtime.lock` and the token file, starts one with `openvaala serve start`
if none runs, and after a dropped connection reconnects by itself and resubscribes with `afterSeq`,
so the notifications it yields have no gap and no duplicate. When the server can no longer replay
what was missed it yields `{"method": "conversation/snapshot", ...}` so a UI can redraw.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from openvaala_server import __version__
from openvaala_server.client import images as client_images
from openvaala_server.client.daemon import DataDirLike, ensure_server, find_server, root_of
from openvaala_server.protocol import codec, jsonrpc

log = logging.getLogger(__name__)

SNAPSHOT = "conversation/snapshot"  # synthetic: a resubscription that could not replay
CONNECTION = "client/connection"  # synthetic: {"state": "connected" | "reconnecting"}


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        self.code = int(error.get("code", -32000))
        self.message = str(error.get("message", "error"))
        self.data = error.get("data") or {}
        self.kind = str(self.data.get("kind", "error"))
        super().__init__(f"{self.kind}: {self.message}")


class ConnectionLost(Exception):
    """The request could not complete because the connection dropped."""


class Client:
    def __init__(
        self,
        address: str,
        token: str,
        *,
        client_name: str = "openvaala-python",
        reconnect: bool = True,
        locate: Callable[[], tuple[str, str] | None] | None = None,
    ) -> None:
        self.address = address
        self.token = token
        self.client_name = client_name
        self.reconnect = reconnect
        self._locate = locate  # finds the server again after a restart (new port, new token)
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._hooks: dict[int, Callable[[Any], None]] = {}
        self._background: set[asyncio.Task[None]] = set()  # resubscriptions under way
        self._notes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._closed = False
        # Last seq seen per subscribed conversation: what a resubscription asks for.
        self.last_seq: dict[str, int] = {}
        self.server_info: dict[str, Any] = {}

    @classmethod
    async def connect(
        cls,
        address: str | None = None,
        token: str | None = None,
        *,
        data_dir: DataDirLike | None = None,
        start: bool = True,
        client_name: str = "openvaala-python",
        reconnect: bool = True,
    ) -> Client:
        locate: Callable[[], tuple[str, str] | None] | None = None
        if address is None or token is None:
            data = root_of(data_dir)
            found = await asyncio.to_thread(ensure_server if start else find_server, data)
            if found is None:
                raise RuntimeError(
                    "no OpenVaala server is running (start one: openvaala serve start)"
                )
            address, token = found
            locate = lambda: find_server(data)  # noqa: E731
        client = cls(address, token, client_name=client_name, reconnect=reconnect, locate=locate)
        await client._open()
        client._reader = asyncio.create_task(client._read_forever())
        return client

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def _open(self) -> None:
        ws = await connect(
            f"ws://{self.address}/ws",
            additional_headers={"Authorization": f"Bearer {self.token}"},
            max_size=None,
            open_timeout=10,
        )
        try:
            await self._initialize(ws)
        except BaseException:
            # A server that accepts the socket and then fails `initialize` (or goes away) must
            # not leave it open: reconnect attempts would leak one socket each.
            await ws.close()
            raise
        self._ws = ws
        self._connected.set()

    async def _initialize(self, ws: ClientConnection) -> None:
        # initialize goes out before the reader runs, so read its answer directly.
        init_id = next(self._ids)
        await ws.send(
            jsonrpc.request(
                init_id,
                "initialize",
                {
                    "clientInfo": {"name": self.client_name, "version": __version__},
                    "protocolVersion": 1,
                },
            ).decode()
        )
        while True:
            message = codec.loads(await ws.recv())
            if message.get("id") == init_id:
                if "error" in message:
                    raise RpcError(message["error"])
                self.server_info = message["result"]
                return

    async def close(self) -> None:
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ws is not None:
            await self._ws.close()
        self._fail_pending()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests ------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float = 60,
        *,
        on_result: Callable[[Any], None] | None = None,
    ) -> Any:
        """Send a request and await its result. `on_result` runs in the reader, before any
        later frame is handled (a subscription must count seqs from its very first event)."""
        await asyncio.wait_for(self._connected.wait(), timeout)
        assert self._ws is not None
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        if on_result is not None:
            self._hooks[msg_id] = on_result
        try:
            await self._ws.send(jsonrpc.request(msg_id, method, params or {}).decode())
            return await asyncio.wait_for(future, timeout)
        except ConnectionClosed:
            raise ConnectionLost(f"connection lost during {method}") from None
        finally:
            self._pending.pop(msg_id, None)
            self._hooks.pop(msg_id, None)

    async def subscribe(self, conversation_id: str, after_seq: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"conversationId": conversation_id}
        if after_seq is not None:
            params["afterSeq"] = after_seq

        def track(result: Any) -> None:
            if result.get("snapshot") is not None or after_seq is None:
                self.last_seq[conversation_id] = result["seq"]
            else:
                self.last_seq[conversation_id] = after_seq  # the replay follows

        result: dict[str, Any] = await self.request(
            "conversation/subscribe", params, on_result=track
        )
        return result

    async def unsubscribe(self, conversation_id: str) -> None:
        self.last_seq.pop(conversation_id, None)
        await self.request("conversation/unsubscribe", {"conversationId": conversation_id})

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        mode: str = "queue",
        session_id: str | None = None,
        images: Sequence[str | os.PathLike[str] | bytes] = (),
    ) -> dict[str, Any]:
        """`input/send`; `images` are image files (paths or `file://` URIs) or raw bytes, sent
        with the message (docs/protocol.md, input/send). A file that is not a PNG, JPEG, GIF or
        WebP image, or is over 5 MiB, raises `client_images.ImageError` before anything is sent."""
        params: dict[str, Any] = {"conversationId": conversation_id, "text": text, "mode": mode}
        if session_id is not None:
            params["sessionId"] = session_id
        if images:
            params["images"] = [
                client_images.from_bytes(i)
                if isinstance(i, bytes)
                else client_images.from_uri(i)
                if isinstance(i, str) and i.startswith("file://")
                else client_images.from_path(i)
                for i in images
            ]
        result: dict[str, Any] = await self.request("input/send", params)
        return result

    async def attachment(self, conversation_id: str, sha256: str) -> bytes:
        """The bytes of one of the conversation's images (`GET /attachments/…`, with the token).
        Raises `httpx.HTTPError` when the daemon does not serve it."""
        import httpx  # only clients that read images need it

        url = f"http://{self.address}/attachments/{conversation_id}/{sha256}"
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.get(url, headers={"Authorization": f"Bearer {self.token}"})
            response.raise_for_status()
            return response.content

    async def respond_approval(
        self,
        conversation_id: str,
        approval_id: str,
        decision: str,
        message: str | None = None,
    ) -> dict[str, Any]:
        """Answer an `approval/requested`: "allow", "allow_conversation" or "deny" (with an
        optional message the model receives). Raises `RpcError` with kind `already_resolved`
        when another client answered first."""
        params: dict[str, Any] = {
            "conversationId": conversation_id,
            "approvalId": approval_id,
            "decision": decision,
        }
        if message is not None:
            params["message"] = message
        result: dict[str, Any] = await self.request("approval/respond", params)
        return result

    async def set_agent(self, conversation_id: str, agent: str) -> None:
        """Choose the conversation's agent, e.g. when its own is not configured here
        (`agentAvailable` false). Raises `RpcError` `agent_missing` for an unknown name and
        `turn_running` while a turn runs."""
        await self.request(
            "conversation/setAgent", {"conversationId": conversation_id, "agent": agent}
        )

    async def set_cwd(self, conversation_id: str, cwd: str) -> None:
        """Point the conversation at another working directory (absolute, existing), e.g. when
        its own was moved (`cwdExists` false)."""
        await self.request("conversation/setCwd", {"conversationId": conversation_id, "cwd": cwd})

    # -- notifications -------------------------------------------------------------------

    async def notifications(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            note = await self._notes.get()
            if note.get("method") == "client/closed":
                return
            yield note

    async def next_notification(self, timeout: float = 10) -> dict[str, Any]:
        return await asyncio.wait_for(self._notes.get(), timeout)

    def _on_notification(self, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        cid = params.get("conversationId")
        seq = params.get("seq")
        if isinstance(cid, str) and isinstance(seq, int):
            if cid not in self.last_seq:
                return  # not (or no longer) subscribed here
            if seq <= self.last_seq[cid]:
                return  # already seen (a replay overlapping what arrived live)
            self.last_seq[cid] = seq
        self._notes.put_nowait({"method": message.get("method"), "params": params})

    # -- the connection ------------------------------------------------------------------

    async def _read_forever(self) -> None:
        while not self._closed:
            assert self._ws is not None
            try:
                async for frame in self._ws:
                    message = codec.loads(frame)
                    if "method" in message and "id" not in message:
                        self._on_notification(message)
                    elif isinstance(message.get("id"), int):
                        future = self._pending.get(message["id"])
                        if future is not None and not future.done():
                            if "error" in message:
                                future.set_exception(RpcError(message["error"]))
                            else:
                                hook = self._hooks.pop(message["id"], None)
                                if hook is not None:
                                    hook(message.get("result"))
                                future.set_result(message.get("result"))
            except ConnectionClosed:
                pass
            self._connected.clear()
            self._fail_pending()
            if self._closed or not self.reconnect:
                self._notes.put_nowait({"method": "client/closed", "params": {}})
                return
            self._notes.put_nowait({"method": CONNECTION, "params": {"state": "reconnecting"}})
            await self._reconnect()

    async def _reconnect(self) -> None:
        delay = 0.1
        while not self._closed:
            try:
                if self._locate is not None:
                    found = await asyncio.to_thread(self._locate)
                    if found:
                        self.address, self.token = found
                await self._open()
                break
            except (
                OSError,
                InvalidHandshake,
                InvalidStatus,
                ConnectionClosed,
                RpcError,
                TimeoutError,
            ):
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        self._notes.put_nowait({"method": CONNECTION, "params": {"state": "connected"}})
        for cid, seq in list(self.last_seq.items()):
            task = asyncio.create_task(self._resubscribe(cid, seq))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _resubscribe(self, cid: str, seq: int) -> None:

        def track(result: Any) -> None:
            if result.get("snapshot") is not None:
                self.last_seq[cid] = result["seq"]
                self._notes.put_nowait(
                    {
                        "method": SNAPSHOT,
                        "params": {
                            "conversationId": cid,
                            "seq": result["seq"],
                            "snapshot": result["snapshot"],
                        },
                    }
                )

        try:
            await self.request(
                "conversation/subscribe", {"conversationId": cid, "afterSeq": seq}, on_result=track
            )
        except (RpcError, ConnectionLost, TimeoutError) as exc:
            log.warning("could not resubscribe to %s: %s", cid, exc)

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the connection to the server was lost"))
        self._pending.clear()
