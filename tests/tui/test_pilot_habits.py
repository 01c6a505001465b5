"""Habits users bring from other agent UIs: a completion popup for `@path` (the file goes with
the message), Ctrl+C to clear and twice to quit, how to come back after quitting, reasoning
visible while it streams, where a listed conversation came from. All on a fake client answering
as the daemon does (tests/tui/fake_client.py); the slash commands' popup and what a rewind
created: test_commands_fake_client.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Collapsible

from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import conversation_label
from openvaala_tui.widgets.completions import CompletionPopup
from openvaala_tui.widgets.items import Reasoning, UserMessage
from tests.tui.conftest import ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD, item


def popup_values(app: VaalaApp) -> list[str]:
    popup = app.query_one(CompletionPopup)
    if not popup.display or popup.completion is None:
        return []
    return [value for value, _ in popup.completion.candidates]


async def test_at_path_completes_and_sends_the_file(tmp_path: Path) -> None:
    # The terminal UI completes and attaches the file itself: on a fake client
    # (tests/tui/fake_client.py) whose `input/send` is what the daemon is sent.
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print('hi')\n")
    fake = FakeClient()
    fake.answer_sends()
    app = VaalaApp(cwd=str(tmp_path), client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*"read @n")
        await wait_for(pilot, lambda: popup_values(app) == ["@notes.txt"])
        await pilot.press("tab")
        assert app.composer.text == "read @notes.txt "
        await pilot.press(*"and @s", "tab")
        assert app.composer.text == "read @notes.txt and @src/"
        await wait_for(pilot, lambda: popup_values(app) == ["@src/main.py"])
        await pilot.press("tab", "enter")
        await wait_for(pilot, lambda: bool(app.transcript.query(UserMessage)), what="the message")
        sent = str(app.transcript.query_one(UserMessage).item.get("text"))
        assert sent.startswith("read @notes.txt and @src/main.py")
        assert "```notes.txt\nremember the milk\n```" in sent
        assert "```src/main.py\nprint('hi')\n```" in sent
        assert [p["text"] for p in fake.params_of("input/send")] == [sent]


async def test_ctrl_c_clears_then_quits_and_says_how_to_come_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # On a fake client (tests/tui/fake_client.py): the first turn stores the conversation.
    fake = FakeClient()
    fake.answer_sends()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hello")  # stored from now on: it can be resumed
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: bool(app.view.conversation.get("persisted")))
        await wait_for(pilot, lambda: not root.running, what="the turn")
        app.composer.set_text("a draft")
        await pilot.press("ctrl+c")
        assert app.composer.is_empty
        await pilot.press("ctrl+c")  # clearing a draft does not count towards quitting
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0
    said = " ".join(capsys.readouterr().err.split())
    assert f"openvaala --resume {app.view.conversation_id}" in said


async def test_reasoning_open_while_it_streams_folded_after() -> None:
    # The reasoning as the daemon streams it (item/started, item/delta, item/completed), on a
    # fake client (tests/tui/fake_client.py); what a provider's stream becomes: tests/e2e/.
    fake = FakeClient()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        cid = app.view.conversation_id
        turn_id = fake.start_turn(cid, "think")
        thought = fake.start_item(cid, turn_id, "reasoning")
        fake.delta(cid, thought, "weighing the options")
        await wait_for(pilot, lambda: bool(app.transcript.query(Reasoning)), what="reasoning")
        collapsible = app.transcript.query_one(Reasoning).query_one(Collapsible)
        assert not collapsible.collapsed
        await wait_for(
            pilot,
            lambda: (
                "weighing the options" in str(app.transcript.query_one(".reasoning-text").render())
            ),
            what="the reasoning text on screen",
        )
        assert not collapsible.collapsed  # still open while the turn goes on
        fake.add_item(cid, {**thought, "text": "weighing the options", "status": "completed"})
        fake.add_item(cid, item("agent_message", fake.root(cid), "Done.", turnId=turn_id))
        fake.end_turn(cid, turn_id)
        view_root = app.view.root
        assert view_root is not None
        await wait_for(pilot, lambda: not view_root.running, what="the turn")
        await wait_for(pilot, lambda: collapsible.collapsed, what="folded")


def test_the_resume_list_says_when_how_much_and_where_from() -> None:
    # Rows as conversation/list gives them, the fields the label reads.
    original: Any = {
        "conversationId": "a" * 32,
        "title": "Fix the loader",
        "cwd": "/p",
        "updatedAt": "2026-12-01T10:00:00Z",
        "messageCount": 4,
        "status": "idle",
    }
    rewound: Any = {
        "conversationId": "b" * 32,
        "title": "Fix the loader (rewind)",
        "cwd": "/p",
        "updatedAt": "2026-12-02T10:00:00Z",
        "messageCount": 1,
        "forkedFrom": {"conversationId": "a" * 32, "kind": "rewind"},
    }
    titles = {"a" * 32: "Fix the loader", "b" * 32: "Fix the loader (rewind)"}
    line = conversation_label(rewound, titles).plain
    assert "2026-12-0" in line  # the date, in the local zone
    assert "1 message " in line + " "
    assert "rewound from “Fix the loader”" in line
    assert "4 messages" in conversation_label(original, titles).plain
    fork: Any = {**rewound, "forkedFrom": {"conversationId": "c" * 32, "kind": "fork"}}
    assert "fork of “cccccccc”" in conversation_label(fork, titles).plain
