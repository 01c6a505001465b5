"""Folding the records of conversation/setAgent and conversation/setCwd (a rebuilt index and a
reopened conversation see the same agent and directory as the live one)."""

from __future__ import annotations

from openvaala_server.domain import records as r
from openvaala_server.domain.meta import fold
from tests.support.json import j

ROOT, CHILD = "a" * 32, "b" * 32
CREATED: r.Record = {
    "type": r.CONVERSATION_CREATED,
    "ts": "t0",
    "conversationId": "c" * 32,
    "cwd": "/old",
    "agent": "coder",
    "model": "demo",
    "title": "x",
    "rootSessionId": ROOT,
}


def test_set_agent_and_cwd_are_folded() -> None:
    meta = fold(
        [
            CREATED,
            {"type": r.SESSION_CREATED, "ts": "t1", "sessionId": CHILD, "parentSessionId": ROOT},
            {"type": r.SESSION_AGENT_SET, "ts": "t2", "sessionId": ROOT, "agent": "default"},
            {"type": r.CONVERSATION_CWD_SET, "ts": "t3", "cwd": "/new"},
        ]
    )
    assert (meta.agent, meta.sessions[ROOT].agent, meta.sessions[CHILD].agent) == (
        "default",
        "default",
        "coder",
    )
    assert meta.cwd == "/new"
    assert meta.updated_at == "t3"
    assert meta.unknown_records == 0


def test_damaged_records_change_nothing_and_are_counted() -> None:
    meta = fold(
        [
            CREATED,
            {"type": r.SESSION_AGENT_SET, "ts": "t1", "sessionId": ROOT, "agent": ""},
            {"type": r.SESSION_AGENT_SET, "ts": "t2", "sessionId": "f" * 32, "agent": "x"},
            j({"type": r.CONVERSATION_CWD_SET, "ts": "t3", "cwd": 7}),
        ]
    )
    assert (meta.agent, meta.cwd, meta.unknown_records) == ("coder", "/old", 3)
