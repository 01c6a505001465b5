"""A store that refuses writes (a full disk) under the real runtime (the daemon-level test with a
real full disk: test_disk_full.py):
- `input/send` on an idle session fails with `storage_failed` and claims nothing: no answer
  "started", no turn announced, nothing left waiting (the client still holds its message);
- a waiting message whose turn cannot save it waits again instead of being lost, and runs once the
  store accepts writes."""

from __future__ import annotations

import errno

import pytest

from openvaala_server import errors
from tests.server.runtime.conftest import Core

FULL = OSError(errno.ENOSPC, "No space left on device")


async def test_a_send_that_cannot_be_saved_fails_and_claims_nothing(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    seen = len(events.methods())

    core.store.failing = FULL
    with pytest.raises(errors.StorageFailed, match="No space left on device"):
        await core.send(conv, "second")

    told = events.methods()[seen:]
    assert "turn/started" not in told and "turn/ended" not in told
    assert not [n for n in events.of("inbox/updated") if n["params"]["inputs"]]
    assert conv.root.turn is None and conv.root.last_status == "idle"
    assert len(core.script.calls) == 1  # the model never saw an unsaved message

    core.store.failing = None
    core.script.text("Two.")
    await core.turn(conv, "second")  # the client sends it again
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert [i.get("text") for i in saved if i["type"] == "user_message"] == ["first", "second"]


async def test_a_waiting_message_that_cannot_be_saved_waits_again(core: Core) -> None:
    conv, events = await core.new()
    release = core.script.hold("Working")
    assert (await core.send(conv, "first"))["disposition"] == "started"
    assert (await core.send(conv, "second"))["disposition"] == "queued"

    core.store.failing = FULL
    release.set()  # the running turn cannot save its reply: it fails, "second" stays waiting
    await events.turns_ended(1)
    [waiting] = events.of("inbox/updated")[-1]["params"]["inputs"]
    core.runtime.jump_input(waiting["inputId"])  # its turn starts, and cannot save it
    [_, failed] = await events.turns_ended(2)

    assert failed["params"]["status"] == "failed"
    assert failed["params"]["error"]["kind"] == "storage_failed"
    assert "No space left on device" in failed["params"]["error"]["message"]
    waiting_again = events.of("inbox/updated")[-1]["params"]["inputs"]
    assert [(i["text"], i["mode"]) for i in waiting_again] == [("second", "queue")]
    assert len(core.script.calls) == 1  # the model never saw an unsaved message

    core.store.failing = None
    core.script.text("Two.")
    core.runtime.jump_input(waiting_again[0]["inputId"])  # the user acts: it runs now
    [*_, ended] = await events.turns_ended(3)

    assert ended["params"]["status"] == "completed"
    saved = await core.store.read_all_items(conv.conversation_id, conv.root_session_id)
    assert [i.get("text") for i in saved if i["type"] == "user_message"] == ["first", "second"]
