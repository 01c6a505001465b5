"""A notification as the `Client` yields it: the daemon's (protocol/calls.py `Notification`), or one
the client makes itself: the connection's state, a redraw after a gap, its own end.

Types only (every import is for annotations): the terminal UI imports the client at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads
    from openvaala_server.protocol.calls import Notification


class ConnectionParams(TypedDict):
    state: Literal["connected", "reconnecting", "disconnected"]
    restarted: NotRequired[bool]  # connected to a new daemon, not the one lost
    message: NotRequired[str]  # disconnected: why no daemon could be started; reconnecting
    # over `--remote`: why ssh or the bridge failed the last attempt


class ConnectionEvent(TypedDict):
    method: Literal["client/connection"]
    params: ConnectionParams


class SnapshotParams(TypedDict):
    conversationId: str
    seq: int
    snapshot: payloads.Snapshot


class SnapshotEvent(TypedDict):
    """A resubscription could not replay what was missed: redraw from this snapshot."""

    method: Literal["conversation/snapshot"]
    params: SnapshotParams


class ClosedParams(TypedDict):
    pass


class ClosedEvent(TypedDict):
    method: Literal["client/closed"]
    params: ClosedParams


if TYPE_CHECKING:
    Note = Notification | ConnectionEvent | SnapshotEvent | ClosedEvent
