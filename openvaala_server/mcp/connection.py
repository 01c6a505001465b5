"""One configured MCP server: its process or HTTP session, its tools, and its status.

The official SDK's transports and `ClientSession` are async context managers that must be entered
and exited in one task, so each running server lives in its own long-lived activity (`_serve`) of
the daemon's supervisor (structured.py), which holds the session open until asked to stop, until
the connection ends or until the daemon stops. Calls are sent from the
callers' own tasks over that session: the SDK routes each answer to the request that awaits it,
so calls from several conversations run side by side on one server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal, TypeVar

import anyio
from mcp.client.context import ClientRequestContext
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    CallToolResult,
    ListRootsResult,
    Prompt,
    PromptListChangedNotification,
    Resource,
    ResourceListChangedNotification,
    Root,
    ServerCapabilities,
    ToolListChangedNotification,
)
from mcp.types import Tool as McpToolInfo
from pydantic import FileUrl

from openvaala_server.config import McpServerConfig
from openvaala_server.mcp import catalog
from openvaala_server.mcp.ended import Source, Watched
from openvaala_server.protocol.payloads import McpServerState
from openvaala_server.structured import CANCEL_GRACE_S, Activity, Supervisor

log = logging.getLogger(__name__)
T = TypeVar("T")

Status = Literal["stopped", "starting", "ready", "failed"]

# The variables a stdio server inherits from the daemon (besides its configured `env`): enough to
# find programs and read text, so API keys and OPENVAALA_* never reach it. (The SDK adds its own
# harmless defaults under these: LOGNAME, SHELL, TERM, USER.)
BASE_ENV = ("PATH", "HOME", "LANG")
# How long a server whose start failed is left alone before the next need tries it again, so
# every turn does not wait out `startup_timeout_s` once more.
RETRY_START_AFTER_S = 30.0
# The last characters of a failed server's stderr quoted in its status.
STDERR_TAIL = 500
# How long `stop` waits for a server to end its session (the SDK terminates, then kills, the
# process) before cancelling its activity.
STOP_S: Final = 10.0
MIB: Final = 1024 * 1024
# A server listed again after it said its lists changed: at once the first time; while changes
# keep coming, each listing waits twice as long as the one before (from RELIST_MIN_S up to
# RELIST_MAX_S), so a server that answers every listing with another change costs one listing
# per RELIST_MAX_S, not a loop. Quiet for RELIST_QUIET_S, it is listed at once again.
RELIST_MIN_S: Final = 0.5
RELIST_MAX_S: Final = 30.0
RELIST_QUIET_S: Final = 60.0
# How the SDK (2.x) resolves a call whose server-sent event it could not read (over its size
# limit, malformed): that request alone fails, the session goes on.
_SSE_FAILED = "SSE stream failed"


# Told of each progress notification of a call: (progress, total or None, message or None).
OnProgress = Callable[[float, float | None, str | None], Awaitable[None]]
# Told of each change of a server's state as clients see it (`mcp/statusChanged`).
OnChanged = Callable[["McpConnection", McpServerState], None]
# The notifications after which a server is listed again (docs/protocol.md, mcp/statusChanged).
_LIST_CHANGED = (
    ToolListChangedNotification,
    ResourceListChangedNotification,
    PromptListChangedNotification,
)


class McpCallError(Exception):
    """A call that did not reach a result: the message is what the model and user read."""


def offered(tool: McpToolInfo) -> bool:
    """Whether a listed tool can be called plainly: one that requires task augmentation (a
    call answered with a task to poll) cannot, so it is not offered."""
    execution = tool.execution
    return execution is None or execution.task_support != "required"


@dataclass(frozen=True)
class ServerStatus:
    name: str
    status: Status
    tools: tuple[str, ...]
    error: str | None = None
    # True when `tools` is the server's last listing (it is not ready now), not a live one.
    last_known: bool = False
    resources: tuple[Resource, ...] = ()
    prompts: tuple[Prompt, ...] = ()

    def to_dict(self) -> McpServerState:
        out: McpServerState = {"name": self.name, "status": self.status, "tools": list(self.tools)}
        if self.error is not None:
            out["error"] = self.error
        if self.last_known:
            out["toolsLastKnown"] = True
        if self.resources:
            out["resources"] = [{"uri": str(r.uri), "name": r.name} for r in self.resources]
        if self.prompts:
            out["prompts"] = [
                {
                    "name": p.name,
                    "description": p.description or "",
                    "arguments": [a.name for a in p.arguments or ()],
                }
                for p in self.prompts
            ]
        return out


def server_env(config: McpServerConfig) -> dict[str, str]:
    """The whole environment of a stdio server: the base variables and its configured `env`."""
    base = {key: os.environ[key] for key in BASE_ENV if key in os.environ}
    return {**base, **config.env}


class McpConnection:
    """A configured server, started on first need and restarted after it ended."""

    def __init__(
        self,
        config: McpServerConfig,
        tasks: Supervisor,
        *,
        known: tuple[McpToolInfo, ...] = (),
        on_listed: Callable[[str, tuple[McpToolInfo, ...]], None] | None = None,
        on_changed: OnChanged | None = None,
    ) -> None:
        self.config = config
        self.tasks = tasks
        self.status: Status = "stopped"
        # Told when what `snapshot` shows changed; `_shown` is what it was told last.
        self._on_changed = on_changed
        self._shown: McpServerState | None = None
        # What the server said it offers at its start, and whether a listing is to be read again
        # (a list_changed arrived while one was being read).
        self._offers: ServerCapabilities | None = None
        self._relist = False
        self._relisting = False
        # When it was last listed again, and how long the next listing waits after that.
        self._relisted_at = -RELIST_QUIET_S
        self._relist_delay = 0.0
        self.error: str | None = None
        # The server's tools that pass enabled_tools / disabled_tools, from its last listing
        # (at first the one kept from an earlier run, mcp/listings.py).
        self.tools: tuple[McpToolInfo, ...] = tuple(
            t for t in known if config.offers(t.name) and offered(t)
        )
        self._on_listed = on_listed
        # Counts finished start attempts: a call that waited for one uses its outcome.
        self._attempts = 0
        # The working directories of the conversations that called it: its roots (a set, in
        # the order first seen), so a server shared by several conversations sees each one.
        self.roots: dict[str, None] = {}
        # Its resources and prompts, as listed at its start (servers without them: none).
        self.resources: tuple[Resource, ...] = ()
        self.prompts: tuple[Prompt, ...] = ()
        self._session: ClientSession | None = None
        # Set when the session's read stream ended: its server exited or closed the connection.
        self._gone = anyio.Event()
        self._activity: Activity | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._start_lock = anyio.Lock()
        self._failed_at = 0.0
        # Set when the connection ended after a good start: restart at the next need, at once.
        self._ended = False
        self._stderr: IO[str] | None = None
        self._stderr_text = ""
        # Calls under way, and set when there are none: a server retired by a config reload is
        # stopped once its calls have finished.
        self.calls = 0
        self._idle = anyio.Event()
        self._idle.set()

    async def until_idle(self) -> None:
        """Until no call is under way (each is bounded by its tool_timeout_s)."""
        while self.calls:
            await self._idle.wait()

    def _check_alive(self) -> None:
        """Notice a server that ended while idle, so its status says so and the next call restarts
        it instead of failing."""
        if self.status == "ready" and self._session is not None and self._gone.is_set():
            self._ended = True
            self._fail("the server exited; it restarts at the next call")

    @property
    def ready(self) -> bool:
        return self.status == "ready" and self._session is not None

    def snapshot(self) -> ServerStatus:
        self._check_alive()
        return self._status()

    def _status(self) -> ServerStatus:
        names = tuple(tool.name for tool in self.tools)
        last_known = bool(names) and not self.ready
        return ServerStatus(
            self.config.name,
            self.status,
            names,
            self.error,
            last_known,
            self.resources if self.ready else (),
            self.prompts if self.ready else (),
        )

    def announce(self) -> None:
        """Tell `on_changed` of the server's state when it differs from what it was told last
        (called after every transition: starting, ready, failed, stopped, listed again)."""
        state = self._status().to_dict()
        if state == self._shown:
            return
        self._shown = state
        if self._on_changed is not None:
            self._on_changed(self, state)

    def start_soon(self) -> None:
        """Start the server in the background unless it runs or is starting; a failed one is
        tried again once `RETRY_START_AFTER_S` have passed. Never waits."""
        self._check_alive()
        if self.ready or self._start_lock.locked():
            return
        waited = time.monotonic() - self._failed_at
        if self.status == "failed" and not self._ended and waited < RETRY_START_AFTER_S:
            return
        self.status = "starting"  # at once, so every client's MCP status says so
        self.announce()
        self.tasks.spawn(self.ensure_started, f"mcp-start:{self.config.name}")

    async def ensure_started(self, *, retry_failed: bool = True) -> bool:
        """Start the server unless it runs; True once it is ready, False when it failed.

        Never waits longer than `startup_timeout_s` for its own start; concurrent callers share
        one start (a caller that waited for another's start takes its outcome).
        """
        attempts = self._attempts
        async with self._start_lock:
            self._check_alive()
            if self.ready:
                return True
            if self.status == "failed" and not self._ended:
                if self._attempts != attempts:  # it just failed while this caller waited
                    return False
                waited = time.monotonic() - self._failed_at
                if not retry_failed and waited < RETRY_START_AFTER_S:
                    return False
            try:
                await self._start()
            finally:
                self._attempts += 1
            return self.status == "ready"

    async def _start(self) -> None:
        if self._activity is not None:
            # Calls still under way on the old session (another conversation's) end first: a
            # restart must not cut them. Each is bounded by tool_timeout_s.
            with anyio.move_on_after(self.config.tool_timeout_s):
                await self.until_idle()
        await self._discard_task()
        self.status, self.error, self._ended = "starting", None, False
        self.announce()
        self._ready, self._stop = anyio.Event(), anyio.Event()
        self._activity = self.tasks.spawn(self._serve, f"mcp:{self.config.name}")
        timeout = self.config.startup_timeout_s
        with anyio.move_on_after(timeout):
            await self._ready.wait()
        if not self._ready.is_set():
            self._fail(f"did not start within startup_timeout_s = {timeout:g} s")
            tail = self._stderr_tail()
            if tail:
                self.error = f"{self.error}; its stderr: {tail}"
                self.announce()
            self._stop.set()
            self._activity.cancel()

    async def _discard_task(self) -> None:
        """Let a previous run's activity finish its teardown (bounded) before a new one."""
        activity, self._activity = self._activity, None
        if activity is not None and not activity.finished:
            self._stop.set()
            activity.cancel()
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_S):
                await activity.wait()

    def _fail(self, reason: str) -> None:
        self.status, self.error, self._session = "failed", reason, None
        self._failed_at = time.monotonic()
        self._ready.set()
        self.announce()

    async def _serve(self) -> None:
        """The server's own task: open the session, list the tools, hold it until stopped."""
        self._relist = False  # this start lists everything; a change told from now on counts
        try:
            async with self._open() as session:
                self._offers = (await session.initialize()).capabilities
                await self._list(session)
                self._session, self.status = session, "ready"
                self._ready.set()
                self.announce()
                if self._relist:  # its lists changed after the start had read them
                    self._relist_soon()
                await self._hold(session)
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as exc:  # any failure of the server becomes its status
            reason = self._describe_failure(exc)
            log.info("MCP server %s: %s", self.config.name, reason)
            if self.status == "ready":
                self._ended = True
            if self.status != "failed":
                self._fail(reason)
        finally:
            self._session = None
            if self.status == "ready":  # stopped on request
                self.status = "stopped"
            self.announce()

    async def _hold(self, session: ClientSession) -> None:
        """Until stopped, or until the server ends on its own: one that exits while idle is
        failed at once, so every client is told (`mcp/statusChanged`), not at its next ask.
        Nothing wakes in between: an idle server costs the daemon no timer."""
        stop, gone = self._stop, self._gone
        async with anyio.create_task_group() as group:
            for event in (stop, gone):
                group.start_soon(_cancel_when, event, group.cancel_scope)
        if self._session is session:  # else failed meanwhile (a call saw it end)
            self._check_alive()

    async def _list(self, session: ClientSession) -> None:
        """Read the server's tools, and its resources and prompts if it offers them."""
        offers = self._offers
        listed = await catalog.list_tools(session)
        if offers is not None and offers.resources is not None:
            self.resources = tuple(await catalog.list_resources(session))
        if offers is not None and offers.prompts is not None:
            self.prompts = tuple(await catalog.list_prompts(session))
        self.tools = tuple(t for t in listed if self.config.offers(t.name) and offered(t))
        if self._on_listed is not None:
            self._on_listed(self.config.name, tuple(listed))

    async def _on_message(self, message: IncomingMessage) -> None:
        """A server's notification: a changed tool, resource or prompt list is read again, in
        the background (the SDK awaits this handler before it reads the next message)."""
        if isinstance(message, _LIST_CHANGED):
            self._relist_soon()

    def _relist_soon(self) -> None:
        self._relist = True
        # Else the listing under way reads it again when done, or the start under way does.
        if not self._relisting and self.ready:
            self._relisting = True
            self.tasks.spawn(self._relist_now, f"mcp-list:{self.config.name}")

    async def _relist_now(self) -> None:
        """List a ready server again after it said its lists changed: the next turn offers what
        it lists now, and every client is told (`mcp/statusChanged`)."""
        try:
            while self._relist:
                await self._relist_wait()  # every change told meanwhile is read by one listing
                session = self._session
                if session is None or not self.ready:
                    return  # kept: a start under way lists it again once ready (_serve)
                self._relist = False
                try:
                    with anyio.fail_after(self.config.tool_timeout_s):
                        await self._list(session)
                except Exception as exc:  # the listing it had stays; the next change tries again
                    log.info("MCP server %s: listing again failed: %r", self.config.name, exc)
                    return
                finally:
                    self._relisted_at = anyio.current_time()
                    self._relist_delay = min(
                        max(self._relist_delay * 2, RELIST_MIN_S), RELIST_MAX_S
                    )
                self.announce()
        finally:
            self._relisting = False

    async def _relist_wait(self) -> None:
        """Back off while the server keeps saying its lists changed (see RELIST_MIN_S)."""
        now = anyio.current_time()
        if now - self._relisted_at >= RELIST_QUIET_S:
            self._relist_delay = 0.0
        await anyio.sleep(max(0.0, self._relisted_at + self._relist_delay - now))

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[ClientSession]:
        cfg = self.config
        if cfg.command is not None:
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=server_env(cfg), cwd=cfg.cwd
            )
            # The server's stderr is kept to quote in its status when it fails.
            with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
                self._stderr, self._stderr_text = errlog, ""
                try:
                    async with (
                        stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(
                            self._watched(read),
                            write,
                            list_roots_callback=self._list_roots,
                            message_handler=self._on_message,
                        ) as session,
                    ):
                        yield session
                finally:
                    self._stderr_text = self._stderr_tail()
            return
        assert cfg.url is not None
        headers = dict(cfg.headers)
        if cfg.bearer_token_env is not None:
            token = os.environ.get(cfg.bearer_token_env)
            if not token:
                raise McpCallError(f"bearer_token_env: ${cfg.bearer_token_env} is not set")
            headers["Authorization"] = f"Bearer {token}"
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(
                cfg.url, http_client=http, max_sse_event_size=cfg.max_result_mb * MIB
            ) as (read, write),
            ClientSession(
                self._watched(read),
                write,
                list_roots_callback=self._list_roots,
                message_handler=self._on_message,
            ) as session,
        ):
            yield session

    def _watched(self, read: Source[T]) -> Watched[T]:
        """The transport's read stream, watched for its end (`_gone`)."""
        watched = Watched(read)
        self._gone = watched.ended
        return watched

    async def _list_roots(self, context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(
            roots=[Root(uri=FileUrl(Path(p).as_uri()), name=Path(p).name or p) for p in self.roots]
        )

    async def _add_root(self, session: ClientSession, cwd: Path) -> None:
        """Make `cwd` one of the server's roots, telling it when the list changed."""
        if str(cwd) in self.roots:
            return
        self.roots[str(cwd)] = None
        with contextlib.suppress(Exception):  # a server without roots support ignores it
            await session.send_roots_list_changed()

    def _describe_failure(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        if isinstance(exc, FileNotFoundError):
            text = f"cannot run {self.config.command!r}: no such program"
        elif self.config.url is not None and type(exc).__module__.startswith("httpx"):
            text = f"cannot reach {self.config.url}: {exc}"
        elif isinstance(exc, McpCallError):
            text = str(exc)
        elif isinstance(exc, MCPError):
            text = f"the server ended the connection ({exc.message})"
        else:
            text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        tail = self._stderr_text
        return f"{text}; its stderr: {tail}" if tail else text

    def _stderr_tail(self) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            return self._stderr.read()[-STDERR_TAIL:].strip()
        return ""

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        cwd: Path | None = None,
        on_progress: OnProgress | None = None,
    ) -> CallToolResult:
        """Call one of the server's tools, starting (or restarting) the server first. `cwd`, the
        calling conversation's directory, becomes one of the server's roots.

        A progress token goes with the call: each progress notification is passed to
        `on_progress` and gives the call another `tool_timeout_s` from then.

        Raises `McpCallError` with a message for the model when there is no result: the server
        could not start, the call timed out, or the connection ended during the call (the
        server is then restarted by the next call).
        """
        timeout = self.config.tool_timeout_s

        async def send(session: ClientSession, limit: anyio.CancelScope) -> CallToolResult:
            async def progressed(progress: float, total: float | None, message: str | None) -> None:
                limit.deadline = anyio.current_time() + timeout  # still working: more time
                if on_progress is not None:
                    await on_progress(progress, total, message)

            return await session.call_tool(tool, arguments, progress_callback=progressed)

        return await self.request(tool, send, cwd=cwd)

    def _unreadable(self, tool: str, message: str) -> str:
        """Why one call's answer could not be read, while the connection itself is fine."""
        name, limit = self.config.name, self.config.max_result_mb
        if "byte limit" in message:
            return (
                f"{name}: the result of {tool} is larger than max_result_mb = {limit} MiB, the "
                f"most read from this server; raise it in [mcp_servers.{name}] to receive it"
            )
        return f"{name}: the answer to {tool} could not be read ({message})"

    async def request(
        self,
        what: str,
        send: Callable[[ClientSession, anyio.CancelScope], Awaitable[T]],
        *,
        cwd: Path | None = None,
    ) -> T:
        """One request to the server (a tool call, a resource read, a prompt), starting it first,
        bounded by `tool_timeout_s` (`send` may move the deadline of the scope it is given).
        Raises `McpCallError` saying what went wrong."""
        name = self.config.name
        if not await self.ensure_started():
            raise McpCallError(f"MCP server {name!r} is not available: {self.error}")
        session = self._session
        assert session is not None
        if cwd is not None:
            await self._add_root(session, cwd)
        timeout = self.config.tool_timeout_s
        if not self.calls:
            self._idle = anyio.Event()
        self.calls += 1
        limit = anyio.CancelScope(deadline=anyio.current_time() + timeout)
        try:
            with limit:
                return await send(session, limit)
            raise McpCallError(
                f"{name}: {what} did not finish within tool_timeout_s = {timeout:g} s"
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED and exc.message.startswith(_SSE_FAILED):
                raise McpCallError(self._unreadable(what, exc.message)) from None
            if exc.code == CONNECTION_CLOSED or self._session is not session:
                raise await self._lost(what, session) from None
            # The server answered with a protocol error (unknown tool, bad arguments).
            raise McpCallError(f"{name}: {what} failed: {exc.message}") from None
        except _TRANSPORT_GONE as exc:
            log.info("MCP server %s: %s failed: %r", name, what, exc)
            raise await self._lost(what, session) from None
        finally:
            self.calls -= 1
            if not self.calls:
                self._idle.set()

    async def _lost(self, tool: str, session: ClientSession) -> McpCallError:
        """The connection ended during a call: say so, and restart at the next call. When it
        was the current session, the server is failed at once and its old run is ended before
        the call returns (its process stopped and reaped), not left until the next call."""
        self._ended = True
        if self.status == "ready" and self._session is session:
            self._fail(f"stopped during a call of {tool}; it restarts at the next call")
            await self._discard_task()
        return McpCallError(
            f"MCP server {self.config.name!r} stopped during the call of {tool}; "
            "it will be restarted for the next call"
        )

    async def stop(self) -> None:
        """End the session and the server's process (the SDK terminates it, then kills it)."""
        self._stop.set()
        activity, self._activity = self._activity, None
        if activity is not None:
            # A server still starting is not listening for the stop (it waits on its own
            # initialize, which may never answer): cancel it at once rather than wait out STOP_S
            # at every shutdown of the daemon.
            if self.status == "ready":
                with anyio.move_on_after(STOP_S):
                    await activity.wait()
            if not activity.finished:
                activity.cancel()
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE_S):
                    await activity.wait()
        self.status, self._session = "stopped", None
        self.announce()


# What a request raises when the server's transport is gone (its process died, a pipe broke,
# the SDK's streams were closed under the call).
_TRANSPORT_GONE = (
    OSError,
    EOFError,
    RuntimeError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
