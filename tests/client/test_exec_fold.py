"""`openvaala exec` reads the conversation off the one shared fold (`ConversationView`): the
recorded daemon streams (tests/client/streams/) replayed through its `TurnFollower` print the
followed turns' answers, say each tool call on stderr, and end when the conversation is quiet
(a subagent's report included). No daemon: these run in milliseconds."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest

from openvaala_server.client.view import ConversationView
from openvaala_server.exec import TurnFollower
from tests.client.streams import NAMES, Stream, load


def _inputs(stream: Stream) -> list[str]:
    """The ids of the root's user messages, in the order they were sent."""
    root = stream.snapshot["conversation"]["rootSessionId"]
    return [
        n["params"]["item"]["inputId"]
        for n in stream.notes
        if n["method"] == "item/completed"
        and n["params"]["sessionId"] == root
        and n["params"]["item"]["type"] == "user_message"
    ]


def _answers(stream: Stream, from_input: str) -> list[str]:
    """The root's completed agent messages, from the turn that took `from_input` on."""
    root = stream.snapshot["conversation"]["rootSessionId"]
    answers: list[str] = []
    following = False
    for note in stream.notes:
        item: dict[str, Any] = note["params"].get("item") or {}
        if note["method"] != "item/completed" or note["params"]["sessionId"] != root:
            continue
        following = following or item.get("inputId") == from_input
        if following and item["type"] == "agent_message":
            answers.append(item["text"])
    return answers


def follow(stream: Stream, input_id: str, *, json_lines: bool = False) -> TurnFollower:
    follower = TurnFollower(
        input_id=input_id,
        view=ConversationView.from_snapshot(stream.snapshot, stream.seq, local_notices=False),
        out=io.StringIO(),
        err=io.StringIO(),
        json_lines=json_lines,
    )
    for note in stream.notes:
        follower.feed(note)
    follower.finish_output()
    return follower


@pytest.mark.parametrize("name", ["turns", "approvals"])
def test_the_streamed_answers_of_the_followed_turns_are_printed_whole(name: str) -> None:
    stream = load(name)
    first = _inputs(stream)[0]
    follower = follow(stream, first)
    assert follower.out.getvalue() == "\n\n".join(_answers(stream, first)) + "\n"  # type: ignore[attr-defined]
    assert follower.status == "completed"
    # Done once the daemon says the session is idle (the approvals recording stops before).
    assert follower.done == (follower.status_of(follower.root_session) == "idle")


def test_a_turn_before_the_one_that_took_the_input_is_not_printed() -> None:
    stream = load("turns")
    second = _inputs(stream)[1]
    follower = follow(stream, second)
    printed = follower.out.getvalue()  # type: ignore[attr-defined]
    assert printed == "\n\n".join(_answers(stream, second)) + "\n"
    assert _answers(stream, _inputs(stream)[0])[0] not in printed


def test_each_tool_call_is_said_on_stderr_not_in_the_answer() -> None:
    stream = load("turns")
    follower = follow(stream, _inputs(stream)[0])
    said = follower.err.getvalue()  # type: ignore[attr-defined]
    assert "echo hi" in said and "update_plan" in said
    assert "echo hi" not in follower.out.getvalue().split("It print")[0]  # type: ignore[attr-defined]


def test_a_subagents_report_is_waited_for_before_the_end() -> None:
    stream = load("subagent")
    follower = follow(stream, _inputs(stream)[0])
    root = follower.root_session
    [child] = [sid for sid in follower.view.sessions if sid != root]
    # The root's turn completed, the child's ended: its report to the root is still to come.
    assert follower.status == "completed" and follower.reports_due == {child}
    assert not follower.done
    seq = follower.view.seq
    follower.feed(
        {
            "method": "session/updated",
            "params": {"seq": seq + 1, "session": {"sessionId": child, "status": "idle"}},
        }
    )
    assert follower.only_reports_due and not follower.done
    report = {
        "itemId": "r" * 32,
        "type": "user_message",
        "sessionId": root,
        "turnId": "t" * 32,
        "status": "completed",
        "origin": "subagent",
        "fromSessionId": child,
        "text": "[Report from subagent]",
    }
    follower.feed(
        {
            "method": "item/completed",
            "params": {"seq": seq + 2, "sessionId": root, "item": report},
        }
    )
    assert follower.reports_due == set() and follower.done


@pytest.mark.parametrize("name", NAMES)
def test_json_lines_carry_every_notification_and_nothing_else(name: str) -> None:
    stream = load(name)
    follower = follow(stream, _inputs(stream)[0], json_lines=True)
    lines = follower.out.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [orjson.loads(line)["method"] for line in lines] == [n["method"] for n in stream.notes]
    assert follower.err.getvalue() == ""  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", NAMES)
def test_exec_and_the_other_clients_see_the_same_conversation(name: str) -> None:
    stream = load(name)
    follower = follow(stream, _inputs(stream)[0])
    shared = ConversationView.from_snapshot(stream.snapshot, stream.seq, local_notices=False)
    for note in stream.notes:
        shared.apply(note)
    assert {s: v.items for s, v in follower.view.sessions.items()} == {
        s: v.items for s, v in shared.sessions.items()
    }


def test_each_retry_of_the_root_is_said_once_on_stderr() -> None:
    stream = load("turns")
    follower = follow(stream, _inputs(stream)[0])
    root, seq = follower.root_session, follower.view.seq
    retry = {
        "sessionId": root,
        "attempt": 1,
        "maxAttempts": 3,
        "delaySeconds": 2,
        "error": {"kind": "provider_unavailable", "message": "overloaded"},
    }
    follower.feed({"method": "retry/scheduled", "params": {**retry, "seq": seq + 1}})
    usage = {"sessionId": root, "usage": {"contextTokens": 1}, "seq": seq + 2}
    follower.feed({"method": "usage/updated", "params": usage})  # redraws; says nothing new
    follower.feed({"method": "retry/scheduled", "params": {**retry, "attempt": 2, "seq": seq + 3}})
    said = follower.err.getvalue().splitlines()  # type: ignore[attr-defined]
    assert [line for line in said if "retrying" in line] == [
        "openvaala: retrying 1/3 in 2 s: overloaded",
        "openvaala: retrying 2/3 in 2 s: overloaded",
    ]
