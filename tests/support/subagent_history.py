"""A saved conversation with subagent sessions, written with the store's own writers before a
daemon opens it: what a cold open of a conversation whose subagents are at rest reads
(docs/protocol.md, "Snapshot": their items are paged in by the client that shows them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store


@dataclass(frozen=True)
class Written:
    cid: str
    root: str
    closed: str  # a closed subagent session (close_agent)
    idle: str  # a subagent session whose last turn completed
    closed_texts: list[str]  # the closed session's messages, in order
    idle_texts: list[str]


def _turn(sid: str, tid: str, texts: list[str]) -> list[dict[str, Any]]:
    items = []
    for n, text in enumerate(texts):
        items.append(
            {
                "itemId": new_id(),
                "type": r.USER_MESSAGE if n % 2 == 0 else r.AGENT_MESSAGE,
                "sessionId": sid,
                "turnId": tid,
                "createdAt": r.utc_now(),
                "status": r.COMPLETED,
                "text": text,
                **({"origin": "user"} if n % 2 == 0 else {}),
            }
        )
    return items


async def write(
    home: Path, cwd: Path, model: str, *, closed_items: int = 250, more_closed: int = 0
) -> Written:
    """A root session of one turn, a closed subagent of `closed_items` items and an idle one of
    two, and `more_closed` closed ones of two; every turn ended."""
    store = await Store.open(DataDir(home))
    cid, root, closed, idle = new_id(), new_id(), new_id(), new_id()
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": model,
            "title": "With subagents",
            "titleSource": "user",
            "rootSessionId": root,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    texts = {
        root: ["ROOT-ASK", "ROOT-ANSWER"],
        closed: [f"CLOSED-{n:04d}" for n in range(closed_items)],
        idle: ["IDLE-TASK", "IDLE-ANSWER"],
    }
    more = [new_id() for _ in range(more_closed)]
    texts.update({sid: ["TASK", "ANSWER"] for sid in more})
    meta: list[dict[str, Any]] = []
    for sid in (closed, idle, *more):
        meta.append(
            {
                "type": r.SESSION_CREATED,
                "sessionId": sid,
                "parentSessionId": root,
                "agent": "default",
                "model": model,
                "title": "closed one" if sid == closed else "idle one",
            }
        )
    for sid, said in texts.items():
        tid = new_id()
        meta.append({"type": r.TURN_STARTED, "sessionId": sid, "turnId": tid})
        meta.append({"type": r.TURN_ENDED, "sessionId": sid, "turnId": tid, "status": "completed"})
        await store.append_metadata(cid, meta)
        meta = []
        await store.append_items(cid, sid, cast("list[r.Item]", _turn(sid, tid, said)))
    await store.append_metadata(
        cid, [{"type": r.SESSION_CLOSED, "sessionId": sid} for sid in (closed, *more)]
    )
    await store.close()
    return Written(cid, root, closed, idle, texts[closed], texts[idle])
