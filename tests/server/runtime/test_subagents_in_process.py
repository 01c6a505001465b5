"""Subagents in-process: a parent spawns one, waits for it, gets its answer, then its report."""

from __future__ import annotations

from openvaala_server.models.base import ModelRequest
from tests.server.runtime.conftest import Core, Note


async def test_a_subagent_runs_its_task_and_the_parent_gets_its_answer(core: Core) -> None:
    conv, events = await core.new()
    root = conv.root_session_id

    def parent(request: ModelRequest) -> bool:
        return request.items[0].get("sessionId") == root

    def child(request: ModelRequest) -> bool:
        return not parent(request)

    core.script.tool_call("spawn_agent", {"agent": "helper", "task": "count to 3"}, when=parent)
    core.script.tool_call("wait", {}, when=parent)
    core.script.text("1 2 3", when=child)
    core.script.text("The helper counted to 3.", when=parent)
    core.script.text("Noted.", when=parent)  # for the turn its report starts
    await core.send(conv, "delegate the counting")

    def root_turn_ended(note: Note) -> bool:
        return bool(note["method"] == "turn/ended" and note["params"]["sessionId"] == root)

    ended = await events.until(root_turn_ended, 2)
    assert [n["params"]["status"] for n in ended] == ["completed", "completed"]
    [started] = events.of("session/started")
    child_id = started["params"]["session"]["sessionId"]
    assert started["params"]["session"]["agent"] == "helper"
    child_request = next(r for r in core.script.requests if child(r))
    assert "count to 3" in [i.get("text") for i in child_request.items]
    # The wait returned the subagent's answer to the parent's model.
    after_wait = [r for r in core.script.requests if parent(r)][2]
    waited = after_wait.items[-1]
    assert waited["type"] == "tool_result" and waited.get("name") == "wait"
    assert "1 2 3" in str(waited.get("output"))
    saved = await core.store.read_all_items(conv.conversation_id, child_id)
    assert [i.get("text") for i in saved if i["type"] == "agent_message"] == ["1 2 3"]
    # Its report (status and answer) reached the parent as a message, which ran a turn.
    report = core.script.requests[-1].items[-1]
    assert report["type"] == "user_message" and report.get("origin") == "subagent"
    assert "1 2 3" in str(report.get("text"))
    assert core.script.replies == []
