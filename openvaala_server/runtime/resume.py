"""Resuming a turn a crash cut (`turn/resume`, docs/protocol.md).

Recovery (runtime/manager.py `_recover`) already closed the cut turn: its unfinished tool calls
have interrupted results and a `server_stopped` notice says why it ended. Resuming starts a new
turn with no new message: a `resumed` notice tells the model to carry on from the last saved item,
and nothing of the cut turn is run again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain import recovery
from openvaala_server.protocol import payloads as wire

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager


async def resume(runtime: ConversationManager, cid: str, sid: str | None) -> wire.ResumeResult:
    conv = await runtime.open(cid)
    session = conv.session(sid)
    await conv.ensure_context()
    if runtime.shutting_down:
        raise errors.Busy("the server is shutting down")
    if session.turn is not None or session.compacting:
        raise errors.TurnRunning("a turn is running: nothing to resume")
    meta = conv.meta
    last = None
    if meta is not None:
        smeta = meta.sessions.get(session.session_id)
        last = meta.turns.get(smeta.last_turn_id) if smeta and smeta.last_turn_id else None
    if last is None or not recovery.was_cut(last.status, last.error):
        raise errors.NotIdle(
            "the last turn of this session was not cut by a server stop: nothing to resume"
        )
    if not await conv.check_cwd():
        raise errors.CwdMissing(f"the working directory {conv.cwd} no longer exists", cwd=conv.cwd)
    runtime.require_agent(session.agent)
    runtime.model_config(session.model)
    turn = runtime.start_turn(conv, session, [])
    await turn.announced.wait()
    return {"turnId": turn.turn_id, "resumedTurnId": last.turn_id}
