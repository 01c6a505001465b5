"""Folding metadata.jsonl: what a conversation list shows comes from the root agent."""

from __future__ import annotations

from collections.abc import Mapping

from openvaala_server.domain import records as r
from openvaala_server.domain.meta import fold, session_status

ROOT, CHILD = "a" * 32, "b" * 32


def _records() -> list[Mapping[str, object]]:
    created: dict[str, object] = {
        "type": r.CONVERSATION_CREATED,
        "ts": "t0",
        "conversationId": "c" * 32,
        "cwd": "/w",
        "agent": "default",
        "model": "demo",
        "title": "x",
        "rootSessionId": ROOT,
    }
    return [
        created,
        {"type": r.TURN_STARTED, "ts": "t1", "sessionId": ROOT, "turnId": "1" * 32},
        {"type": r.SESSION_CREATED, "ts": "t2", "sessionId": CHILD, "parentSessionId": ROOT},
        {"type": r.TURN_STARTED, "ts": "t3", "sessionId": CHILD, "turnId": "2" * 32},
        {
            "type": r.TURN_ENDED,
            "ts": "t4",
            "sessionId": ROOT,
            "turnId": "1" * 32,
            "status": "completed",
        },
    ]


def test_the_list_status_is_the_root_agents_not_a_subagents() -> None:
    meta = fold(_records())
    assert meta.last_status == "completed"
    assert session_status(meta, CHILD) == "running"
    assert [t.turn_id for t in meta.running_turns()] == ["2" * 32]


def test_a_damaged_record_is_counted_not_fatal() -> None:
    meta = fold([*_records(), {"type": r.TURN_STARTED, "ts": "t5"}, {"type": "future_thing"}])
    assert meta.unknown_records == 2
    assert meta.updated_at == "t5"
