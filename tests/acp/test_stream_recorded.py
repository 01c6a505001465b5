"""ACP's session stream on the one shared fold (docs/design.md, "One fold under ACP"), fed the
event streams recorded from a real daemon (tests/client/streams/, the ones the TUI's and the
editor bridge's fold are tested with): what the editor is sent matches what the fold holds, only
the root session's items are shown, a notification seen twice (a replay after a reconnection)
sends nothing the second time, and every update is a valid ACP `session/update`. Pure: no daemon."""

from __future__ import annotations

import pytest
from acp.schema import AgentMessageChunk, SessionNotification

from openvaala_acp.stream import SessionStream, Update
from openvaala_server.client.view import ConversationView
from tests.client.streams import NAMES, Stream, load


def _stream(recorded: Stream) -> SessionStream:
    info = recorded.snapshot["conversation"]
    stream = SessionStream(
        conversation_id=str(info["conversationId"]),
        root_session_id=str(info["rootSessionId"]),
        cwd=str(info["cwd"]),
    )
    stream.load(recorded.snapshot, recorded.seq)
    return stream


def _sent(stream: SessionStream, recorded: Stream) -> list[Update]:
    return [u for note in recorded.notes for u in stream.on_note(note["method"], note["params"])]


@pytest.mark.parametrize("name", NAMES)
def test_the_editor_is_sent_what_the_fold_holds_of_the_root_only(name: str) -> None:
    recorded = load(name)
    stream = _stream(recorded)
    sent = _sent(stream, recorded)
    view = ConversationView.from_snapshot(recorded.snapshot, recorded.seq, local_notices=False)
    for note in recorded.notes:
        view.apply(note)
    root = view.sessions[stream.root_session_id]
    for update in sent:  # each a valid ACP session/update
        SessionNotification.model_validate(
            {"sessionId": stream.conversation_id, "update": update.model_dump(by_alias=True)}
        )
    new_ids = {str(i["itemId"]) for i in root.items} - {
        str(i["itemId"])
        for s in recorded.snapshot["sessions"]
        if s["sessionId"] == stream.root_session_id
        for i in s.get("items") or []
    }
    messages = [i for i in root.items if i["type"] == "agent_message" and i["itemId"] in new_ids]
    assert messages
    for item in messages:  # streamed text adds up to the message the fold completed
        chunks = [
            u.content.text
            for u in sent
            if isinstance(u, AgentMessageChunk) and u.message_id == item["itemId"]
        ]
        assert "".join(chunks) == item["text"]
    others = {
        str(i["itemId"])
        for sid, s in view.sessions.items()
        if sid != stream.root_session_id
        for i in s.items
    }
    assert not any(getattr(u, "message_id", None) in others for u in sent)


@pytest.mark.parametrize("name", NAMES)
def test_a_notification_seen_twice_is_sent_once(name: str) -> None:
    recorded = load(name)
    stream = _stream(recorded)
    assert _sent(stream, recorded)
    assert _sent(stream, recorded) == []  # a replay of what was already folded
