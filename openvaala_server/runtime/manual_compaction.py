"""Compaction by hand (conversation/compact): the root agent's history, only while nothing
runs or waits (docs/design.md "Compaction, one decision", "Runtime split by responsibility")."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

import anyio

from openvaala_server import errors
from openvaala_server.domain.compaction_policy import decide
from openvaala_server.runtime import early
from openvaala_server.runtime.compaction import compact
from openvaala_server.runtime.conversation import LiveConversation
from openvaala_server.runtime.ports import Turns
from openvaala_server.structured import ActivityCancelled

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads as p
    from openvaala_server.runtime.inputs import Inputs


class Owner(Turns, Protocol):
    """What compaction by hand uses of the conversation manager."""

    inputs: Inputs

    async def open(self, cid: str) -> LiveConversation: ...


async def compact_now(runtime: Owner, cid: str) -> p.CompactResult:
    """Manual compaction of the root agent's history, only while nothing runs or waits."""
    conv = await runtime.open(cid)
    await conv.ensure_context()  # what is summarized: the context (runtime/compaction.py)
    for session in conv.sessions.values():
        if session.turn is not None or session.compacting:
            raise errors.NotIdle("a turn is running: compact when it has finished")
        if session.inbox.waiting:
            raise errors.NotIdle("input is waiting: compact when it has been handled")
    root = conv.root
    if conv.meta is None:
        return {"compacted": False, "reason": "the conversation has no messages yet"}
    root.compacting = True
    early.cancel(root)
    conv.publish_session(root)
    # By hand, everything but the latest step is summarized. A task, so turn/interrupt
    # can stop it like a turn.
    # An activity of the runtime's supervisor, so shutdown cancels and waits for it too.
    decision = decide("manual", early.context_state(conv, root))
    task = runtime.tasks.start_job(
        partial(compact, conv, root, decision.reason, keep_ratio=decision.keep_ratio),
        f"compaction-{cid}",
    )
    root.compaction_task = task
    try:
        summary = await task.result()
    except ActivityCancelled:
        return {"compacted": False, "reason": "interrupted"}
    except anyio.get_cancelled_exc_class():
        task.cancel()  # this request itself was cancelled: stop the compaction too
        raise
    finally:
        root.compacting = False
        root.compaction_task = None
        conv.publish_session(root)
        runtime.inputs.start_waiting(conv, root)
    if summary is None:
        return {"compacted": False, "reason": "the history is too short to compact"}
    return {"compacted": True, "summaryItemId": summary["itemId"]}
