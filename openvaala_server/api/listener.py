"""Accepting connections so that no local process can deny service to the others.

Any local process can connect to the daemon's port, token or not. Without limits, a few hundred
connections that never finish their request headers held a file descriptor each forever; at the
file limit new clients timed out, and asyncio's accept loop (Python 3.11) logged one traceback per
backlog slot on every wake-up (tens of MB in seconds). So:

- The daemon runs its own accept loop: an accept that fails for want of resources (EMFILE,
  ENFILE, ENOBUFS, ENOMEM) waits `ACCEPT_BACKOFF_S` and is logged once per `LOG_INTERVAL_S`.
- A connection must send its request headers within `HEADER_TIMEOUT_S` of opening (or of its
  previous response), or it is closed. Until then it is not authenticated (the token is a header).
- At most `Limits.pending` connections wait for their headers; one more closes the oldest waiting
  one (a real client sends its headers at once, so it is never the oldest for long).
- At most `Limits.connections` are open in all (half the file limit, the rest is for journals,
  the index and tools); past it, a new connection is closed at once.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import h11

from openvaala_server.api.uvicorn_parts import H11Protocol

log = logging.getLogger(__name__)

HEADER_TIMEOUT_S: Final = 5.0
ACCEPT_BACKOFF_S: Final = 0.5
LOG_INTERVAL_S: Final = 60.0
_OUT_OF_RESOURCES: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


@dataclass(frozen=True)
class Limits:
    connections: int  # open at once, authenticated or not
    pending: int  # waiting for their request headers
    header_timeout: float = HEADER_TIMEOUT_S

    @classmethod
    def from_file_limit(cls) -> Limits:
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            soft = 65536
        connections = max(8, soft // 2)
        return cls(connections=connections, pending=max(4, min(256, connections // 4)))


class RateLimitedLog:
    """One warning per interval, saying how many were suppressed since the last."""

    def __init__(self, interval: float = LOG_INTERVAL_S) -> None:
        self.interval = interval
        self._last = -interval
        self._suppressed = 0

    def warning(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            self._suppressed += 1
            return
        suffix = f" ({self._suppressed} more since the last report)" if self._suppressed else ""
        log.warning(message + suffix, *args)
        self._last = now
        self._suppressed = 0


class Guard:
    """The connections of one server, as the limits see them."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._open: set[asyncio.BaseTransport] = set()
        self._pending: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.refusals = RateLimitedLog()

    def admit(self, transport: asyncio.BaseTransport) -> bool:
        # A websocket's transport outlives the HTTP protocol that saw it open: count transports,
        # and forget the closed ones here rather than rely on any protocol to report them.
        self._open = {t for t in self._open if not t.is_closing()}
        if len(self._open) >= self.limits.connections:
            self.refusals.warning("refusing connections: %d are open", len(self._open))
            return False
        self._open.add(transport)
        return True

    def waiting(self, protocol: GuardedH11Protocol) -> None:
        self._pending[protocol] = None
        self._pending.move_to_end(protocol)
        while len(self._pending) > self.limits.pending:
            oldest, _ = self._pending.popitem(last=False)
            self.refusals.warning(
                "closing connections that sent no request: %d were waiting", self.limits.pending
            )
            oldest.close_waiting()

    def done_waiting(self, protocol: GuardedH11Protocol) -> None:
        self._pending.pop(protocol, None)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the header deadline and the limits of `Guard`."""

    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = guard
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.guard.admit(transport):
            transport.close()
            return
        self._follow_state()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_state()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_state()

    def close_waiting(self) -> None:
        self._stop_waiting()
        if not self.transport.is_closing():
            self.transport.close()

    def _follow_state(self) -> None:
        """Waiting for headers: idle between requests and not upgraded to a websocket."""
        upgraded = self.transport.get_protocol() is not self
        if self.transport.is_closing() or upgraded or self.conn.their_state is not h11.IDLE:
            self._stop_waiting()
        elif self._deadline is None:
            self._deadline = self.loop.call_later(
                self.guard.limits.header_timeout, self.close_waiting
            )
            self.guard.waiting(self)

    def _stop_waiting(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.guard.done_waiting(self)


async def accept_forever(
    sock: socket.socket, factory: Callable[[], asyncio.Protocol], guard: Guard
) -> None:
    """Accept on `sock` until cancelled, each connection served by a `factory()` protocol."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    failures = RateLimitedLog()
    while True:
        try:
            conn, _address = await loop.sock_accept(sock)
        except OSError as exc:
            if exc.errno not in _OUT_OF_RESOURCES:
                raise
            failures.warning("cannot accept connections: %s; retrying", exc.strerror)
            await asyncio.sleep(ACCEPT_BACKOFF_S)
            continue
        try:
            await loop.connect_accepted_socket(factory, conn)
        except OSError as exc:
            conn.close()
            failures.warning("cannot serve a connection: %s", exc.strerror)
