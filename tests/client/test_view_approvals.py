"""Approvals in the pure conversation view: asked, answered here or elsewhere, one after another."""

from __future__ import annotations

from typing import Any

from openvaala_server.client.view import ApprovalsChanged, ItemAdded, StatusChanged
from openvaala_tui import format as fmt
from tests.client.test_view import CHILD, ROOT, loaded, note, snapshot


def requested(seq: int, approval_id: str, session: str = ROOT, **fields: Any) -> dict[str, Any]:
    params = {
        "sessionId": session,
        "approvalId": approval_id,
        "tool": "shell",
        "summary": "echo hi",
        "arguments": {"command": "echo hi"},
        "reason": "approval is set to always for this agent",
        "agent": "default",
        **fields,
    }
    return note("approval/requested", seq, **params)


def resolved(seq: int, approval_id: str, decision: str, **fields: Any) -> dict[str, Any]:
    return note(
        "approval/resolved",
        seq,
        sessionId=ROOT,
        approvalId=approval_id,
        decision=decision,
        **fields,
    )


def waiting(seq: int, session: str = ROOT, status: str = "awaiting_approval") -> dict[str, Any]:
    return note("session/updated", seq, session={"sessionId": session, "status": status})


def test_a_request_waits_and_the_session_says_so() -> None:
    view = loaded()
    view.apply(note("turn/started", 11, sessionId=ROOT, turnId="t1"))
    assert view.apply(requested(12, "ap1")) == [ApprovalsChanged(ROOT)]
    assert StatusChanged(ROOT) in view.apply(waiting(13))
    root = view.root
    assert root is not None
    assert root.running and root.awaiting_approval
    assert fmt.turn_state(root.status, root.running, root.compacting) == (
        "waiting for your approval"
    )
    shown = view.next_approval()
    assert shown is not None
    assert (shown.approval_id, shown.tool, shown.summary) == ("ap1", "shell", "echo hi")
    assert shown.reason == "approval is set to always for this agent"
    assert view.agent_of(shown) is None  # the root agent is not named


def test_awaiting_approval_counts_as_running_even_without_a_turn_id() -> None:
    """A session/updated can say so before the turn's own notification is folded."""
    view = loaded()
    view.apply(waiting(11))
    assert view.root is not None and view.root.running


def test_answered_here_the_next_one_shows_and_the_outcome_is_written() -> None:
    view = loaded()
    view.apply(requested(11, "ap1"))
    view.apply(requested(12, "ap2", summary="rm -rf build", arguments={"command": "rm -rf build"}))
    first = view.next_approval()
    assert first is not None and first.approval_id == "ap1"
    view.answered_here["ap1"] = "allow"
    second = view.next_approval()
    assert second is not None and second.summary == "rm -rf build"  # answered one after another
    changes = view.apply(resolved(13, "ap1", "allow"))
    assert changes[0] == ApprovalsChanged(ROOT)
    added = [c.item for c in changes if isinstance(c, ItemAdded)]
    assert [i["text"] for i in added] == ["Allowed once · shell: echo hi"]
    assert "ap1" not in view.approvals and "ap1" not in view.answered_here
    view.answered_here["ap2"] = "deny"
    changes = view.apply(resolved(14, "ap2", "deny", message="not the build dir"))
    added = [c.item for c in changes if isinstance(c, ItemAdded)]
    assert added[0]["text"] == "Denied · shell: rm -rf build · “not the build dir”"
    assert added[0]["kind"] == "error"
    assert view.next_approval() is None and not view.approvals
    root = view.root
    assert root is not None and [i["itemId"] for i in root.items] == [
        "local-approval-ap1",
        "local-approval-ap2",
    ]


def test_answered_from_another_client_says_so() -> None:
    view = loaded()
    view.apply(requested(11, "ap1"))
    changes = view.apply(resolved(12, "ap1", "allow_conversation"))
    added = [c.item for c in changes if isinstance(c, ItemAdded)]
    assert added[0]["text"] == (
        "Allowed for this conversation · shell: echo hi (answered from another client)"
    )
    assert view.next_approval() is None


def test_another_client_won_with_a_different_answer() -> None:
    view = loaded()
    view.apply(requested(11, "ap1"))
    view.answered_here["ap1"] = "allow"  # sent, but another client's deny came first
    changes = view.apply(resolved(12, "ap1", "deny"))
    added = [c.item for c in changes if isinstance(c, ItemAdded)]
    assert added[0]["text"] == "Denied · shell: echo hi (answered from another client)"


def test_a_subagents_request_names_it_and_its_outcome_goes_to_its_transcript() -> None:
    view = loaded()
    child = {"sessionId": CHILD, "parentSessionId": ROOT, "agent": "helper", "status": "running"}
    view.apply(note("session/started", 11, session=child))
    view.apply(requested(12, "ap1", session=CHILD, agent="helper"))
    shown = view.next_approval()
    assert shown is not None and view.agent_of(shown) == "helper"
    changes = view.apply(
        note("approval/resolved", 13, sessionId=CHILD, approvalId="ap1", decision="deny")
    )
    assert ItemAdded in {type(c) for c in changes}
    assert [i["itemId"] for i in view.sessions[CHILD].items] == ["local-approval-ap1"]
    assert view.root is not None and view.root.items == []


def test_the_snapshot_brings_pending_approvals() -> None:
    view = loaded()
    view.answered_here["gone"] = "allow"
    shot = snapshot(status="awaiting_approval", turn={"turnId": "t1", "items": []})
    pending = {
        "conversationId": "c" * 32,
        "sessionId": ROOT,
        "approvalId": "ap9",
        "tool": "write_file",
        "summary": "/etc/hosts",
        "arguments": {"path": "/etc/hosts"},
        "reason": "outside the workspace",
        "agent": "default",
    }
    view.apply(
        {
            "method": "conversation/snapshot",
            "params": {
                "conversationId": "c" * 32,
                "seq": 50,
                "snapshot": {**shot, "approvals": [pending]},
            },
        }
    )
    shown = view.next_approval()
    assert shown is not None and (shown.tool, shown.summary) == ("write_file", "/etc/hosts")
    assert view.answered_here == {}
    assert view.root is not None and view.root.awaiting_approval


def test_an_ended_turn_leaves_no_approval_behind() -> None:
    view = loaded()
    view.apply(note("turn/started", 11, sessionId=ROOT, turnId="t1"))
    view.apply(requested(12, "ap1"))
    changes = view.apply(note("turn/ended", 13, sessionId=ROOT, turnId="t1", status="interrupted"))
    assert ApprovalsChanged(ROOT) in changes
    assert view.next_approval() is None
    assert view.root is not None and not view.root.running


def test_a_resolution_already_in_the_snapshot_is_ignored() -> None:
    view = loaded()
    view.apply(requested(11, "ap1"))
    assert view.apply(resolved(11, "ap1", "allow")) == []  # seq already folded
    assert view.next_approval() is not None
