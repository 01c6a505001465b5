"""The one reconnection backoff of every Python client (docs/design.md, "One client library").

Delays double from `first` up to `cap`: a daemon that restarts at once is reached in a tenth of a
second, and one that stays down is asked about once every five seconds, which costs nothing.
No jitter: the daemon is local and serves a handful of clients, not a fleet."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    first: float = 0.1
    factor: float = 2.0
    cap: float = 5.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(delay * self.factor, self.cap)


# How long a daemon someone else is starting (it holds the lock, serves no address yet: `openvaala
# serve start`, another client) may take before a client that restarts daemons starts one
# itself: starting a second meanwhile would only lose the lock race. With the lock free (the
# daemon crashed or stopped and nobody starts one) the client starts one at once.
RESTART_GRACE_S = 5.0

BACKOFF = Backoff()
