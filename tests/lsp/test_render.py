"""The transcript fold and its Markdown, without processes: what the documents and lenses show."""

from __future__ import annotations

from typing import Any

from openvaala_lsp import uris
from openvaala_lsp.render import render
from openvaala_server.client.view import ConversationView

CID, ROOT, CHILD = "c" * 32, "a" * 32, "b" * 32


def _item(item_id: str, kind: str, sid: str = ROOT, **fields: Any) -> dict[str, Any]:
    return {"itemId": item_id * 32, "type": kind, "sessionId": sid, "status": "completed", **fields}


def _view() -> ConversationView:
    snapshot = {
        "conversation": {
            "conversationId": CID,
            "title": "Demo",
            "cwd": "/w",
            "rootSessionId": ROOT,
        },
        "sessions": [
            {
                "sessionId": ROOT,
                "parentSessionId": None,
                "agent": "default",
                "model": "demo",
                "status": "running",
                "items": [
                    _item("1", "user_message", text="hi", origin="user"),
                    _item("2", "agent_message", text="hello"),
                    _item("3", "user_message", text="run: ls", origin="user"),
                    _item("4", "tool_call", name="shell", arguments={"command": "ls"}),
                ],
                "hasMore": False,
                "turn": {
                    "turnId": "t",
                    "items": [_item("5", "tool_result", name="shell", output="")],
                },
                "inbox": [{"inputId": "9" * 32, "text": "later", "mode": "queue"}],
                "usage": {"used": 1500, "contextWindow": 32000, "source": "estimated"},
            }
        ],
    }
    return ConversationView.from_snapshot(snapshot, seq=10, local_notices=False)


def test_fold_streams_discards_and_ignores_old_seqs() -> None:
    view = _view()
    root = view.root
    assert root is not None
    assert view.fold(
        "item/delta",
        {"seq": 11, "sessionId": ROOT, "itemId": "5" * 32, "field": "output", "delta": "a.txt\n"},
    )
    assert not view.fold(
        "item/delta",
        {"seq": 11, "sessionId": ROOT, "itemId": "5" * 32, "field": "output", "delta": "again"},
    )
    assert root.items[-1]["output"] == "a.txt\n"
    started = _item("6", "agent_message", text="", status="in_progress")
    view.fold("item/started", {"seq": 12, "sessionId": ROOT, "item": started})
    view.fold("item/discarded", {"seq": 13, "sessionId": ROOT, "itemId": "6" * 32})
    assert [i["itemId"][0] for i in root.items] == ["1", "2", "3", "4", "5"]
    child = {"sessionId": CHILD, "parentSessionId": ROOT, "agent": "worker", "status": "running"}
    view.fold("session/started", {"seq": 14, "session": child})
    assert [s.session_id for s in view.children(ROOT)] == [CHILD]
    assert view.version == 5


def test_markdown_lenses_and_subagents() -> None:
    view = _view()
    view.fold(
        "session/started",
        {
            "seq": 11,
            "session": {
                "sessionId": CHILD,
                "parentSessionId": ROOT,
                "agent": "worker",
                "status": "running",
                "title": "explore",
            },
        },
    )
    shown = render(view)
    lines = shown.text.splitlines()
    assert lines[0] == "# Demo"
    # Status and usage change while a reply streams: they are the last line, not the header.
    assert lines[-1] == "> **running** · context 1.5k/32k (5%, estimated)"
    assert not any("context" in line or "running" in line for line in lines[:5])
    assert '**⚙ shell** `{"command": "ls"}`' in lines
    assert "- (queue) later" in lines
    you = [n for n, line in enumerate(lines) if line == "## You"]
    lenses = [
        (a.line, a.kind, a.item_id, a.fork_up_to) for a in shown.anchors if a.kind == "user_message"
    ]
    # Fork keeps the whole exchange; the running turn's tool result is already complete.
    assert lenses == [
        (you[0], "user_message", "1" * 32, "2" * 32),
        (you[1], "user_message", "3" * 32, "5" * 32),
    ]
    follow = [a for a in shown.anchors if a.kind == "subagent"]
    assert len(follow) == 1 and follow[0].session_id == CHILD
    assert lines[follow[0].line] == "### ↳ worker — running · explore"
    sub = render(view, CHILD)
    assert sub.text.startswith("# Demo › worker (subagent)") and sub.anchors == []


def test_subagent_transcript_labels_its_task_and_shows_its_own_usage() -> None:
    view = _view()
    child = {"sessionId": CHILD, "parentSessionId": ROOT, "agent": "worker", "status": "idle"}
    view.fold("session/started", {"seq": 11, "session": child})
    task = _item("7", "user_message", CHILD, text="list the files", fromSessionId=ROOT)
    later = _item("8", "user_message", CHILD, text="and count them", fromSessionId=ROOT)
    for seq, item in enumerate((task, later), start=12):
        view.fold("item/completed", {"seq": seq, "sessionId": CHILD, "item": item})
    usage = {"used": 900, "contextWindow": 32000, "source": "reported"}
    view.fold("usage/updated", {"seq": 20, "sessionId": CHILD, "usage": usage})
    lines = render(view, CHILD).text.splitlines()
    assert "> subagent of **default**" in lines
    assert "## You" not in lines  # the parent wrote these, not the user
    assert lines.index("## Task from default (parent agent)") < lines.index("list the files")
    assert "## Message from default (parent agent)" in lines
    assert lines[-1] == "> **idle** · context 900/32k (3%, reported)"  # its own, not the root's
    # The root transcript keeps the user's own messages as "You".
    assert render(view).text.splitlines().count("## You") == 2


def test_uris() -> None:
    assert uris.parse(f"openvaala://conversation/{CID}") == uris.DocRef(CID)
    assert uris.parse(f"openvaala://conversation/{CID}/session/{CHILD}") == uris.DocRef(CID, CHILD)
    assert uris.parse("openvaala://conversation/../etc") is None
    assert uris.parse(f"file:///conversation/{CID}") is None
