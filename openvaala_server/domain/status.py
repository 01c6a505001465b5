"""The states of a turn and of a session, declared (docs/protocol.md "Sessions", "Turns").

A turn runs, then ends once: completed, interrupted or failed (`end_turn` refuses any other
move). A session's status is derived, never stored: closed, else waiting on an approval, else
running (a turn or a manual compaction), else holding queued input, else how its last turn ended.
"""

from __future__ import annotations

from typing import Literal

TurnOutcome = Literal["completed", "interrupted", "failed"]
TurnStatus = Literal["running", "completed", "interrupted", "failed"]
# What a session remembers of its last turn: a completed one leaves it idle.
LastStatus = Literal["idle", "interrupted", "failed"]
SessionStatus = Literal[
    "idle", "running", "awaiting_approval", "waiting", "interrupted", "failed", "closed"
]

# Why a running turn is being stopped: the user, a `jump` message, the session closed, or the
# daemon shutting down (`turn/ended.interruptedBy`, docs/protocol.md).
StopReason = Literal["user", "jump", "close", "shutdown"]

TURN_OUTCOMES: tuple[TurnOutcome, ...] = ("completed", "interrupted", "failed")


class BadTransition(ValueError):
    """A turn asked to move where its state machine has no edge."""


def end_turn(current: TurnStatus, outcome: TurnOutcome) -> TurnStatus:
    """A running turn ends with `outcome`; an ended turn never ends again."""
    if current != "running":
        raise BadTransition(f"a turn that is {current} cannot end {outcome}")
    return outcome


def last_status(outcome: str) -> LastStatus:
    """What a session keeps of a turn that ended `outcome` (as recorded: an unknown word from a
    newer journal counts as completed)."""
    if outcome == "interrupted":
        return "interrupted"
    if outcome == "failed":
        return "failed"
    return "idle"


def session_status(
    *, closed: bool, awaiting_approval: bool, running: bool, waiting: bool, last: LastStatus
) -> SessionStatus:
    if closed:
        return "closed"
    if awaiting_approval:
        return "awaiting_approval"
    if running:
        return "running"
    if waiting:
        return "waiting"
    return last
