"""How a turn ends: what it streamed is kept and marked, every call it asked for gets a result,
a notice says why it stopped, then the end record and `turn/ended` (docs/protocol.md,
"Interrupting"; docs/design.md "Runtime split by responsibility"). `TurnRunner._finish`
(runtime/turn.py) runs these steps in order."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain import records as r
from openvaala_server.domain import recovery
from openvaala_server.protocol import methods
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.item_factory import new_item

if TYPE_CHECKING:
    from openvaala_server.domain.status import TurnOutcome
    from openvaala_server.protocol.payloads import TurnEndedNote
    from openvaala_server.runtime.hub import Hub
    from openvaala_server.runtime.session import LiveSession, LiveTurn

log = logging.getLogger(__name__)

INTERRUPT_NOTICE = (
    "The user interrupted the previous turn. Anything marked interrupted above was cut short."
)
# The result of a call the turn's end reached before it ran (docs/protocol.md, "Interrupting").
NOT_RUN = "This call did not run: the turn was {how} before it started."


def drop_empty(turn: LiveTurn, hub: Hub, sid: str, items: list[r.Item]) -> list[r.Item]:
    """`items` without the streamed text that stayed empty, each of which clients are told to
    discard."""
    kept = [i for i in items if not _is_empty(i)]
    for item in items:
        if item not in kept:
            turn.in_progress.pop(item["itemId"], None)
            hub.publish(methods.ITEM_DISCARDED, {"sessionId": sid, "itemId": item["itemId"]})
    return kept


def settle(
    turn: LiveTurn, hub: Hub, sid: str, writing: dict[str, r.Item], item_status: str
) -> list[r.Item]:
    """Whatever was still streaming, and the calls whose arguments were, marked with how the
    turn ended."""
    leftovers = list(turn.in_progress.values())
    for item in leftovers:
        item["status"] = item_status
    finals = drop_empty(turn, hub, sid, leftovers)
    for call in writing.values():
        call["status"] = item_status
        finals.append(call)
    writing.clear()
    return finals


def not_run(
    history: list[r.Item], finals: list[r.Item], sid: str, turn_id: str, item_status: str
) -> list[r.Item]:
    """A result for each call of this turn that has none (not started when the turn ended,
    or its arguments still streaming): every call the model asked for ends with one, on
    disk and in every client, marked as the turn ended."""
    calls = recovery.unanswered_calls([*history, *finals], turn_id)
    how = "interrupted" if item_status == r.INTERRUPTED else "stopped by an error"
    return [
        new_item(
            r.TOOL_RESULT,
            sid,
            turn_id,
            status=item_status,
            callId=call["callId"],
            name=call["name"],
            output=NOT_RUN.format(how=how),
            isError=True,
        )
        for call in calls
    ]


def failure_notice(sid: str, turn_id: str, error: r.ErrorInfo) -> r.Item:
    """Kept in the history: every client (and the model, next turn) sees why it stopped."""
    return new_item(
        r.NOTICE,
        sid,
        turn_id,
        status=r.COMPLETED,
        kind="turn_failed",
        errorKind=error["kind"],
        text=f"The turn failed: {error['message']}",
    )


def interrupt_notice(sid: str, turn_id: str) -> r.Item:
    return new_item(
        r.NOTICE, sid, turn_id, status=r.COMPLETED, kind="interrupted", text=INTERRUPT_NOTICE
    )


async def save(
    conv: LiveConversation,
    session: LiveSession,
    turn_id: str,
    finals: list[r.Item],
    status: TurnOutcome,
    error: r.ErrorInfo | None,
) -> tuple[TurnOutcome, r.ErrorInfo | None]:
    """Persist the turn's last items; a store that refuses them fails the turn, which still
    ends."""
    try:
        await conv.persist_items(session, finals)
    except errors.OpenVaalaError as exc:
        return "failed", {"kind": exc.kind, "message": exc.message}
    except Exception:  # the turn must still end, whatever the store does
        log.exception("could not save the end of turn %s", turn_id)
        return "failed", {"kind": "internal", "message": "the turn's last items could not be saved"}
    return status, error


async def record(
    conv: LiveConversation, sid: str, turn_id: str, status: str, error: r.ErrorInfo | None
) -> None:
    """The end record; one that cannot be written is recorded as interrupted when the
    conversation is next opened."""
    ended: r.TurnEnded = {
        "type": r.TURN_ENDED,
        "sessionId": sid,
        "turnId": turn_id,
        "status": status,
    }
    if error:
        ended["error"] = error
    try:
        await conv.append_meta(ended)
    except Exception:
        log.error("could not record the end of turn %s", turn_id)


def publish(
    hub: Hub, turn: LiveTurn, sid: str, status: TurnOutcome, error: r.ErrorInfo | None
) -> None:
    ended: TurnEndedNote = {
        "sessionId": sid,
        "turnId": turn.turn_id,
        "status": status,
    }
    if error:
        ended["error"] = error
    if status == "completed" and turn.model_stop:
        ended["modelStop"] = turn.model_stop
    if status == "interrupted" and turn.stop_reason:
        ended["interruptedBy"] = turn.stop_reason
    hub.publish(methods.TURN_ENDED, ended)


def _is_empty(item: r.Item) -> bool:
    if item["type"] in (r.AGENT_MESSAGE, r.REASONING):
        return not item.get("text")
    return False
