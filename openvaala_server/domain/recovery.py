"""What recovery writes for a turn a crash cut short. Pure: no I/O.

A turn whose `turn_started` has no `turn_ended` was cut by a crash or a kill. Its tool calls that
never got a result would look pending forever, and nobody would learn why the turn stopped: each
gets an interrupted tool result, and the turn gets a `server_stopped` notice (docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from openvaala_server.domain.records import NOTICE, TOOL_CALL, TOOL_RESULT, Item

SERVER_STOPPED: Final = "server_stopped"
STOPPED_RESULT: Final = "The server stopped before this call finished."
STOPPED_NOTICE: Final = (
    "The server stopped during this turn (a crash or a kill). "
    "Anything marked interrupted above did not finish. "
    "To pick it up where it stopped: /continue in the terminal, or "
    '"Continue the cut turn" in the browser\'s history panel.'
)


def unanswered_calls(items: Sequence[Item], turn_id: str) -> list[Item]:
    """The tool calls of `turn_id` that have no result, in order."""
    answered = {i.get("callId") for i in items if i.get("type") == TOOL_RESULT}
    return [
        i
        for i in items
        if i.get("type") == TOOL_CALL
        and i.get("turnId") == turn_id
        and i.get("callId") not in answered
    ]


def has_stopped_notice(items: Sequence[Item], turn_id: str) -> bool:
    """Recovery already told of this turn (it crashed again before recording the end)."""
    return any(
        i.get("type") == NOTICE and i.get("turnId") == turn_id and i.get("kind") == SERVER_STOPPED
        for i in items
    )


RESUMED: Final = "resumed"
RESUME_NOTICE: Final = (
    "The previous turn was cut when the server stopped (see above). Continue it from where it "
    "stopped: the history above is everything that was saved. Tool calls marked interrupted did "
    "not finish and were not run again; check what they did before repeating them."
)


def was_cut(status: str, error: object) -> bool:
    """A turn a crash or a kill cut (recovery recorded it as `server_stopped`)."""
    return (
        status == "interrupted" and isinstance(error, dict) and error.get("kind") == SERVER_STOPPED
    )
