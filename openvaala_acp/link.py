"""The agent's one connection to the daemon, kept the way the LSP bridge keeps its own
(openvaala_lsp/bridge.py, docs/editors.md): connect on first use, starting a daemon if none runs;
when the daemon goes away, fail what waited on it with a clear error, connect again (starting a
daemon if none comes back) and resubscribe every open conversation from a fresh snapshot.

Daemon errors become ACP errors with the daemon's code, message and `data.kind`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from acp import RequestError

from openvaala_acp import __version__
from openvaala_lsp.turns import TurnTracker
from openvaala_server.client import (
    CONNECTION,
    SNAPSHOT,
    Client,
    ConnectionLost,
    RpcError,
    find_server,
)

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]

UNAVAILABLE = -32090
DAEMON_LOST = -32091
RETRY_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 4.0)
RESTART_GRACE_S = 5.0  # how long a lost daemon's replacement may take before we start one


def unavailable(message: str) -> RequestError:
    return RequestError(UNAVAILABLE, message, {"kind": "daemon_unavailable"})


def daemon_lost() -> RequestError:
    return RequestError(
        DAEMON_LOST,
        "the OpenVaala daemon stopped during this turn; the turn was cut short"
        " (openvaala acp starts a new daemon and keeps the session: send the message again)",
        {"kind": "daemon_lost"},
    )


def from_rpc(exc: RpcError) -> RequestError:
    return RequestError(exc.code, exc.message, {**exc.data, "kind": exc.kind})


class DaemonLink:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._pump: asyncio.Task[None] | None = None
        self._reviving: asyncio.Task[None] | None = None
        self.subscribed: set[str] = set()
        self.turns = TurnTracker()
        self.listeners: list[Listener] = []
        self.closed = False

    async def client(self) -> Client:
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                if self.closed:
                    raise unavailable("openvaala acp is shutting down")
                try:
                    # No reconnection inside the client: it only finds a daemon again, never
                    # starts one; the link reconnects as it connected.
                    client = await Client.connect(
                        client_name=f"openvaala-acp/{__version__}", reconnect=False
                    )
                except Exception as exc:  # refused, handshake, a stale lock: all say why
                    raise unavailable(
                        f"cannot reach the OpenVaala daemon: {exc}"
                        " (check `openvaala serve status` and the daemon's server.log)"
                    ) from None
                # After a loss, every open session is subscribed again before anyone may use
                # the new connection: a prompt must not send into a conversation whose events
                # it would not hear.
                fresh = await self._resubscribe(client)
                self._client = client
                self._pump = asyncio.create_task(self._run_pump(client))
                for cid, result in fresh:
                    self.dispatch(
                        SNAPSHOT,
                        {
                            "conversationId": cid,
                            "seq": result["seq"],
                            "snapshot": result["snapshot"],
                        },
                    )
        return self._client

    async def _resubscribe(self, client: Client) -> list[tuple[str, dict[str, Any]]]:
        fresh: list[tuple[str, dict[str, Any]]] = []
        for cid in sorted(self.subscribed):
            try:
                fresh.append((cid, await client.subscribe(cid)))
            except (RpcError, ConnectionLost, TimeoutError) as exc:
                log.warning("could not subscribe again to %s: %s", cid, exc)
        return fresh

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
            raise from_rpc(exc) from None
        except (ConnectionLost, TimeoutError) as exc:
            raise unavailable(f"{method}: {exc or 'timed out'}") from None

    async def subscribe(self, conversation_id: str) -> dict[str, Any]:
        """Subscribe (again) and return `{snapshot, seq}`; events after it reach the listeners."""
        client = await self.client()
        try:
            result: dict[str, Any] = await client.subscribe(conversation_id)
        except RpcError as exc:
            raise from_rpc(exc) from None
        except (ConnectionLost, TimeoutError) as exc:
            raise unavailable(f"conversation/subscribe: {exc or 'timed out'}") from None
        self.subscribed.add(conversation_id)
        return result

    # -- notifications -------------------------------------------------------------------

    async def _run_pump(self, client: Client) -> None:
        async for note in client.notifications():
            self.dispatch(str(note.get("method")), note.get("params") or {})
        if self._client is client and not self.closed:  # the daemon stopped or crashed
            self._client = None
            self._reviving = asyncio.create_task(self._revive())

    def dispatch(self, method: str, params: dict[str, Any]) -> None:
        # Listeners first: a turn's updates are queued before whoever waits on its end wakes.
        for listener in list(self.listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("listener failed on %s", method)
        if method not in (CONNECTION, SNAPSHOT):
            self.turns.observe(method, params)

    async def _reconnect(self) -> Client:
        # A daemon being restarted by someone else gets a moment to come up first: starting a
        # second one at once would lose the lock race.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RESTART_GRACE_S
        while loop.time() < deadline:
            if await asyncio.to_thread(find_server) is not None:
                break
            await asyncio.sleep(0.1)
        failure: RequestError | None = None
        for delay in RETRY_DELAYS_S:
            try:
                return await self.client()
            except RequestError as exc:
                failure = exc
                await asyncio.sleep(delay)
        assert failure is not None
        raise failure

    async def _revive(self) -> None:
        self.dispatch(CONNECTION, {"state": "reconnecting"})
        self.turns.lose(daemon_lost())
        try:
            await self._reconnect()  # which subscribes every open session again
        except (RequestError, RpcError, ConnectionLost, TimeoutError) as exc:
            log.warning("the daemon stopped and could not be restarted: %s", exc)
            self.dispatch(CONNECTION, {"state": "disconnected", "message": str(exc)})
            return
        self.dispatch(CONNECTION, {"state": "connected", "restarted": True})
