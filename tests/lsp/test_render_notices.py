"""The editor's transcript says an interrupt in words for the user, not in the daemon's note for
the model ("The user interrupted the previous turn…"), as the terminal UI does."""

from __future__ import annotations

from openvaala_lsp.render import render
from openvaala_server.client.notice_words import FOR_PEOPLE
from openvaala_server.client.view import ConversationView
from openvaala_server.runtime.turn_end import INTERRUPT_NOTICE  # the note for the model

CID, ROOT = "c" * 32, "a" * 32


def test_an_interrupt_notice_reads_as_words_for_the_user() -> None:
    item = {"itemId": "1" * 32, "type": "notice", "sessionId": ROOT, "status": "completed"}
    snapshot = {
        "conversation": {"conversationId": CID, "title": "t", "cwd": "/w", "rootSessionId": ROOT},
        "sessions": [
            {
                "sessionId": ROOT,
                "parentSessionId": None,
                "agent": "default",
                "model": "demo",
                "status": "idle",
                "items": [{**item, "kind": "interrupted", "text": INTERRUPT_NOTICE}],
                "hasMore": False,
                "turn": None,
                "inbox": [],
            }
        ],
    }
    text = render(ConversationView.from_snapshot(snapshot, seq=1, local_notices=False)).text
    assert f"_{FOR_PEOPLE['interrupted']}_" in text
    assert "The user interrupted" not in text
