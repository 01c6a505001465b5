"""The pure conversation view: snapshot + notifications folded into what the screen shows."""

from __future__ import annotations

from typing import Any, cast

from openvaala_server.client.view import (
    ITEM_BUDGET,
    ConversationView,
    InboxChanged,
    Item,
    ItemAdded,
    ItemDelta,
    ItemRemoved,
    ItemUpdated,
    Reset,
    StatusChanged,
)
from openvaala_server.protocol.display import format_tokens
from openvaala_server.protocol.payloads import RetryScheduledNote, Usage
from openvaala_tui import format as fmt

CID = "c" * 32
ROOT = "a" * 32
CHILD = "b" * 32


def item(item_id: str, type_: str = "agent_message", **fields: Any) -> Item:
    wire = {"itemId": item_id, "type": type_, "sessionId": ROOT, "status": "completed", **fields}
    return cast(Item, wire)


def snapshot(**root: Any) -> dict[str, Any]:
    session: dict[str, Any] = {
        "sessionId": ROOT,
        "parentSessionId": None,
        "agent": "default",
        "model": "demo",
        "status": "idle",
        "title": "t",
        "depth": 0,
        "items": [],
        "hasMore": False,
        "turn": None,
        "inbox": [],
        "usage": {"used": 10, "contextWindow": 1000, "threshold": 800, "source": "estimated"},
    }
    session.update(root)
    return {
        "conversation": {"conversationId": CID, "title": "Hello", "rootSessionId": ROOT},
        "sessions": [session],
    }


def note(method: str, seq: int, **params: Any) -> dict[str, Any]:
    return {"method": method, "params": {"conversationId": CID, "seq": seq, **params}}


def loaded(**root: Any) -> ConversationView:
    view = ConversationView()
    assert view.load(snapshot(**root), 10) == [Reset(None)]
    return view


def test_snapshot_includes_the_running_turns_items() -> None:
    view = loaded(
        items=[item("1", "user_message", text="hi")],
        turn={"turnId": "t1", "items": [item("2", text="Hel", status="in_progress")]},
        hasMore=True,
    )
    root = view.root
    assert root is not None and root.running and root.has_more
    assert [i["itemId"] for i in root.items] == ["1", "2"]
    assert view.title == "Hello"


def test_stream_delta_then_complete_updates_in_place() -> None:
    view = loaded()
    started = note(
        "item/started",
        11,
        sessionId=ROOT,
        turnId="t",
        item=item("x", text="", status="in_progress"),
    )
    assert isinstance(view.apply(started)[0], ItemAdded)
    changes = view.apply(
        note("item/delta", 12, sessionId=ROOT, itemId="x", field="text", delta="Hi ")
    )
    assert changes == [ItemDelta(ROOT, "x", "text", "Hi ")]
    view.apply(note("item/delta", 13, sessionId=ROOT, itemId="x", field="text", delta="there"))
    root = view.root
    assert root is not None and root.items[-1]["text"] == "Hi there"
    final = item("x", text="Hi there!")
    assert view.apply(note("item/completed", 14, sessionId=ROOT, item=final)) == [
        ItemUpdated(ROOT, final)
    ]
    assert len(root.items) == 1 and root.items[0]["text"] == "Hi there!"


def test_old_and_duplicate_seqs_are_ignored() -> None:
    view = loaded()
    assert view.apply(note("item/completed", 10, sessionId=ROOT, item=item("x"))) == []
    assert view.apply(note("item/completed", 11, sessionId=ROOT, item=item("x")))
    assert view.apply(note("item/completed", 11, sessionId=ROOT, item=item("y"))) == []


def test_discarded_item_is_removed() -> None:
    view = loaded()
    view.apply(note("item/started", 11, sessionId=ROOT, item=item("x", status="in_progress")))
    assert view.apply(note("item/discarded", 12, sessionId=ROOT, itemId="x")) == [
        ItemRemoved(ROOT, "x")
    ]
    assert view.root is not None and view.root.items == []
    assert view.apply(note("item/discarded", 13, sessionId=ROOT, itemId="nope")) == []


def test_turn_lifecycle_retry_and_failure_notice() -> None:
    view = loaded()
    view.apply(note("turn/started", 11, sessionId=ROOT, turnId="t1"))
    root = view.root
    assert root is not None and root.running
    retry = {"sessionId": ROOT, "attempt": 3, "maxAttempts": 10, "delaySeconds": 4.0}
    view.apply(note("retry/scheduled", 12, **retry))
    assert (
        root.retry is not None
        and fmt.retry_text(cast("RetryScheduledNote", root.retry)) == "retrying 3/10 in 4 s"
    )
    view.apply(note("item/started", 13, sessionId=ROOT, item=item("x", status="in_progress")))
    assert root.retry is None
    error = {"kind": "provider_unavailable", "message": "down"}
    changes = view.apply(
        note("turn/ended", 14, sessionId=ROOT, turnId="t1", status="failed", error=error)
    )
    assert not root.running
    added = [c for c in changes if isinstance(c, ItemAdded)]
    assert added and "down" in added[0].item["text"] and added[0].item["kind"] == "error"


def test_a_failed_turn_shows_the_daemons_notice_once() -> None:
    view = loaded()
    view.apply(note("turn/started", 11, sessionId=ROOT, turnId="t1"))
    kept = item("n1", "notice", kind="turn_failed", turnId="t1", text="The turn failed: down")
    view.apply(note("item/completed", 12, sessionId=ROOT, item=kept))
    error = {"kind": "provider_unavailable", "message": "down"}
    changes = view.apply(
        note("turn/ended", 13, sessionId=ROOT, turnId="t1", status="failed", error=error)
    )
    root = view.root
    assert root is not None and root.last_error == error
    assert not [c for c in changes if isinstance(c, ItemAdded)]  # no second, local notice
    assert [i["itemId"] for i in root.items] == ["n1"]
    # The status is the daemon's word, which follows the turn's end.
    view.apply(note("session/updated", 14, session={"sessionId": ROOT, "status": "failed"}))
    assert root.status == "failed"


def test_inbox_usage_and_connection() -> None:
    view = loaded()
    inputs = [{"inputId": "i1", "text": "later", "mode": "queue", "origin": "user"}]
    assert view.apply(note("inbox/updated", 11, sessionId=ROOT, inputs=inputs)) == [
        InboxChanged(ROOT)
    ]
    assert view.root is not None and view.root.inbox == inputs
    usage = {"used": 700, "contextWindow": 1000, "threshold": 800, "source": "reported"}
    view.apply(note("usage/updated", 12, sessionId=ROOT, usage=usage))
    assert fmt.meter_level(cast("Usage", view.root.usage)) == "warn"
    changes = view.apply({"method": "client/connection", "params": {"state": "reconnecting"}})
    assert changes == [StatusChanged(None)] and view.connection == "reconnecting"


def test_a_subagent_session_appears_and_gets_its_own_items() -> None:
    view = loaded()
    child = {"sessionId": CHILD, "parentSessionId": ROOT, "agent": "helper", "status": "running"}
    view.apply(note("session/started", 11, session=child))
    view.apply(note("item/completed", 12, sessionId=CHILD, item={**item("c1"), "sessionId": CHILD}))
    assert view.root_id == ROOT
    assert [i["itemId"] for i in view.sessions[CHILD].items] == ["c1"]
    assert view.root is not None and view.root.items == []


def test_resync_snapshot_replaces_everything() -> None:
    view = loaded(items=[item("old")])
    fresh = snapshot(items=[item("new")])
    changes = view.apply(
        {
            "method": "conversation/snapshot",
            "params": {"conversationId": CID, "seq": 99, "snapshot": fresh},
        }
    )
    assert changes == [Reset(None)]
    assert view.seq == 99 and view.root is not None
    assert [i["itemId"] for i in view.root.items] == ["new"]


def test_prepend_older_page_and_trim_past_budget() -> None:
    view = loaded(items=[item("3")], hasMore=True)
    fresh = view.prepend(ROOT, [item("1"), item("2"), item("3")], has_more=False)
    root = view.root
    assert root is not None
    assert [i["itemId"] for i in fresh] == ["1", "2"]
    assert [i["itemId"] for i in root.items] == ["1", "2", "3"] and not root.has_more
    seq = 11
    for n in range(ITEM_BUDGET):
        view.apply(note("item/completed", seq, sessionId=ROOT, item=item(f"n{n}")))
        seq += 1
    assert len(root.items) == ITEM_BUDGET and root.has_more
    assert root.items[0]["itemId"] == "n0"  # "1", "2", "3" dropped


def test_user_messages_for_rewind_exclude_subagent_reports() -> None:
    view = loaded(
        items=[
            item("u1", "user_message", text="first"),
            item("s1", "user_message", text="report", origin="subagent"),
            item("a1", text="answer"),
        ]
    )
    assert view.root is not None
    assert [m["itemId"] for m in view.root.user_messages()] == ["u1"]


def test_formatting_helpers() -> None:
    usage: Any = {"used": 950, "contextWindow": 1000, "threshold": 800, "source": "estimated"}
    assert fmt.meter_level(usage) == "full"
    assert fmt.meter(usage).endswith("~95%")
    assert "950 of 1,000 tokens" in fmt.context_report(usage)
    assert "compaction at 800" in fmt.context_report(usage)
    assert fmt.meter_level(cast("Usage", {})) == "unknown"
    call: Item = {"type": "tool_call", "name": "shell", "arguments": {"command": "ls -la"}}
    assert fmt.tool_command(call) == "ls -la"
    assert fmt.tool_status(call, None) == "pending"
    assert fmt.tool_status(call, {"status": "in_progress"}) == "running"
    assert fmt.tool_status(call, {"status": "completed", "isError": True}) == "error"
    assert fmt.tool_status(call, {"status": "interrupted"}) == "interrupted"
    assert format_tokens(12_345) == "12k"
