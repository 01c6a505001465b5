"""A store that refuses writes (a full disk) under the real runtime: the turn fails with a clear
`storage_failed`, the message it could not save waits again instead of being lost, and it runs
once the store accepts writes (the daemon-level test with a real full disk: test_disk_full.py)."""

from __future__ import annotations

import errno

from tests.server.fast.conftest import Core


async def test_an_unsaved_message_waits_until_the_store_accepts_it(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")

    core.store.failing = OSError(errno.ENOSPC, "No space left on device")
    await core.send(conv, "second")
    [_, failed] = await events.turns_ended(2)

    assert failed["params"]["status"] == "failed"
    assert failed["params"]["error"]["kind"] == "storage_failed"
    assert "No space left on device" in failed["params"]["error"]["message"]
    waiting = events.of("inbox/updated")[-1]["params"]["inputs"]
    assert [(i["text"], i["mode"]) for i in waiting] == [("second", "queue")]
    assert len(core.script.calls) == 1  # the model never saw an unsaved message

    core.store.failing = None
    core.script.text("Two.")
    core.runtime.jump_input(waiting[0]["inputId"])  # the user acts: it runs now
    [*_, ended] = await events.turns_ended(3)

    assert ended["params"]["status"] == "completed"
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert [i.get("text") for i in saved if i["type"] == "user_message"] == ["first", "second"]
