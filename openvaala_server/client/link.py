"""The one daemon connection of a long-lived client process: the editor bridge
(openvaala_lsp/bridge.py) and the ACP agent (openvaala_acp/link.py) are both a `Link`.

It connects on first use, starting a daemon if none runs. When the daemon goes away, the
`Client` connects again by itself with the one backoff, starting a new daemon when none comes
back (`restart=True`), and resubscribes every conversation: the events missed are replayed, or a
`conversation/snapshot` says to redraw. What waited on the lost daemon (a prompt's turn) fails at
once with the client's own "daemon lost" error, and every notification, the connection's state
included, reaches the listeners. The two clients differ only in the errors they raise
(`LinkErrors`) and in what they keep (the bridge folds transcripts)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from openvaala_server.client.connection import CONNECTION, Client, ConnectionLost, RpcError
from openvaala_server.client.turns import TurnTracker
from openvaala_server.protocol.json_types import JsonObject

if TYPE_CHECKING:  # annotations only: the payload types cost ~60 ms to import (TUI start-up)
    from openvaala_server.protocol import payloads
    from openvaala_server.protocol.calls import Request

log = logging.getLogger(__name__)

Listener = Callable[[str, JsonObject], None]

# Errors of a link itself, below the daemon's own codes (docs/editors.md).
UNAVAILABLE = -32090
DAEMON_LOST = -32091


def daemon_gone(params: JsonObject, *, remote: bool) -> bool:
    """Whether a `client/connection` note means the daemon that ran the awaited turns is gone.
    Here a lost connection is a lost daemon (it runs on this machine). Over `--remote` it is
    most often ssh alone, and the daemon there goes on with the turn, whose end the
    resubscription replays: it is gone only once another daemon answers, or none can
    (docs/remote.md, "When ssh drops")."""
    state = params.get("state")
    if not remote:
        return state == "reconnecting"
    return state == "disconnected" or (state == "connected" and bool(params.get("restarted")))


@dataclass(frozen=True)
class LinkErrors:
    """How a link's client says what went wrong, in its own protocol's error type."""

    unavailable: Callable[[str], Exception]  # no daemon can be reached (the message says why)
    lost: Callable[[], Exception]  # the daemon went away while a turn was awaited
    rpc: Callable[[RpcError], Exception]  # the daemon's error, its code and data.kind kept
    # This client stops while a turn is awaited; the daemon and the turn go on. None: `lost`.
    closing: Callable[[], Exception] | None = None


class Link:
    def __init__(self, client_name: str, errors: LinkErrors, *, closing: str) -> None:
        self.client_name = client_name
        self.errors = errors
        self._closing = closing  # what a request made while shutting down is told
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self.turns = TurnTracker()
        self.listeners: list[Listener] = []
        self.closed = False
        # Typed by method, as `Client.request` is (protocol/calls.py).
        self.request: Request = self._request

    async def client(self) -> Client:
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                if self.closed:
                    raise self.errors.unavailable(self._closing)
                try:
                    client = await Client.connect(client_name=self.client_name, restart=True)
                except Exception as exc:  # refused, handshake, a stale lock: all say why
                    raise self.errors.unavailable(
                        f"cannot reach the OpenVaala daemon: {exc}"
                        " (check `openvaala serve status` and the daemon's server.log)"
                    ) from None
                if self.closed:  # shut down while connecting
                    await client.close()
                    raise self.errors.unavailable(self._closing)
                self._client = client
                # The pump is a task of the client's own group: closing the client ends it.
                client.start_soon(partial(self._run_pump, client), "openvaala-link-pump")
        return self._client

    async def close(self) -> None:
        self.closed = True
        # Whoever waits for a turn hears the truth first: this client stops, the daemon does not.
        self.turns.lose((self.errors.closing or self.errors.lost)())
        client, self._client = self._client, None
        if client is not None:
            await client.close()  # and with it the pump, a task of the client's
        self.turns.lose(self.errors.lost())

    async def _request(
        self, method: str, params: Mapping[str, object] | None = None, *, timeout: float = 60
    ) -> Any:
        client = await self.client()
        try:
            return await client._request(method, params or {}, timeout=timeout)
        except RpcError as exc:
            raise self.errors.rpc(exc) from None
        except (ConnectionLost, TimeoutError) as exc:
            raise self.errors.unavailable(f"{method}: {exc or 'timed out'}") from None

    async def subscribe(self, conversation_id: str) -> payloads.SubscribeResult:
        """Subscribe and return `{snapshot, seq}`; the events after it reach the listeners, and
        the client subscribes again by itself after a reconnection."""
        client = await self.client()
        try:
            return await client.subscribe(conversation_id)
        except RpcError as exc:
            raise self.errors.rpc(exc) from None
        except (ConnectionLost, TimeoutError) as exc:
            raise self.errors.unavailable(f"conversation/subscribe: {exc or 'timed out'}") from None

    async def unsubscribe(self, conversation_id: str) -> None:
        if self._client is not None:
            with contextlib.suppress(RpcError, ConnectionLost, TimeoutError):
                await self._client.unsubscribe(conversation_id)

    # -- notifications -------------------------------------------------------------------

    async def _run_pump(self, client: Client) -> None:
        async for note in client.notifications():
            # The listeners (the editor bridge, the ACP agent) read params by key, any method's.
            self.dispatch(note["method"], cast("JsonObject", note["params"]))

    def dispatch(self, method: str, params: JsonObject) -> None:
        if method == CONNECTION and self._daemon_gone(params):
            # Whatever waited on the lost daemon is over: a new daemon does not continue it.
            self.turns.lose(self.errors.lost())
        self.on_event(method, params)
        for listener in list(self.listeners):
            try:
                listener(method, params)
            except Exception:
                log.exception("listener failed on %s", method)
        if method != CONNECTION:
            self.turns.observe(method, params)

    @property
    def remote(self) -> bool:
        """Whether the daemon is on another machine, over ssh (`--remote`)."""
        return self._client is not None and self._client.dialer is not None

    async def remote_directory(self) -> str | None:
        """Over `--remote`, where new conversations start there (`HOST:DIR`, else the remote
        home); None for a daemon on this machine."""
        dialer = (await self.client()).dialer
        return dialer.resolve(dialer.remote.directory) if dialer is not None else None

    def _daemon_gone(self, params: JsonObject) -> bool:
        return daemon_gone(params, remote=self.remote)

    def on_event(self, method: str, params: JsonObject) -> None:
        """What a link keeps of an event, before the listeners hear of it."""
