"""Per-conversation fan-out of events to every subscribed client.

Each event is numbered (`seq`, monotonic per conversation, no gaps) and encoded once; every
subscriber receives the same frame. The last `replay_limit` frames are kept so a client that
reconnects with `afterSeq` gets exactly what it missed; older than that, it gets a new snapshot.

Sequence numbers start from the clock (microseconds since the epoch) when the hub is made, so a
client that saw seq N before a server restart can never mistake a new event for one it saw.

Subscribers are bounded by their own connection (`Subscriber.deliver` must never block): a slow
client is dropped by its connection, never allowed to stall the turn or the other clients.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from openvaala_server.protocol import jsonrpc
from openvaala_server.protocol.json_types import JsonMapping

if TYPE_CHECKING:
    from openvaala_server.protocol.calls import Publish


class Subscriber(Protocol):
    def deliver(self, frame: str) -> None:
        """Queue one frame for sending. Must not block; may drop the subscriber."""
        ...


class Hub:
    def __init__(self, conversation_id: str, replay_limit: int = 10_000) -> None:
        self.conversation_id = conversation_id
        self.seq = time.time_ns() // 1000
        self._first_seq = self.seq + 1  # the oldest event this hub ever numbered
        self._log: deque[tuple[int, str]] = deque(maxlen=max(replay_limit, 0) or None)
        self._replay_enabled = replay_limit > 0
        self._subscribers: dict[Subscriber, None] = {}
        # Called when the last subscriber leaves (the conversation may let go of its history).
        self.on_unwatched: Callable[[], None] | None = None
        # Typed by method (protocol/calls.py, docs/design.md "Typed seams"): each notification
        # with the params its declaration names. An attribute, as `Client.request` is.
        self.publish: Publish = self._publish

    def _publish(self, method: str, params: JsonMapping) -> int:
        self.seq += 1
        frame = jsonrpc.notification(
            method, {"conversationId": self.conversation_id, "seq": self.seq, **params}
        ).decode()
        if self._replay_enabled:
            self._log.append((self.seq, frame))
        for subscriber in list(self._subscribers):
            subscriber.deliver(frame)
        return self.seq

    def close(self) -> None:
        """The conversation is gone: stop delivering to anyone."""
        self._subscribers.clear()

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers[subscriber] = None

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            del self._subscribers[subscriber]
            if not self._subscribers and self.on_unwatched is not None:
                self.on_unwatched()

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def replay_after(self, after_seq: int) -> list[str] | None:
        """The frames after `after_seq`, or None when they are no longer (or never were) held."""
        if after_seq == self.seq:
            return []
        if after_seq > self.seq or after_seq < self._first_seq - 1:
            return None
        if not self._log or self._log[0][0] > after_seq + 1:
            return None
        return [frame for seq, frame in self._log if seq > after_seq]
