"""The async Python client of the OpenVaala protocol (used by the TUI, the LSP bridge and tests).

    client = await Client.connect()                  # finds (or starts) the local server
    conv = (await client.request("conversation/create", {"cwd": "/abs/path"}))["conversation"]
    await client.subscribe(conv["conversationId"])
    await client.request("input/send", {"conversationId": ..., "text": "hi", "mode": "queue"})
    async for note in client.notifications(): ...

It finds the server from `runtime.lock` and the token file, starts one with `openvaala serve start`
if none runs, and after a dropped connection reconnects by itself (one backoff: `backoff.py`) and
resubscribes with `afterSeq` before any other request goes out, so the notifications it yields
have no gap and no duplicate. When the server can no longer replay what was missed it yields
`{"method": SNAPSHOT, ...}` so a UI can redraw. Made with `restart=True` (the
editor bridge, the ACP agent), it also starts a new daemon when the lost one does not come back.
Every frame is decoded by the one codec (`protocol/jsonrpc.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from openvaala_server import __version__
from openvaala_server.client import images as client_images
from openvaala_server.client.backoff import BACKOFF, RESTART_GRACE_S, Backoff
from openvaala_server.client.daemon import (
    DataDirLike,
    ensure_server,
    find_server,
    root_of,
    server_starting,
    starting_here,
)
from openvaala_server.client.remote import Dialer, Remote, RemoteUnavailable, configured
from openvaala_server.protocol import jsonrpc, methods
from openvaala_server.protocol.json_types import JsonObject, JsonValue

if TYPE_CHECKING:  # annotations only: the payload types cost ~60 ms to import (TUI start-up)
    from openvaala_server.client.notes import ConnectionParams, SnapshotParams

    # Re-exported: `Note` was declared here before client/notes.py held the union.
    from openvaala_server.client.notes import Note as Note
    from openvaala_server.domain.approvals import Answer
    from openvaala_server.domain.inbox import Mode
    from openvaala_server.protocol import payloads
    from openvaala_server.protocol.calls import Notification, Request

log = logging.getLogger(__name__)

SNAPSHOT: Final = "conversation/snapshot"  # synthetic: a resubscription that could not replay
# synthetic: {"state": "connected" | "reconnecting" | "disconnected", "restarted"?, "message"?}
CONNECTION: Final = "client/connection"
CLOSED: Final = "client/closed"  # internal: ends notifications()

Address = tuple[str, str]  # (host:port, token)


class RpcError(Exception):
    def __init__(self, error: JsonValue) -> None:
        wire = error if isinstance(error, dict) else {}
        code, message, data = wire.get("code"), wire.get("message"), wire.get("data")
        self.code = code if isinstance(code, int) else -32000
        self.message = str(message or "error")
        self.data: JsonObject = data if isinstance(data, dict) else {}
        self.kind = str(self.data.get("kind", "error"))
        super().__init__(f"{self.kind}: {self.message}")


class ConnectionLost(Exception):
    """The request could not complete because the connection dropped."""


class StartFailed(Exception):
    """No daemon runs and none could be started (`message` says why)."""


_RETRYABLE = (
    OSError,
    InvalidHandshake,
    InvalidStatus,
    ConnectionClosed,
    ConnectionLost,
    RpcError,
    TimeoutError,
)


class Client:
    def __init__(
        self,
        address: str,
        token: str,
        *,
        client_name: str = "openvaala-python",
        reconnect: bool = True,
        locate: Callable[[], Address | None] | None = None,
        start: Callable[[], Address] | None = None,
        starting: Callable[[], bool] | None = None,
        backoff: Backoff = BACKOFF,
        dialer: Dialer | None = None,
    ) -> None:
        self.address = address
        self.token = token
        self.client_name = client_name
        self.reconnect = reconnect
        self._locate = locate  # finds the server again after a restart (new port, new token)
        self._start = start  # starts a daemon when the lost one does not come back
        # Whether another daemon is starting (then `start` waits out RESTART_GRACE_S for it);
        # None: not known, so always wait.
        self._starting = starting
        self._backoff = backoff
        # Through ssh to another machine (docs/remote.md): each connection is a new ssh channel.
        self.dialer = dialer
        self._ids = itertools.count(1)
        # Typed by method (protocol/calls.py): `await client.request("conversation/list", {})`
        # is a `ListResult`. An attribute, because mypy maps names to types only through the
        # overloads of a protocol's `__call__`, and the table is generated, not written here.
        self.request: Request = self._request
        self._pending: dict[int, asyncio.Future[JsonValue]] = {}
        self._hooks: dict[int, Callable[[JsonValue], None]] = {}
        self._notes: asyncio.Queue[Note] = asyncio.Queue()
        self._ws: ClientConnection | None = None
        # The runner is the client's one task (its owner is `close()`); the connection's reader
        # is a task of the runner's task group, so closing the client ends both at once
        # (docs/design.md, "Structured concurrency"). asyncio's own group, not anyio's: the
        # client needs no cancel scope, and anyio's asyncio backend was a twentieth of the
        # terminal UI's start-up (docs/design.md, "Where asyncio stays").
        self._runner: asyncio.Task[None] | None = None
        self._readers: asyncio.TaskGroup | None = None
        self._read_done: asyncio.Event | None = None
        self._reader_task: asyncio.Task[Any] | None = None
        self._own_tasks: set[asyncio.Task[Any]] = set()  # the tasks of the runner's group
        self._connected = asyncio.Event()
        self._closed = False
        # Why the last attempt to start a daemon failed; requests fail at once meanwhile and
        # ask for another attempt (docs/editors.md: "every later request tries again").
        self.failure: str | None = None
        self._try_start = asyncio.Event()
        # Last seq seen per subscribed conversation: what a resubscription asks for.
        self.last_seq: dict[str, int] = {}
        self.server_info: JsonObject = {}

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
        restart: bool = False,
        backoff: Backoff = BACKOFF,
        remote: Remote | None = None,
    ) -> Client:
        """Connect to the daemon at `address` with `token`, or to the one running on the data
        directory (starting one first when `start`). With `reconnect` the client connects again
        after the connection drops; with `restart` too it starts a new daemon when none comes
        back: at once when nobody is starting one, else after `RESTART_GRACE_S`. With `remote`
        (by default `OPENVAALA_REMOTE`, unless an address or data directory is given) the daemon
        is the one on that machine, through ssh."""
        locate: Callable[[], Address | None] | None = None
        start_one: Callable[[], Address] | None = None
        starting: Callable[[], bool] | None = None
        if address is None and data_dir is None and remote is None:
            remote = configured()
        dialer = Dialer(remote) if remote is not None else None
        if dialer is not None:
            # The bridge names the daemon and adds its token over there (docs/remote.md).
            address, token = "localhost", ""
        elif address is None or token is None:
            data = root_of(data_dir)
            # Reading the lock and the token file takes microseconds: a thread (the default
            # executor's first) is worth starting only to wait for a daemon to start.
            found = None if start and starting_here() else find_server(data)
            if found is None and start:
                found = await asyncio.to_thread(ensure_server, data)
            if found is None:
                raise RuntimeError(
                    "no OpenVaala server is running (start one: openvaala serve start)"
                )
            address, token = found
            locate = lambda: find_server(data)  # noqa: E731
            if restart:
                start_one = lambda: ensure_server(data)  # noqa: E731
                starting = lambda: server_starting(data)  # noqa: E731
        client = cls(
            address,
            token,
            client_name=client_name,
            reconnect=reconnect,
            locate=locate,
            start=start_one,
            starting=starting,
            backoff=backoff,
            dialer=dialer,
        )
        ws = await client._open()
        client._ws = ws  # requests may go out at once: the runner's reader answers them
        client._connected.set()
        entered = asyncio.get_running_loop().create_future()
        client._runner = asyncio.create_task(client._run(ws, entered))
        await entered
        return client

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def _open(self) -> ClientConnection:
        sock = await self.dialer.open() if self.dialer is not None else None
        try:
            ws = await self._handshake(sock)
        except BaseException:
            if sock is not None:
                sock.close()
            raise
        try:
            await self._initialize(ws)
        except BaseException:
            # A server that accepts the socket and then fails `initialize` (or goes away) must
            # not leave it open: reconnect attempts would leak one socket each.
            await ws.close()
            raise
        return ws

    async def _handshake(self, sock: socket.socket | None) -> ClientConnection:
        return await connect(
            f"ws://{self.address}/ws",
            additional_headers={"Authorization": f"Bearer {self.token}"},
            max_size=None,
            open_timeout=10,
            # The daemon is on loopback: never through a proxy of the user's environment
            # (websockets follows http_proxy / all_proxy by default), and no compression —
            # deflating megabytes of snapshot costs CPU on both ends and saves nothing here.
            proxy=None,
            compression=None,
            sock=sock,
        )

    def _use(self, ws: ClientConnection) -> None:
        """Read `ws` from now on (responses included: requests may go out on it), in the
        runner's task group."""
        assert self._readers is not None
        self._ws = ws
        done = self._read_done = asyncio.Event()

        async def read() -> None:
            self._reader_task = asyncio.current_task()
            try:
                await self._read(ws)
            except Exception:  # a connection that failed oddly: connect again, as when it drops
                log.exception("reading from the OpenVaala daemon failed")
            finally:
                done.set()

        self._start_soon(read, "openvaala-client-reader")

    def start_soon(self, run: Callable[[], Awaitable[object]], name: str) -> None:
        """Run `run()` as a task of this client's (a `Link`'s notification pump): it ends when
        the client is closed. Its exception is logged, never the client's."""
        if self._readers is None or self._closed:
            raise ConnectionLost(f"the client is closed: cannot start {name}")

        async def guarded() -> None:
            try:
                await run()
            except Exception:
                log.exception("%s failed", name)

        self._start_soon(guarded, name)

    def _start_soon(self, run: Callable[[], Awaitable[None]], name: str) -> None:
        assert self._readers is not None

        async def tracked() -> None:
            task = asyncio.current_task()
            assert task is not None
            self._own_tasks.add(task)
            try:
                await run()
            finally:
                self._own_tasks.discard(task)

        self._readers.create_task(tracked(), name=name)

    async def _initialize(self, ws: ClientConnection) -> None:
        # initialize goes out before the reader runs, so read its answer directly.
        init_id = next(self._ids)
        params: JsonObject = {
            "clientInfo": {"name": self.client_name, "version": __version__},
            "protocolVersion": 1,
        }
        await ws.send(jsonrpc.request(init_id, methods.INITIALIZE, params).decode())
        while True:
            message = jsonrpc.parse(await ws.recv())
            if isinstance(message, jsonrpc.Response) and message.id == init_id:
                if message.error is not None:
                    raise RpcError(message.error)
                self.server_info = message.result if isinstance(message.result, dict) else {}
                return

    async def close(self) -> None:
        self._closed = True
        task = self._runner
        current = asyncio.current_task()
        # Called from a task of the runner's group (a link's pump), waiting for the runner would
        # be waiting for itself, and cancelling it first would cut this short: close, then cancel.
        inside = current in self._own_tasks
        if task is not None and current is not task and not inside:
            task.cancel()  # and with it the reader and the rest of its group
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._ws is not None:
            await self._ws.close()
        self._fail_pending()
        self._notes.put_nowait({"method": CLOSED, "params": {}})
        if task is not None and inside:
            task.cancel()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests ------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        timeout: float = 60,
        on_result: Callable[[JsonValue], None] | None = None,
    ) -> Any:
        """Send a request and await its result. `on_result` runs in the reader, before any
        later frame is handled (a subscription must count seqs from its very first event).
        While reconnecting, waits (up to `timeout`) for the connection to be back; while no
        daemon could be started, fails at once with `ConnectionLost` saying why, and asks the
        client to try starting one again."""
        if self.failure is not None and not self._connected.is_set():
            self._try_start.set()
            raise ConnectionLost(f"{method}: {self.failure}")
        await asyncio.wait_for(self._connected.wait(), timeout)
        return await self._call(method, params, timeout, on_result)

    async def _call(
        self,
        method: str,
        params: Mapping[str, object] | None,
        timeout: float,
        on_result: Callable[[JsonValue], None] | None = None,
    ) -> Any:
        """Send on the current connection, connected or not yet announced as such."""
        ws = self._ws
        if ws is None:
            raise ConnectionLost(f"not connected ({method})")
        msg_id = next(self._ids)
        future: asyncio.Future[JsonValue] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        if on_result is not None:
            self._hooks[msg_id] = on_result
        try:
            await ws.send(jsonrpc.request(msg_id, method, dict(params or {})).decode())
            return await asyncio.wait_for(future, timeout)
        except ConnectionClosed:
            raise ConnectionLost(f"connection lost during {method}") from None
        finally:
            self._pending.pop(msg_id, None)
            self._hooks.pop(msg_id, None)

    async def subscribe(
        self, conversation_id: str, after_seq: int | None = None
    ) -> payloads.SubscribeResult:
        params: payloads.SubscribeParams = {"conversationId": conversation_id}
        if after_seq is not None:
            params["afterSeq"] = after_seq

        def track(result: JsonValue) -> None:
            if not isinstance(result, dict) or not isinstance(seq := result.get("seq"), int):
                return
            if result.get("snapshot") is not None or after_seq is None:
                self.last_seq[conversation_id] = seq
            else:
                self.last_seq[conversation_id] = after_seq  # the replay follows

        result = await self._request(methods.CONVERSATION_SUBSCRIBE, params, on_result=track)
        return cast("payloads.SubscribeResult", result)

    async def unsubscribe(self, conversation_id: str) -> None:
        self.last_seq.pop(conversation_id, None)
        await self.request(methods.CONVERSATION_UNSUBSCRIBE, {"conversationId": conversation_id})

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        mode: Mode = "queue",
        session_id: str | None = None,
        images: Sequence[str | os.PathLike[str] | bytes] = (),
    ) -> payloads.SendResult:
        """`input/send`; `images` are image files (paths or `file://` URIs) or raw bytes, sent
        with the message (docs/protocol.md, input/send). A file that is not a PNG, JPEG, GIF or
        WebP image, or is over 5 MiB, raises `client_images.ImageError` before anything is sent."""
        params: payloads.SendParams = {
            "conversationId": conversation_id,
            "text": text,
            "mode": mode,
        }
        if session_id is not None:
            params["sessionId"] = session_id
        if images:
            entries: list[JsonObject] = [
                client_images.from_bytes(i)
                if isinstance(i, bytes)
                else client_images.from_uri(i)
                if isinstance(i, str) and i.startswith("file://")
                else client_images.from_path(i)
                for i in images
            ]
            params["images"] = entries
        return await self.request(methods.INPUT_SEND, params)

    async def attachment(self, conversation_id: str, sha256: str) -> bytes:
        """The bytes of one of the conversation's images (`GET /attachments/…`, with the token).
        Raises `httpx.HTTPError` when the daemon does not serve it."""
        import httpx  # only clients that read images need it

        if self.dialer is not None:  # over ssh: one request through a bridge (docs/remote.md)
            from openvaala_server.client.http_exchange import exchange

            path = f"/attachments/{conversation_id}/{sha256}"
            answer = await exchange(await self.dialer.open(), "GET", path, host="x", token=None)
            if answer.status != 200:
                raise httpx.HTTPError(f"HTTP {answer.status} for {path}")
            return answer.body
        url = f"http://{self.address}/attachments/{conversation_id}/{sha256}"
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.get(url, headers={"Authorization": f"Bearer {self.token}"})
            response.raise_for_status()
            return response.content

    async def respond_approval(
        self,
        conversation_id: str,
        approval_id: str,
        decision: Answer,
        message: str | None = None,
    ) -> payloads.RespondResult:
        """Answer an `approval/requested`: "allow", "allow_conversation" or "deny" (with an
        optional message the model receives). Raises `RpcError` with kind `already_resolved`
        when another client answered first."""
        params: payloads.RespondParams = {
            "conversationId": conversation_id,
            "approvalId": approval_id,
            "decision": decision,
        }
        if message is not None:
            params["message"] = message
        return await self.request(methods.APPROVAL_RESPOND, params)

    async def set_agent(self, conversation_id: str, agent: str) -> None:
        """Choose the conversation's agent, e.g. when its own is not configured here
        (`agentAvailable` false). Raises `RpcError` `agent_missing` for an unknown name and
        `turn_running` while a turn runs."""
        await self.request(
            methods.CONVERSATION_SET_AGENT, {"conversationId": conversation_id, "agent": agent}
        )

    async def set_cwd(self, conversation_id: str, cwd: str) -> None:
        """Point the conversation at another working directory (absolute, existing), e.g. when
        its own was moved (`cwdExists` false)."""
        await self.request(
            methods.CONVERSATION_SET_CWD, {"conversationId": conversation_id, "cwd": cwd}
        )

    # -- notifications -------------------------------------------------------------------

    async def notifications(self) -> AsyncIterator[Note]:
        while True:
            note = await self._notes.get()
            if note["method"] == CLOSED:
                return
            yield note

    async def next_notification(self, timeout: float = 10) -> Note:
        return await asyncio.wait_for(self._notes.get(), timeout)

    def _note(self, note: Note) -> None:
        self._notes.put_nowait(note)

    def _on_notification(self, method: str, params: JsonObject) -> None:
        cid = params.get("conversationId")
        seq = params.get("seq")
        if isinstance(cid, str) and isinstance(seq, int):
            if cid not in self.last_seq:
                return  # not (or no longer) subscribed here
            if seq <= self.last_seq[cid]:
                return  # already seen (a replay overlapping what arrived live)
            self.last_seq[cid] = seq
        # The daemon's frame, as its method declares it (the daemon builds it from the same
        # TypedDicts: protocol/calls.py `Publish`).
        self._note(cast("Notification", {"method": method, "params": params}))

    # -- the connection ------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> None:
        """Hand every frame of `ws` on until it closes; then nothing sent on it is answered."""
        try:
            with contextlib.suppress(ConnectionClosed):
                async for frame in ws:
                    self._handle(jsonrpc.parse(frame))
        finally:
            self._fail_pending()

    def _handle(self, message: jsonrpc.Incoming) -> None:
        if isinstance(message, jsonrpc.Notification):
            self._on_notification(message.method, message.params)
        elif isinstance(message, jsonrpc.Response) and isinstance(message.id, int):
            future = self._pending.get(message.id)
            if future is None or future.done():
                return
            if message.error is not None:
                future.set_exception(RpcError(message.error))
                return
            hook = self._hooks.pop(message.id, None)
            if hook is not None:
                hook(message.result)
            future.set_result(message.result)
        elif isinstance(message, jsonrpc.Invalid):
            log.warning("an unusable frame from the server: %s", message.error)

    async def _run(self, ws: ClientConnection, entered: asyncio.Future[None]) -> None:
        """While the client is open: read the connection, wait for it to drop, then connect
        again. Every reader is a task of this one's group: nothing outlives the runner."""
        async with asyncio.TaskGroup() as readers:
            self._readers = readers
            try:
                self._use(ws)
                entered.set_result(None)
                await self._reconnecting()
            finally:
                # Ended by itself (closed, or told not to reconnect), the runner lets the rest of
                # its group read the notifications to their end; `close()` cancels it all.
                self._readers = None
                if not entered.done():
                    entered.cancel()

    async def _reconnecting(self) -> None:
        while True:
            assert self._read_done is not None
            await self._read_done.wait()
            self._connected.clear()
            self._fail_pending()
            if self._closed or not self.reconnect:
                self._note({"method": CLOSED, "params": {}})
                return
            self._note({"method": CONNECTION, "params": {"state": "reconnecting"}})
            if not await self._reconnect():
                return

    async def _reconnect(self) -> bool:
        """Connect again with the one backoff; True once connected and resubscribed."""
        loop = asyncio.get_running_loop()
        lost_at = loop.time()
        daemon = self._daemon_identity()
        delays = self._backoff.delays()
        said = ""
        while not self._closed:
            ws: ClientConnection | None = None
            try:
                await self._find_again(loop.time() - lost_at)
                ws = await self._open()
                self._use(ws)
                await self._resubscribe()
            except StartFailed as exc:
                if self.failure != str(exc):
                    log.warning("no OpenVaala daemon could be started: %s", exc)
                    disconnected: ConnectionParams = {"state": "disconnected", "message": str(exc)}
                    self._note({"method": CONNECTION, "params": disconnected})
                self.failure = str(exc)
            except _RETRYABLE as exc:
                said = self._say_why(exc, said)
            else:
                self.failure = None
                self._connected.set()
                state: ConnectionParams = {"state": "connected"}
                if self._daemon_identity() != daemon:
                    state["restarted"] = True
                self._note({"method": CONNECTION, "params": state})
                return True
            if ws is not None:  # a connection that failed to resubscribe is not used
                await ws.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._try_start.wait(), next(delays))
        return False

    def _say_why(self, exc: BaseException, said: str) -> str:
        """Over `--remote`, why dialing again fails, in ssh's or the bridge's words, once each
        (a `reconnecting` note with `message`): an ssh that does not come back says why
        rather than reconnecting in silence (docs/remote.md, "When ssh drops")."""
        if not isinstance(exc, RemoteUnavailable) or str(exc) == said:
            return said
        why: ConnectionParams = {"state": "reconnecting", "message": str(exc)}
        self._note({"method": CONNECTION, "params": why})
        return str(exc)

    def _daemon_identity(self) -> tuple[str, int]:
        """What is new with every daemon: its token, or over ssh (where the token stays on the
        remote machine) its pid there, from the bridge's banner."""
        banner = self.dialer.banner if self.dialer is not None else None
        return self.token, banner.pid if banner is not None else 0

    async def _find_again(self, lost_for: float) -> None:
        """Find the daemon again (it may have restarted on a new port with a new token), or
        start one when allowed: at once when nobody is starting one (a crash freed the lock),
        else when the one starting did not come up in time."""
        if self._locate is None:
            return
        found = await asyncio.to_thread(self._locate)
        if found is None and self._start is not None:
            asked = self._try_start.is_set()
            waiting = self._starting is None or await asyncio.to_thread(self._starting)
            in_time = not waiting or lost_for >= RESTART_GRACE_S
            if in_time and (self.failure is None or asked):
                self._try_start.clear()
                try:
                    found = await asyncio.to_thread(self._start)
                except (RuntimeError, OSError) as exc:
                    raise StartFailed(str(exc)) from None
        if found:
            self.address, self.token = found

    async def _resubscribe(self) -> None:
        """Subscribe again to every conversation, from the last seq seen, before the
        connection is announced: no request goes out into a conversation whose events this
        client would not hear."""
        results = await asyncio.gather(
            *(self._resubscribe_one(cid, seq) for cid, seq in list(self.last_seq.items())),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, ConnectionLost | TimeoutError):
                raise result

    async def _resubscribe_one(self, cid: str, seq: int) -> None:
        def track(result: JsonValue) -> None:
            if not isinstance(result, dict) or not isinstance(seq := result.get("seq"), int):
                return
            if result.get("snapshot") is not None:
                self.last_seq[cid] = seq
                snapshot = cast("payloads.Snapshot", result["snapshot"])
                params: SnapshotParams = {"conversationId": cid, "seq": seq, "snapshot": snapshot}
                self._note({"method": SNAPSHOT, "params": params})

        try:
            await self._call(
                methods.CONVERSATION_SUBSCRIBE,
                {"conversationId": cid, "afterSeq": seq},
                30,
                on_result=track,
            )
        except RpcError as exc:  # e.g. deleted meanwhile: nothing more will come of it
            log.warning("could not resubscribe to %s: %s", cid, exc)
            self.last_seq.pop(cid, None)

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the connection to the server was lost"))
        self._pending.clear()
