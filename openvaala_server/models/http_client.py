"""One kept `httpx.AsyncClient` per provider (docs/design.md, "Performance at scale").

Building a client costs tens of milliseconds of CPU (its SSL context loads the CA bundle), and a new
client means a new TCP (and TLS) connection for every model call. So a provider keeps one client,
built on first use in a worker thread — never on the event loop, where it would stall every other
conversation's stream — and reuses its pooled connections from call to call.

A provider whose configuration was replaced by a reload is *retired*: its client is closed as soon
as no call is using it (a turn that started with the old configuration finishes on it first).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final

import anyio

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

# Several conversations (and their subagents) may stream from one provider at once; each stream
# holds a connection. Idle connections are kept long enough to span the gap between the steps of
# a turn and a person's next message, not forever (providers drop idle ones after a minute or so).
MAX_CONNECTIONS = 64
MAX_KEEPALIVE = 8
KEEPALIVE_EXPIRY_S = 30.0

# Model calls stream for minutes and reasoning models may think silently for a long time before
# the first byte, so only connecting is held to a short deadline.
CONNECT_S: Final = 15.0
DEFAULT_READ_S: Final = 300.0  # a model's `read_timeout_s` replaces it (http.read_timeout_s)
WRITE_S: Final = 60.0

# Strong references to the closing tasks of retired clients (asyncio keeps only weak ones).
_closing: set[asyncio.Task[None]] = set()


def _build(read_s: float) -> httpx.AsyncClient:
    # httpx is imported here, in the worker thread of the first call: not at the daemon's start,
    # and not on the event loop (docs/design.md, "Start-up imports").
    import httpx

    timeout = httpx.Timeout(connect=CONNECT_S, read=read_s, write=WRITE_S, pool=CONNECT_S)
    limits = httpx.Limits(
        max_connections=MAX_CONNECTIONS,
        max_keepalive_connections=MAX_KEEPALIVE,
        keepalive_expiry=KEEPALIVE_EXPIRY_S,
    )
    return httpx.AsyncClient(timeout=timeout, limits=limits)


class KeptClient:
    """The lazily built, reused client of one provider; `given` (tests) is used and never closed."""

    def __init__(self, read_s: float, given: httpx.AsyncClient | None = None) -> None:
        self.read_s = read_s  # the longest silence allowed in a response
        self._given = given
        self._client: httpx.AsyncClient | None = None
        self._lock = asyncio.Lock()
        self._active = 0
        self.retired = False
        self.closed = False
        self.built = 0  # how many clients this provider has built (tests and benchmarks)

    async def _get(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        async with self._lock:
            if self._client is None:
                self._client = await asyncio.to_thread(_build, self.read_s)
                self.built += 1
            return self._client

    @asynccontextmanager
    async def use(self) -> AsyncIterator[httpx.AsyncClient]:
        """The client for one call; a retired provider's client closes after its last call."""
        self._active += 1
        try:
            yield await self._get()
        finally:
            self._active -= 1
            if self.retired and self._active == 0:
                # Shielded: a call ended by an interrupt (a cancelled scope) still closes it.
                with anyio.CancelScope(shield=True):
                    await self.aclose()

    def retire(self) -> None:
        """No new callers will come: close now if idle, else after the last running call."""
        self.retired = True
        if self._active == 0 and self._client is not None:
            task = asyncio.get_running_loop().create_task(self.aclose())
            _closing.add(task)
            task.add_done_callback(_closing.discard)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        self.closed = True
        if client is not None:
            try:
                await client.aclose()
            except Exception:  # closing must never fail a turn or a shutdown
                log.exception("closing an HTTP client failed")
