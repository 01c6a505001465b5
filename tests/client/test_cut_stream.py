"""A reply cut by a crash is kept after a resubscription; one the live daemon withdrew or
replaced while the client was away is not brought back (no duplicate, no resurrected reply)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from openvaala_server.client.cut_stream import keep_cut_stream

if TYPE_CHECKING:
    from openvaala_server.domain.records import Item


def _item(item_id: str, type_: str, text: str, status: str = "completed", **more: Any) -> Item:
    fields = {"itemId": item_id, "type": type_, "text": text, "status": status, "turnId": "T"}
    return cast("Item", {**fields, **more})


USER = _item("u1", "user_message", "hi")
STREAMING = _item("a1", "agent_message", "Hel", "in_progress")


def _ids(items: list[Item]) -> list[str]:
    return [f"{i['itemId']}:{i['status']}" for i in items]


def test_a_crash_keeps_the_streamed_reply_interrupted() -> None:
    notice = _item("n1", "notice", "stopped", kind="server_stopped")
    kept = keep_cut_stream([USER, STREAMING], "T", [USER, notice], None)
    assert _ids(kept) == ["u1:completed", "a1:interrupted", "n1:completed"]


def test_a_retried_attempt_finished_while_away_is_not_shown_twice() -> None:
    # The live daemon withdrew a1 (item/discarded: its attempt failed) and streamed the reply
    # again as a2; the client missed both while disconnected.
    again = _item("a2", "agent_message", "Hello")
    assert _ids(keep_cut_stream([USER, STREAMING], "T", [USER, again], None)) == [
        "u1:completed",
        "a2:completed",
    ]


def test_a_reply_rewound_while_away_stays_gone() -> None:
    assert _ids(keep_cut_stream([USER, STREAMING], "T", [], None)) == []


def test_a_second_crash_keeps_the_reply_the_first_one_cut() -> None:
    # After the first crash only this client has a1; the user asked again (u2) and a second
    # crash cut that reply (a2) too: the third daemon's snapshot has neither, and both stay.
    n1 = _item("n1", "notice", "stopped", kind="server_stopped")
    first = keep_cut_stream([USER, STREAMING], "T", [USER, n1], None)
    u2 = _item("u2", "user_message", "again", turnId="T2")
    a2 = _item("a2", "agent_message", "Wor", "in_progress", turnId="T2")
    n2 = _item("n2", "notice", "stopped", kind="server_stopped", turnId="T2")
    second = keep_cut_stream([*first, u2, a2], "T2", [USER, n1, u2, n2], None, {"a1"})
    assert _ids(second) == [
        "u1:completed",
        "a1:interrupted",
        "n1:completed",
        "u2:completed",
        "a2:interrupted",
        "n2:completed",
    ]
    # And a plain reconnect later (no turn running) keeps it as well.
    later = keep_cut_stream(second, None, [USER, n1, u2, n2], None, {"a1", "a2"})
    assert _ids(later) == _ids(second)
