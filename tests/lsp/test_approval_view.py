"""Pending approvals in the transcript fold and its Markdown, and the editor's approval option,
without processes."""

from __future__ import annotations

from typing import Any

from openvaala_lsp.approvals import ask_mode, prompt_text
from openvaala_lsp.documents import _lenses
from openvaala_lsp.progress import _activity
from openvaala_lsp.render import render
from openvaala_server.client.view import ConversationView

CID, ROOT, CHILD = "c" * 32, "a" * 32, "b" * 32


def _request(aid: str, sid: str, agent: str, seq: int) -> dict[str, Any]:
    return {
        "conversationId": CID,
        "seq": seq,
        "sessionId": sid,
        "approvalId": aid * 32,
        "tool": "shell",
        "summary": f"echo {agent}",
        "arguments": {"command": f"echo {agent}"},
        "reason": 'approval = "always"',
        "agent": agent,
        "grantScope": f"shell: exactly the command `echo {agent}`; nothing else",
    }


def _view() -> ConversationView:
    session: dict[str, Any] = {
        "parentSessionId": None,
        "agent": "default",
        "model": "demo",
        "items": [],
    }
    snapshot = {
        "conversation": {
            "conversationId": CID,
            "title": "Demo",
            "cwd": "/w",
            "rootSessionId": ROOT,
        },
        "sessions": [
            {**session, "sessionId": ROOT, "status": "awaiting_approval"},
            {
                **session,
                "sessionId": CHILD,
                "parentSessionId": ROOT,
                "agent": "worker",
                "status": "running",
            },
        ],
        "approvals": [_request("1", ROOT, "default", 5)],
    }
    return ConversationView.from_snapshot(snapshot, seq=10, local_notices=False)


def test_pending_approvals_fold_from_snapshot_and_events() -> None:
    view = _view()
    assert list(view.approvals) == ["1" * 32]
    assert view.fold("approval/requested", _request("2", CHILD, "worker", 11))
    assert list(view.approvals) == ["1" * 32, "2" * 32]
    resolved = {"conversationId": CID, "seq": 12, "approvalId": "1" * 32, "decision": "deny"}
    assert view.fold("approval/resolved", resolved)
    assert list(view.approvals) == ["2" * 32]
    # Already seen (an old seq), and an unknown id: nothing changes.
    assert not view.fold("approval/resolved", {**resolved, "approvalId": "2" * 32, "seq": 12})
    assert not view.fold("approval/resolved", {**resolved, "approvalId": "9" * 32, "seq": 13})


def test_transcript_shows_what_waits_with_answer_lenses() -> None:
    view = _view()
    view.fold("approval/requested", _request("2", CHILD, "worker", 11))
    root = render(view)
    lines = root.text.splitlines()
    assert lines[-1].startswith("> **awaiting approval**")
    assert "## Awaiting approval" in lines
    assert "### ⚠ default wants to use shell" in lines
    assert "### ⚠ worker wants to use shell" in lines  # the root shows its subagents' too
    assert "echo default" in root.text and '_approval = "always"_' in lines
    anchors = [a for a in root.anchors if a.kind == "approval"]
    assert [a.approval_id for a in anchors] == ["1" * 32, "2" * 32]
    assert lines[anchors[0].line] == "### ⚠ default wants to use shell"
    lenses = _lenses(anchors[0])
    assert [lens.command.title for lens in lenses if lens.command] == [
        "Allow once",
        "Allow for this conversation: shell: exactly the command `echo default`; nothing else",
        "Deny",
    ]
    assert [lens.command.arguments for lens in lenses if lens.command][1] == [
        {"conversationId": CID, "approvalId": "1" * 32, "decision": "allow_conversation"}
    ]
    # A subagent's transcript shows only its own.
    child = render(view, CHILD).text
    assert "worker wants to use shell" in child and "default wants" not in child


def test_prompt_text_names_agent_summary_and_reason() -> None:
    text = prompt_text(_request("1", CHILD, "worker", 1))
    assert text == 'OpenVaala: worker wants to use shell: echo worker\napproval = "always"'


def test_approval_option_from_initialization_options() -> None:
    assert ask_mode(None) == ("prompt", None)
    assert ask_mode({"approvals": "plugin"}) == ("plugin", None)
    mode, warning = ask_mode({"approvals": "popup"})
    assert mode == "prompt" and warning and "'popup'" in warning and "prompt, plugin" in warning
    mode, warning = ask_mode({"approval": "plugin"})
    assert mode == "prompt" and warning and "approval" in warning
    mode, warning = ask_mode(["plugin"])
    assert mode == "prompt" and warning and "must be an object" in warning


def test_progress_says_what_the_turn_waits_for() -> None:
    assert _activity("approval/requested", _request("1", ROOT, "default", 1)) == (
        "awaiting approval: echo default"
    )
    assert _activity("approval/resolved", {"decision": "deny"}) == "denied"
    assert _activity("approval/resolved", {"decision": "allow_conversation"}) == (
        "allowed, running…"
    )
