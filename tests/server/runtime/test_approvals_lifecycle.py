"""Approvals and the conversation's own lifecycle in-process: a write outside the workspace
waits for an answer from any client; rename, archive, list and delete."""

from __future__ import annotations

from pathlib import Path

import pytest

from openvaala_server import errors
from openvaala_server.domain.approvals import Answer
from tests.server.runtime.conftest import Core, Events


async def write_outside(core: Core, answer: Answer) -> tuple[Path, Events, str]:
    """A turn whose model writes a file outside the workspace, answered with `answer`."""
    target = core.cwd.parent / "outside.txt"
    conv, events = await core.new()
    core.script.tool_call("write_file", {"path": str(target), "content": "hello"})
    core.script.text("Done.")
    await core.send(conv, "write it")
    [asked] = await events.until(lambda note: note["method"] == "approval/requested")
    assert asked["params"]["tool"] == "write_file"
    assert not target.exists()  # nothing happens before the answer

    approval_id = asked["params"]["approvalId"]
    result = await core.runtime.respond_approval(conv.conversation_id, approval_id, answer, None)
    assert result == {"approvalId": approval_id, "decision": answer}
    await events.turns_ended()
    with pytest.raises(errors.AlreadyResolved):  # the first answer counts
        await core.runtime.respond_approval(conv.conversation_id, approval_id, "deny", None)
    output = core.script.requests[1].items[-1]
    assert output["type"] == "tool_result"
    return target, events, str(output.get("output"))


async def test_an_allowed_write_outside_the_workspace_runs(core: Core) -> None:
    target, events, _output = await write_outside(core, "allow")
    assert target.read_text() == "hello"
    assert events.of("approval/resolved")[0]["params"]["decision"] == "allow"


async def test_a_denied_write_does_not_run_and_the_model_is_told(core: Core) -> None:
    target, _events, output = await write_outside(core, "deny")
    assert not target.exists()
    assert "denied" in output.lower()


async def test_rename_archive_list_and_delete(core: Core) -> None:
    conv, events = await core.new()
    cid = conv.conversation_id
    with pytest.raises(errors.NotFound):  # not saved before its first message
        await core.runtime.set_archived(cid, True)
    core.script.text("Hi.")
    await core.turn(conv, "hello")

    await core.runtime.rename(cid, "  My   chat ")
    await core.runtime.set_archived(cid, True)
    active = await core.runtime.list_conversations(False, None, 10, None)
    archived = await core.runtime.list_conversations(True, None, 10, None)
    assert active["conversations"] == []
    [summary] = archived["conversations"]
    assert (summary["title"], summary["archived"], summary["messageCount"]) == ("My chat", True, 2)
    assert events.of("conversation/updated")[-1]["params"]["conversation"]["archived"] is True

    await core.runtime.delete(cid)
    assert events.methods()[-1] == "conversation/deleted"
    assert not core.store.exists(cid)
    with pytest.raises(errors.NotFound):
        await core.runtime.open(cid)


async def test_delete_is_refused_while_a_turn_runs(core: Core) -> None:
    conv, events = await core.new()
    gate = core.script.hold("Working")
    await core.send(conv, "go")
    await events.until(lambda note: note["method"] == "item/delta")
    with pytest.raises(errors.TurnRunning):
        await core.runtime.delete(conv.conversation_id)
    gate.set()
    await events.turns_ended()
