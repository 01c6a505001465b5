"""The turns of a long conversation's folded metadata are decoded when first asked for
(domain/meta.py `Turns`; docs/storage.md, "The folded metadata"): what an open asks — the
running turns, each session's last, how many there are — comes without decoding them all, and
a turn started or ended since, then the whole list, is what a fold of the whole journal
gives."""

from __future__ import annotations

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.store import Store
from tests.server.store.test_folded import full_fold, long_conversation


def test_what_an_open_asks_of_lazy_turns_decodes_none_of_the_rest() -> None:
    decoded: list[int] = []
    rows = [m.TurnMeta(f"t{n}", "s", "ts", status="completed") for n in range(5)]
    running = m.TurnMeta("t5", "s", "ts")

    def rest() -> list[m.TurnMeta]:
        decoded.append(1)
        return [*(m.TurnMeta(t.turn_id, "s", "ts", status="completed") for t in rows), running]

    turns = m.Turns([rows[2], running], rest, 6)
    assert [t.turn_id for t in turns.running()] == ["t5"]
    assert turns.last() is running and turns.get("t2") is rows[2] and len(turns) == 6
    turns["t6"] = m.TurnMeta("t6", "s", "ts")  # started after the open
    running.status = "completed"
    last = turns.last()
    assert last is not None and last.turn_id == "t6" and len(turns) == 7
    assert decoded == []
    # Anything else decodes the rest once: in order, the started one last, the eager objects
    # (and the change made to them) kept.
    assert list(turns) == [f"t{n}" for n in range(7)]
    assert turns["t5"] is running and turns["t5"].status == "completed"
    assert turns.get("t0") is not None and decoded == [1]


async def test_a_reopened_long_history_with_turns_since_equals_the_full_fold(
    store: Store,
) -> None:
    cid, root = await long_conversation(store)
    await store.load_meta(cid)  # writes the folded snapshot
    opened = await store.load_meta(cid)
    assert opened is not None
    [cut] = opened.running_turns()
    later = new_id()
    for record in (
        {"type": r.TURN_ENDED, "sessionId": root, "turnId": cut.turn_id, "status": "completed"},
        {"type": r.TURN_STARTED, "sessionId": root, "turnId": later},
    ):
        [stamped] = await store.append_metadata(cid, [record])
        m.apply(opened, stamped)
    assert opened.last_turn is not None and opened.last_turn.turn_id == later
    assert m.session_status(opened, root) == "running"
    assert opened == full_fold(store, cid)
    assert list(opened.turns)[-2:] == [cut.turn_id, later]
