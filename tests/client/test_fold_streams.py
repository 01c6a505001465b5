"""The one conversation fold (openvaala_server/client/view.py) replaying event streams recorded
from a real daemon (tests/client/streams/, made by record_streams.py): streaming deltas, turn
state, usage, plan, pins, compaction, approvals and subagents. No daemon: these run in
milliseconds."""

from __future__ import annotations

import pytest

from openvaala_server.client.view import (
    LOCAL_PREFIX,
    ApprovalsChanged,
    ConversationView,
    ItemDelta,
    Reset,
)
from tests.client.streams import NAMES, Stream, load


def replay(stream: Stream, *, local_notices: bool = True) -> ConversationView:
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq, local_notices=local_notices)
    for note in stream.notes:
        view.apply(note)
    return view


def test_streamed_text_equals_the_completed_message() -> None:
    """Deltas build an agent message and reasoning exactly as the daemon completes them."""
    stream = load("turns")
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq)
    compared = 0
    for note in stream.notes:
        params = note["params"]
        if note["method"] == "item/completed" and params["item"]["type"] in (
            "agent_message",
            "reasoning",
        ):
            session = view.sessions[params["sessionId"]]
            index = session.find(params["item"]["itemId"])
            assert index is not None
            assert session.items[index]["text"] == params["item"]["text"]
            compared += 1
        changes = view.apply(note)
        if note["method"] == "item/delta":
            assert changes and isinstance(changes[0], ItemDelta)
    assert compared >= 4


def test_turn_state_usage_plan_pins_and_compaction() -> None:
    stream = load("turns")
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq)
    root_id = view.root_id
    seen_running = seen_compacting = False
    for note in stream.notes:
        view.apply(note)
        root = view.sessions[root_id]
        if note["method"] == "turn/started":
            assert root.running and root.turn_id == note["params"]["turnId"]
            seen_running = True
        if note["method"] == "turn/ended":
            assert not root.running
        if note["method"] == "compaction/started":
            assert root.compacting
            seen_compacting = True
    root = view.sessions[root_id]
    assert seen_running and seen_compacting and not root.compacting
    assert view.title == "Recorded"
    assert root.status == "idle"
    used = root.usage.get("used")
    assert isinstance(used, int) and used > 0
    assert root.plan is not None
    steps = root.plan["steps"]
    assert isinstance(steps, list)
    assert [s["status"] for s in steps if isinstance(s, dict)] == ["completed", "in_progress"]
    assert len(root.pinned) == 1
    assert root.pinned[0] in {i["itemId"] for i in root.user_messages()}
    types = [i["type"] for i in root.items]
    assert "summary" in types and "tool_result" in types and "reasoning" in types
    assert len(root.user_messages()) == 4


def test_approvals_asked_answered_and_told() -> None:
    stream = load("approvals")
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq)
    asked = []
    for note in stream.notes:
        changes = view.apply(note)
        if note["method"] == "approval/requested":
            approval = view.next_approval()
            assert approval is not None and approval.tool == "shell"
            assert approval.wire["approvalId"] == approval.approval_id
            assert view.sessions[view.root_id].awaiting_approval is False  # status comes next
            asked.append(approval.approval_id)
        if note["method"] == "approval/resolved":
            assert any(isinstance(c, ApprovalsChanged) for c in changes)
            assert note["params"]["approvalId"] not in view.approvals
    assert len(asked) == 2 and not view.approvals
    notices = [i["text"] for i in view.sessions[view.root_id].items if i["type"] == "notice"]
    assert notices[0].startswith("Allowed once · shell")
    assert notices[1].startswith("Denied · shell") and "not this one" in notices[1]
    # The editor bridge shows approvals in a section of its own, not as notices.
    bridge = replay(stream, local_notices=False)
    assert not [i for i in bridge.sessions[bridge.root_id].items if i["type"] == "notice"]


def test_a_subagent_is_a_child_session_with_its_own_items() -> None:
    view = replay(load("subagent"))
    (child,) = view.children(view.root_id)
    assert child.parent_id == view.root_id
    assert not child.running and not view.sessions[view.root_id].running
    outputs = [i.get("output") for i in child.items if i["type"] == "tool_result"]
    assert outputs and "from the child" in str(outputs[0])


@pytest.mark.parametrize("name", NAMES)
def test_replaying_a_stream_again_changes_nothing(name: str) -> None:
    """A replay that overlaps what was folded (a reconnection) is dropped by seq."""
    stream = load(name)
    view = replay(stream)
    version, items = view.version, {s: list(v.items) for s, v in view.sessions.items()}
    for note in stream.notes:
        assert view.apply(note) == []
    assert view.version == version
    assert {s: v.items for s, v in view.sessions.items()} == items


@pytest.mark.parametrize("name", NAMES)
def test_version_counts_every_change_and_a_snapshot_resets(name: str) -> None:
    stream = load(name)
    view = ConversationView.from_snapshot(stream.snapshot, stream.seq, local_notices=False)
    assert view.version == 1
    for note in stream.notes:
        before = view.version
        changed = view.apply(note)
        assert view.version == before + (1 if changed else 0)
    # A resubscription that could not replay sends a snapshot: the view redraws from it.
    before = view.version
    changes = view.apply(
        {
            "method": "conversation/snapshot",
            "params": {
                "conversationId": view.conversation_id,
                "seq": stream.seq,
                "snapshot": stream.snapshot,
            },
        }
    )
    assert changes == [Reset(None)] and view.version == before + 1
    assert not any(
        i["itemId"].startswith(LOCAL_PREFIX) for s in view.sessions.values() for i in s.items
    )
