"""A batch of index writes merged into few statements (`index.merge_statements`) leaves the index
as running every write's statements one after the other does (a property test over random
sequences of the live store's writes: conversations put, renamed, turned, items added, deleted)."""

from __future__ import annotations

import sqlite3
from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store import index as ix

from .helpers import created

CIDS = [new_id() for _ in range(3)]
ROOTS = {cid: new_id() for cid in CIDS}
# (kind, conversation index, a small number used as text / turn / count)
OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "rename", "turn", "items", "delete"]),
        st.integers(0, len(CIDS) - 1),
        st.integers(0, 5),
    ),
    max_size=30,
)


def _meta(cid: str, title: str, turns: int) -> m.ConversationMeta:
    payload = {
        **created(title),
        "conversationId": cid,
        "rootSessionId": ROOTS[cid],
        "type": r.CONVERSATION_CREATED,
    }
    stamp = {"seq": 1, "ts": "2026-01-01T00:00:00.000000Z"}
    meta = m.created_from(cast(r.Record, {**payload, **stamp}))
    for n in range(turns):
        tid = f"{n:032x}"
        m.apply(
            meta,
            {
                "seq": 2,
                "ts": "2026-01-01T00:00:01.000000Z",
                "type": r.TURN_STARTED,
                "turnId": tid,
                "sessionId": meta.root_session_id,
            },
        )
    return meta


def _ops(spec: list[tuple[str, int, int]]) -> list[ix.WriteOp]:
    ops: list[ix.WriteOp] = []
    for kind, index, n in spec:
        cid = CIDS[index]
        if kind == "put":
            ops.append(ix.put_conversation_op(_meta(cid, f"title {n}", 0)))
        elif kind == "rename":
            ops.append(ix.put_conversation_op(_meta(cid, f"renamed {n}", 0), title=True))
        elif kind == "turn":
            ops.append(
                ix.put_conversation_op(_meta(cid, "t", n), turns={f"{n - 1:032x}"}, title=False)
            )
        elif kind == "items":
            texts = [f"text {n} {k}" for k in range(n)] + (["nul \x00 kept"] if n == 5 else [])
            stats = ix.ItemStats(n, texts, f"2026-01-0{n + 1}")
            ops.append(ix.add_items_op(cid, stats))
        else:
            ops.append(ix.delete_conversation_op(cid))
    return ops


def _run(statements: list[ix.Statement]) -> dict[str, list[ix.Row]]:
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        ix.create_schema(db)
        for statement in statements:
            db.executemany(*ix.plan(statement))  # as the live writer runs them
        return ix.dump(db)
    finally:
        db.close()


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_merged_statements_leave_the_index_as_running_them_one_by_one(
    spec: list[tuple[str, int, int]],
) -> None:
    one_by_one = [statement for op in _ops(spec) for statement in op]
    merged = ix.merge_statements(_ops(spec))
    assert _run(merged) == _run(one_by_one)
    assert len(merged) <= len(one_by_one)


def test_item_appends_in_many_conversations_merge_into_two_statements() -> None:
    ops = [ix.add_items_op(cid, ix.ItemStats(1, [f"hello {cid}"], "2026")) for cid in CIDS * 4]
    merged = ix.merge_statements(ops)
    assert [s.sql for s in merged] == [ix.ADD_ITEMS, ix.INSERT_TEXT]
    # One count update per conversation; the 12 texts in one statement (a JSON array).
    assert [len(s.rows) for s in merged] == [3, 12]
    assert ix.plan(merged[1])[0] == ix.INSERT_TEXTS_JSON
