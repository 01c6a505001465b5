"""What a client that subscribes late gets, in-process: the missed events replayed in order
(conversation/subscribe with afterSeq), or a snapshot; and a conversation read back from the
store by a new runtime (a restart)."""

from __future__ import annotations

import orjson

from openvaala_server.runtime.hub import Hub
from tests.server.runtime.conftest import Core, Note, make_runtime, running


def decoded(frames: list[str]) -> list[Note]:
    return [orjson.loads(frame) for frame in frames]


async def test_a_late_subscriber_gets_exactly_the_missed_events(core: Core) -> None:
    conv, events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")
    seen = conv.hub.seq  # a client saw everything up to here, then disconnected

    core.script.text("Two.")
    await core.turn(conv, "second")
    missed = conv.hub.replay_after(seen)

    assert missed is not None
    replayed = decoded(missed)
    live = [note for note in events.notes if int(note["params"]["seq"]) > seen]
    assert [(n["method"], n["params"]) for n in replayed] == [
        (n["method"], n["params"]) for n in live
    ]
    seqs = [int(n["params"]["seq"]) for n in replayed]
    assert seqs == list(range(seen + 1, conv.hub.seq + 1))  # numbered without gaps
    assert "turn/ended" in [n["method"] for n in replayed]
    assert conv.hub.replay_after(conv.hub.seq) == []


async def test_too_old_a_position_gets_a_snapshot_instead(core: Core) -> None:
    conv, _events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")

    # A position from before this hub (another server run) cannot be replayed ...
    assert conv.hub.replay_after(1) is None
    # ... so the client draws from the snapshot, which holds the whole turn.
    snapshot = conv.snapshot()
    [root] = snapshot["sessions"]
    assert [i.get("text") for i in root["items"]] == ["first", "One."]
    assert root["turn"] is None


def test_a_bounded_replay_log_forgets_the_oldest_events() -> None:
    hub = Hub("c" * 32, replay_limit=3)
    start = hub.seq
    for n in range(5):
        hub.publish(
            "item/delta", {"sessionId": "s", "itemId": "i", "field": "text", "delta": f"{n}"}
        )
    assert hub.replay_after(start) is None  # the first two are gone: snapshot
    kept = decoded(hub.replay_after(start + 2) or [])
    assert [f["params"]["delta"] for f in kept] == ["2", "3", "4"]


async def test_a_new_runtime_reads_the_conversation_back_from_the_store(core: Core) -> None:
    conv, _events = await core.new()
    core.script.text("One.")
    await core.turn(conv, "first")

    async with running(make_runtime(core.runtime.config, core.store, core.script)) as restarted:
        reopened = await restarted.open(conv.conversation_id)
        listed = await restarted.list_conversations(False, None, 10, None)

    assert reopened is not conv
    assert [i.get("text") for i in reopened.root.items] == ["first", "One."]
    assert reopened.status == "idle"
    assert [c["conversationId"] for c in listed["conversations"]] == [conv.conversation_id]
