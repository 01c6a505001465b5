"""Running the daemon: hold the data directory's lock, serve on loopback, then build the runtime.

Start: lock (a second server on the same data directory exits naming the first), token (new at
every start, mode 0600), the socket and its address in the lock, and uvicorn serving at once:
`/healthz` answers from then on, with `"ready": false` (api/gate.py). The runtime is built right
after, while the daemon already serves: its modules imported in a worker thread, then the store,
the conversation manager, the recovery of turns a crash cut, and the app; requests made before
it is ready wait for it (docs/design.md, "Serving before the runtime is built"). A build that
fails (a store that cannot be opened) stops the daemon and `serve` raises its error, as before.
Stop (SIGTERM/SIGINT): running turns are interrupted and written, the store is flushed and closed,
the token removed and the lock released — in that order, within `STOP_BOUND_S` (docs/design.md,
"Structured concurrency"). Everything the daemon runs in the background belongs to one of two
supervisors entered here: the server's (accept loop, the runtime's build, signal-started work,
config watcher) and the runtime's (turns, MCP servers), so nothing outlives `serve`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from openvaala_server import gc_tuning
from openvaala_server.api import uvicorn_parts as uvicorn
from openvaala_server.api.gate import Gate
from openvaala_server.api.listener import Guard, GuardedH11Protocol, Limits, accept_forever
from openvaala_server.api.security import Credentials, SecurityMiddleware
from openvaala_server.api.web_login import WebLogins
from openvaala_server.config import Config
from openvaala_server.store.lock import RuntimeLock
from openvaala_server.store.paths import DataDir
from openvaala_server.structured import Activity, Supervisor

if TYPE_CHECKING:
    from starlette.websockets import WebSocket

    from openvaala_server.api.handlers import Dispatcher
    from openvaala_server.runtime.manager import ConversationManager
    from openvaala_server.runtime.reload import ConfigWatcher

log = logging.getLogger("openvaala.server")

# Running turns get this long to write their end when the daemon stops (manager.shutdown).
TURN_STOP_S: Final = 10.0
# uvicorn's wait for open connections to close once the turns are stopped.
CONNECTIONS_STOP_S: Final = 3
# The whole stop, signal to exit: turns, connections, MCP servers and providers, the store's flush.
# Past it whatever is left is cancelled (an `fsync` under way still completes: it is not awaitable).
STOP_BOUND_S: Final = TURN_STOP_S + CONNECTIONS_STOP_S + 5.0


class PortInUse(Exception):
    pass


def write_token(path: Path) -> str:
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, token.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def bind_loopback(port: int) -> socket.socket:
    # Named as TCP, so asyncio sets TCP_NODELAY on every accepted connection (it checks the
    # protocol number, which an accepted socket inherits). Without it, a reply written right after
    # an event on the same connection waited for the client's delayed ACK: ~40 ms per request.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Linux also copies the listener's TCP_NODELAY to accepted sockets: set it for both paths.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise PortInUse(
            f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); set [server] port in the "
            "config, or pass --port 0 to pick a free port"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class _OneLine(logging.Filter):
    """uvicorn logs a client's invalid UTF-8 frame with a traceback: any client could fill the
    log with them. One line each says all there is (the connection is closed with 1007)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and str(record.msg).startswith("Invalid UTF-8"):
            record.msg = "closed a websocket (1007): a text frame was not valid UTF-8"
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class _DaemonServer(uvicorn.Server):
    """uvicorn, but a stop signal first interrupts and saves running turns."""

    def __init__(
        self, config: uvicorn.Config, gate: Gate, limits: Limits, tasks: Supervisor
    ) -> None:
        super().__init__(config)
        self.gate = gate
        self.runtime: ConversationManager | None = None  # once built (`_Build`)
        self.tasks = tasks
        self._stopping = False
        self._guard = Guard(limits)
        self._accepting: Activity | None = None
        self._stop_requested: anyio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn would accept through asyncio's loop, which floods the log when out of file
        # descriptors and has no header deadline: the daemon accepts itself (listener.py).
        await super().startup(sockets=[])
        config, state = self.config, self.server_state

        def protocol() -> asyncio.Protocol:
            return GuardedH11Protocol(
                config=config, server_state=state, app_state=self.lifespan.state, guard=self._guard
            )

        if not sockets:
            raise ValueError("the daemon serves the socket it bound (bind_loopback)")
        accept = partial(self._accept, sockets[0], protocol)
        self._accepting = self.tasks.spawn(accept, "accept-loop")
        self._stop_requested = anyio.Event()
        self.tasks.spawn(self._stop_when_requested, "graceful-stop")

    async def _accept(self, sock: socket.socket, protocol: Callable[[], asyncio.Protocol]) -> None:
        try:
            await accept_forever(sock, protocol, self._guard)
        except Exception:
            log.exception("the accept loop failed: stopping")
            self.should_exit = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            await self._accepting.wait()
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._stopping:
            super().handle_exit(sig, frame)
            return
        self._stopping = True
        # A signal handler runs between two bytecodes of whatever the loop was doing: hand the
        # stop to the loop, where an activity of the server waits for it.
        if self._stop_requested is None:  # before startup: nothing runs yet
            super().handle_exit(sig, frame)
            return
        asyncio.get_event_loop().call_soon_threadsafe(self._stop_requested.set)

    def stop(self) -> None:
        """Stop serving: what waits for the runtime is turned away, uvicorn ends its loop."""
        self.gate.close()
        self.should_exit = True

    async def _stop_when_requested(self) -> None:
        assert self._stop_requested is not None
        await self._stop_requested.wait()
        try:
            # A runtime still being built is stopped by its build's own exit (`_Build.run`).
            if self.runtime is not None:
                with anyio.move_on_after(TURN_STOP_S + 2.0):
                    await self.runtime.shutdown(timeout=TURN_STOP_S)
        finally:
            self.stop()


def _request(requests: MemoryObjectSendStream[None]) -> None:
    with contextlib.suppress(anyio.WouldBlock):
        requests.send_nowait(None)


def _codex_app_server(
    dispatcher: Dispatcher, queue_limit: Callable[[], int]
) -> Callable[[WebSocket], Awaitable[None]]:
    """Codex's app-server endpoint (docs/codex.md), built at its first connection: most daemons
    never see a Codex client, and its modules are a good part of a start's imports
    (docs/design.md, "Daemon start-up (issue 40)")."""
    built: list[Callable[[WebSocket], Awaitable[None]]] = []

    async def endpoint(websocket: WebSocket) -> None:
        if not built:
            from openvaala_server.codex.endpoint import app_server_endpoint

            built.append(app_server_endpoint(dispatcher, queue_limit))
        await built[0](websocket)

    return endpoint


async def _reload_on_request(
    watcher: ConfigWatcher, requests: MemoryObjectReceiveStream[None]
) -> None:
    with requests:
        async for _ in requests:
            await watcher.check(force=True)


def _import_runtime() -> None:
    """What the build needs and the first answers do not: the runtime (most of a start's
    imports), the store, the app and the websocket protocol. Run in a worker thread, so the
    loop answers `/healthz` meanwhile."""
    import openvaala_server.api.app
    import openvaala_server.api.websocket
    import openvaala_server.runtime.manager
    import openvaala_server.runtime.reload
    import openvaala_server.store.store  # noqa: F401


def _websocket_protocol(**kwargs: Any) -> asyncio.Protocol:
    """uvicorn's websocket protocol, made per upgrade: its module (and the websockets library)
    is imported by the build's worker thread, not before the first `/healthz`."""
    from openvaala_server.api.websocket import ClosingWebSocketProtocol

    return ClosingWebSocketProtocol(**kwargs)


@dataclass
class _Build:
    """The runtime's build and life, an activity of the server's supervisor: started once the
    daemon serves, it lives until the server's supervisor ends it at the stop."""

    data_dir: DataDir
    config: Config
    credentials: Credentials
    server: _DaemonServer
    tasks: Supervisor
    reloads: MemoryObjectReceiveStream[None]
    error: BaseException | None = None

    async def run(self) -> None:
        try:
            await self._build_and_serve()
        except Exception as exc:  # `serve` raises it once uvicorn has stopped
            self.error = exc
            self.server.stop()

    async def _build_and_serve(self) -> None:
        await anyio.to_thread.run_sync(_import_runtime)
        from openvaala_server.runtime.manager import ConversationManager
        from openvaala_server.runtime.reload import ConfigWatcher, windows_resolved
        from openvaala_server.store.store import Store

        # Shielded: a stop during the open still gets a store to close (below).
        with anyio.CancelScope(shield=True):
            store = await Store.open(self.data_dir)
        try:
            # Local servers' windows are asked once the lock is ours (models/probe.py).
            config = await windows_resolved(self.config)
            runtime = ConversationManager(config, store)
            watcher = runtime.config_watch = ConfigWatcher(runtime)
            async with runtime.tasks:
                try:
                    await self._serve(runtime, watcher)
                finally:
                    # Cancelled from the top: this bounds the turns' last writes (a second
                    # signal during a stop is uvicorn's forced exit).
                    with anyio.CancelScope(shield=True), anyio.move_on_after(TURN_STOP_S + 2.0):
                        await runtime.shutdown(timeout=TURN_STOP_S)
        finally:
            with anyio.CancelScope(shield=True):  # what was acknowledged is flushed, always
                await store.close()

    async def _serve(self, runtime: ConversationManager, watcher: ConfigWatcher) -> None:
        from openvaala_server.api.app import build_app

        with anyio.CancelScope(shield=True):  # a stop now waits for the recovery, as it did
            await runtime.recover_cut_turns()
        # A stop during the shielded steps (the store's open, the recovery) is acted on here,
        # before the daemon says it is ready: its supervisor has ended and takes no more
        # activities (docs/design.md, "A stop during the shielded steps of the build").
        await anyio.lowlevel.checkpoint()
        self.server.runtime = runtime
        self.server.gate.open(build_app(runtime, self.credentials, _codex_app_server).app)
        log.info("OpenVaala ready")
        self.tasks.spawn(watcher.watch, "config-watch")
        self.tasks.spawn(partial(_reload_on_request, watcher, self.reloads), "config-reload")
        gc_tuning.settle()  # start-up's objects are never walked by the collector again
        await anyio.sleep_forever()


async def serve(data_dir: DataDir, config: Config, port: int) -> None:
    # A read-only or foreign data directory is a message naming it, not a traceback.
    try:
        data_dir.ensure()
        lock = RuntimeLock(data_dir.lock_path)
        lock.acquire()  # raises LockHeld naming the running server
    except OSError as exc:
        raise data_dir.unusable(exc) from None
    try:
        sock = bind_loopback(port)
        try:
            await _serve(data_dir, config, lock, sock)
        finally:
            sock.close()
            data_dir.token_path.unlink(missing_ok=True)
    finally:
        lock.release()


async def _serve(data_dir: DataDir, config: Config, lock: RuntimeLock, sock: socket.socket) -> None:
    actual_port = sock.getsockname()[1]
    try:
        token = write_token(data_dir.token_path)
        idle = config.server.web_session_idle_hours * 3600.0
        logins = WebLogins.open(data_dir.root, idle_ttl=idle)
    except OSError as exc:
        raise data_dir.unusable(exc) from None
    credentials = Credentials(token, actual_port, logins)
    gate = Gate()
    uv_config = uvicorn.Config(
        SecurityMiddleware(gate, credentials),
        # A factory, not the class: uvicorn only calls it (docs/design.md, "Serving before the
        # runtime is built").
        ws=cast(Any, _websocket_protocol),
        ws_max_size=config.server.max_frame_bytes,
        # Small frames on loopback gain nothing from compression, and deflating each
        # frame once per client cost ~10% of the daemon's CPU when fanning out.
        ws_per_message_deflate=False,
        ws_ping_interval=20,
        ws_ping_timeout=20,
        proxy_headers=False,
        server_header=False,
        lifespan="off",
        log_level="warning",
        timeout_graceful_shutdown=CONNECTIONS_STOP_S,
    )
    logging.getLogger("uvicorn.error").addFilter(_OneLine())
    # SIGHUP reloads at once (once the runtime is built); several before the reload ran make one
    # more. Caught from here on: the lock names this daemon now, and SIGHUP would end it.
    requests_in, requests = anyio.create_memory_object_stream[None](1)
    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, _request, requests_in)
    async with Supervisor("server") as tasks:
        server = _DaemonServer(uv_config, gate, Limits.from_file_limit(), tasks)
        build = _Build(data_dir, config, credentials, server, tasks, requests)
        lock.set_address(f"127.0.0.1:{actual_port}")
        log.info("OpenVaala serving on http://127.0.0.1:%d (pid %d)", actual_port, os.getpid())
        tasks.spawn(build.run, "runtime-build")
        await server.serve(sockets=[sock])
    if build.error is not None:
        raise build.error
