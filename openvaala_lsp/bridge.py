"""The one connection to the daemon: requests, subscriptions, and the pump that hands every
notification to the bridge's listeners (forwarding, documents, progress, usage, turns)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException

from openvaala_lsp.turns import TurnTracker
from openvaala_lsp.version import __version__
from openvaala_server.client import (
    CONNECTION,
    SNAPSHOT,
    Client,
    ConnectionLost,
    RpcError,
    find_server,
)
from openvaala_server.client.view import ConversationView

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]

# Bridge-side errors, below the daemon's own codes.
UNAVAILABLE = -32090
DAEMON_LOST = -32091
RETRY_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 4.0)
RESTART_GRACE_S = 5.0  # how long a lost daemon's replacement may take before the bridge starts one


class DaemonError(JsonRpcException):
    """A daemon error passed on to the editor with its code, message and `data.kind`."""


def _unavailable(message: str) -> DaemonError:
    return DaemonError(message, UNAVAILABLE, {"kind": "daemon_unavailable"})


def daemon_lost() -> DaemonError:
    """What a request waiting on the daemon (a prompt's turn) gets when the daemon goes away."""
    return DaemonError(
        "the OpenVaala daemon stopped during this request; the turn was cut short"
        " (the bridge starts a new daemon: send the message again)",
        DAEMON_LOST,
        {"kind": "daemon_lost"},
    )


class Bridge:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._pump: asyncio.Task[None] | None = None
        self._watching: dict[str, asyncio.Task[ConversationView]] = {}
        self._buffered: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        self.views: dict[str, ConversationView] = {}
        self.turns = TurnTracker()
        self.listeners: list[Listener] = []
        # Called with a conversation id once its first view exists (the snapshot's state, which
        # no notification carries).
        self.view_listeners: list[Callable[[str], None]] = []
        self.closed = False
        self._reviving: asyncio.Task[None] | None = None

    # -- the connection ------------------------------------------------------------------

    async def client(self) -> Client:
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                if self.closed:
                    raise _unavailable("the editor bridge is shutting down")
                try:
                    # No reconnection inside the client: it would only find a daemon again,
                    # never start one; the bridge reconnects as it connected (docs/editors.md).
                    client = await Client.connect(
                        client_name=f"openvaala-lsp/{__version__}", reconnect=False
                    )
                except Exception as exc:  # refused, handshake, a stale lock: all say why
                    raise _unavailable(
                        f"cannot reach the OpenVaala daemon: {exc}"
                        " (check `openvaala serve status` and the daemon's server.log)"
                    ) from None
                if self.closed:  # shut down while connecting
                    await client.close()
                    raise _unavailable("the editor bridge is shutting down")
                self._client = client
                self._pump = asyncio.create_task(self._run_pump(client))
        return self._client

    async def close(self) -> None:
        self.closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        for task in (self._pump, self._reviving):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self.turns.lose(daemon_lost())

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        client = await self.client()
        try:
            return await client.request(method, params or {})
        except RpcError as exc:
            raise DaemonError(exc.message, exc.code, {**exc.data, "kind": exc.kind}) from None
        except (ConnectionLost, TimeoutError) as exc:
            raise _unavailable(f"{method}: {exc or 'timed out'}") from None

    # -- subscriptions -------------------------------------------------------------------

    async def watch(self, conversation_id: str) -> ConversationView:
        """The conversation's view, subscribing to it on the daemon the first time."""
        view = self.views.get(conversation_id)
        if view is not None:
            return view
        task = self._watching.get(conversation_id)
        if task is None:
            task = asyncio.create_task(self._subscribe(conversation_id))
            self._watching[conversation_id] = task
        return await asyncio.shield(task)

    async def _subscribe(self, cid: str) -> ConversationView:
        self._buffered[cid] = []
        try:
            client = await self.client()
            try:
                result = await client.subscribe(cid)
            except RpcError as exc:
                raise DaemonError(exc.message, exc.code, {**exc.data, "kind": exc.kind}) from None
            view = ConversationView.from_snapshot(
                result["snapshot"], int(result["seq"]), local_notices=False
            )
            for method, params in self._buffered[cid]:
                view.fold(method, params)
            self.views[cid] = view
            for hook in list(self.view_listeners):
                try:
                    hook(cid)
                except Exception:
                    log.exception("view listener failed on %s", cid)
            return view
        finally:
            self._buffered.pop(cid, None)
            self._watching.pop(cid, None)

    async def unwatch(self, conversation_id: str) -> None:
        if self.views.pop(conversation_id, None) is None or self._client is None:
            return
        with contextlib.suppress(RpcError, ConnectionLost, TimeoutError):
            await self._client.unsubscribe(conversation_id)

    # -- notifications -------------------------------------------------------------------

    async def _run_pump(self, client: Client) -> None:
        async for note in client.notifications():
            self.dispatch(str(note.get("method")), note.get("params") or {})
        # The connection is gone (the daemon stopped or crashed).
        if self._client is client and not self.closed:
            self._client = None
            self._reviving = asyncio.create_task(self._revive())

    async def _reconnect(self) -> Client:
        # A daemon being restarted by someone else (`openvaala serve stop` + `start`) gets a
        # moment to come up first: starting a second one at once would lose the lock race.
        deadline = asyncio.get_running_loop().time() + RESTART_GRACE_S
        while asyncio.get_running_loop().time() < deadline:
            if await asyncio.to_thread(find_server) is not None:
                break
            await asyncio.sleep(0.1)
        # Right after a crash the lock can still name the dead daemon for a moment: retry a few
        # times before telling the editor to start one.
        failure: DaemonError | None = None
        for delay in RETRY_DELAYS_S:
            try:
                return await self.client()
            except DaemonError as exc:
                failure = exc
                await asyncio.sleep(delay)
        assert failure is not None
        raise failure

    async def _revive(self) -> None:
        """After the daemon went away: fail what waited on it, connect as at startup (starting a
        daemon if none runs), and redraw every watched conversation from a fresh snapshot."""
        self.dispatch(CONNECTION, {"state": "reconnecting"})
        self.turns.lose(daemon_lost())
        try:
            client = await self._reconnect()
            for cid in list(self.views):
                result = await client.subscribe(cid)
                self.dispatch(
                    SNAPSHOT,
                    {"conversationId": cid, "seq": result["seq"], "snapshot": result["snapshot"]},
                )
        except (DaemonError, RpcError, ConnectionLost, TimeoutError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            log.warning("the daemon stopped and could not be restarted: %s", message)
            self.dispatch(CONNECTION, {"state": "disconnected", "message": message})
            return
        self.dispatch(CONNECTION, {"state": "connected", "restarted": True})

    def dispatch(self, method: str, params: dict[str, Any]) -> None:
        cid = params.get("conversationId")
        if method == SNAPSHOT and isinstance(cid, str):
            # A resubscription that could not replay: redraw from scratch, as a newer version.
            if (old := self.views.get(cid)) is not None:
                old.fold(method, params)
        elif method != CONNECTION and isinstance(cid, str):
            self.turns.observe(method, params)
            if cid in self._buffered:
                self._buffered[cid].append((method, params))
            elif (view := self.views.get(cid)) is not None:
                view.fold(method, params)
        for listener in list(self.listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("listener failed on %s", method)
