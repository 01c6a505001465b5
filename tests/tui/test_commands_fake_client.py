"""Commands, keys and pickers of the terminal UI, on a fake client answering as the daemon does
(no daemon: tests/tui/fake_client.py): the completion popup and /help, /exit and /quit, the
/model picker's order, the Ctrl+P palette's custom commands, /continue's answer when nothing was
cut, /context, /model and /agents, /fork, /rename and /resume, /compact, the rewind (Esc Esc,
/rewind). What the daemon does with a command is tested against the real daemon
(tests/README.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Collapsible, Markdown, OptionList

from openvaala_server.domain.ids import new_id
from openvaala_server.domain.records import ForkedFrom
from openvaala_server.domain.trace import TracePart
from openvaala_server.errors import NotIdle
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.protocol.payloads import (
    CheckpointsResult,
    CompactResult,
    ContextTrace,
    ConversationResult,
    InterruptResult,
    ReplacedResult,
    RewindResult,
    SendResult,
    SessionsResult,
)
from openvaala_tui.app import VaalaApp
from openvaala_tui.history_actions import NOTHING_TO_CONTINUE
from openvaala_tui.screens import AgentsScreen, ListPicker
from openvaala_tui.widgets.items import AgentMessage, Summary, UserMessage
from tests.tui.conftest import notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD, item, refusal, session_info, usage
from tests.tui.test_pilot_habits import popup_values


async def test_slash_completion_popup(tmp_path: Path) -> None:
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("/", "r", "e")
        expected = ["/resume", "/rewind", "/remember", "/rename"]
        await wait_for(pilot, lambda: popup_values(app) == expected)
        await pilot.press("down", "down", "down", "tab")
        assert app.composer.text == "/rename "
        assert not popup_values(app)
        await pilot.press("ctrl+c")
        await pilot.press("/", "h", "e")
        await wait_for(pilot, lambda: popup_values(app) == ["/help"])
        await pilot.press("enter")  # takes the completion ...
        assert app.composer.text == "/help "
        await pilot.press("enter")  # ... and then runs it
        await wait_for(pilot, lambda: any("Commands:" in n for n in notices(app)))


@pytest.mark.parametrize("command", ["/exit", "/quit"])
async def test_exit_and_quit_leave_the_ui(command: str, tmp_path: Path) -> None:
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, command)
        await wait_for(pilot, lambda: app.return_code == 0, what=command)


async def test_model_picker_starts_on_the_current_model_and_stops_at_the_end(
    tmp_path: Path,
) -> None:
    # The daemon lists its models in the config's order; the conversation's is the first.
    fake = FakeClient(models=("demo", "other", "third"))
    app = VaalaApp(cwd=str(tmp_path), client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        app.run_slash("model", "")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="the picker")
        options = app.screen.query_one(OptionList)
        names = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert names[-1] != "demo"  # the current one is not the last: the old default
        assert options.highlighted is not None and names[options.highlighted] == "demo"
        for _ in range(len(names) + 1):
            await pilot.press("down")
        assert options.highlighted == len(names) - 1  # no wrap to the top
        await pilot.press("escape")


async def test_continue_with_nothing_cut_says_so_once(tmp_path: Path) -> None:
    # What the daemon answers a resume with nothing cut (tests/e2e/test_resume_e2e.py).
    def busy(params: JsonObject) -> object:
        raise refusal(NotIdle("busy"))

    fake = FakeClient({"turn/resume": busy})
    app = VaalaApp(cwd=str(tmp_path), client=fake)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await app.slash("continue", "")
        await wait_for(pilot, lambda: bool(notices(app)), what="the answer")
        assert notices(app) == [NOTHING_TO_CONTINUE]
        assert fake.methods().count("turn/resume") == 1


async def test_the_palette_lists_custom_commands(tmp_path: Path) -> None:
    project = tmp_path / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "explain.md").write_text("---\ndescription: Explain simply\n---\nExplain it.\n")
    app = VaalaApp(cwd=str(tmp_path), client=FakeClient())
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        await pilot.press(*"explain")
        found = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: found.option_count > 0, what="a hit")
        assert "Explain simply" in str(found.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.composer.text == "/explain ", what="the composer")
        assert app.composer.has_focus


async def hello(pilot: Pilot[int], app: VaalaApp) -> None:
    """A first turn (the fake's `answer_sends`), its reply on screen."""
    await type_and_send(pilot, "hello")
    await wait_for(pilot, lambda: bool(app.transcript.query(AgentMessage)), what="the turn")


async def test_context_model_and_agents() -> None:
    fake = FakeClient(models=("demo", "other"))
    fake.answer_sends()

    def context(params: JsonObject) -> ContextTrace:
        cid = str(params["conversationId"])
        history: TracePart = {"kind": "history", "label": "History", "tokens": 120}
        return {
            "sessionId": fake.root(cid),
            "parts": [history],
            "total": 120,
            "omitted": [],
            "usage": usage(used=120),
        }

    def sessions(params: JsonObject) -> SessionsResult:
        root = fake.snapshot(str(params["conversationId"]))["sessions"][0]
        return {"sessions": [session_info(root)]}

    fake.answers.update({"conversation/context": context, "sessions/list": sessions})
    fake.on(
        "conversation/setModel",
        lambda p: fake.update_session(str(p["conversationId"]), model=p["model"]),
    )
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await hello(pilot, app)
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: any("Context:" in t for t in notices(app)), what="/context")
        report = next(t for t in notices(app) if "Context:" in t)
        assert "of 100,000 tokens" in report and "compaction at" in report

        await type_and_send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="model picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        assert [value for value, _ in picker.choices] == ["demo", "other"]
        await pilot.press("down", "enter")  # the current one ("demo") is highlighted
        await wait_for(
            pilot,
            lambda: app.view.root is not None and app.view.root.info.get("model") == "other",
            what="the model switch",
        )
        assert fake.params_of("conversation/setModel")[0]["model"] == "other"
        assert "other" in str(app.query_one("#status-model").render())

        await type_and_send(pilot, "/agents")
        await wait_for(pilot, lambda: isinstance(app.screen, AgentsScreen), what="agents")
        agents = app.screen
        assert isinstance(agents, AgentsScreen)
        assert [s["sessionId"] for s in agents.sessions] == [app.view.root_id]
        await pilot.press("f")
        await wait_for(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        assert app.following == app.view.root_id


async def test_fork() -> None:
    fake = FakeClient()
    fake.answer_sends()

    def fork(params: JsonObject) -> ConversationResult:
        source = str(params["conversationId"])
        copy = fake.add(CWD)
        fake.info(copy)["forkedFrom"] = {
            "conversationId": source,
            "kind": "fork",
            "upToItemId": None,
        }
        fake.snapshot(copy)["sessions"][0]["items"] = [
            {**i, "sessionId": fake.root(copy)}
            for i in fake.snapshot(source)["sessions"][0]["items"]
        ]
        return {"conversation": fake.info(copy)}

    fake.answers["conversation/fork"] = fork
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await hello(pilot, app)
        first = app.view.conversation_id
        await type_and_send(pilot, "/fork")
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="/fork")
        # The copy is open, with the same history, and says where it came from.
        forked = app.view.conversation.get("forkedFrom")
        assert isinstance(forked, dict) and forked["conversationId"] == first
        await wait_for(pilot, lambda: len(app.transcript.query(AgentMessage)) == 1)
        assert [w.item["text"] for w in app.transcript.query(UserMessage)] == ["hello"]
        # What is sent now goes to the copy.
        await type_and_send(pilot, "only in the fork")
        await wait_for(pilot, lambda: len(app.transcript.query(AgentMessage)) == 2)
    sends = fake.params_of("input/send")
    assert [s["conversationId"] for s in sends] == [first, app.view.conversation_id]


async def test_rename_and_resume() -> None:
    fake = FakeClient()
    fake.answer_sends()

    fake.on(
        "conversation/rename", lambda p: fake.update(str(p["conversationId"]), title=p["title"])
    )
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await hello(pilot, app)
        first = app.view.conversation_id
        await type_and_send(pilot, "/rename My title")
        await wait_for(pilot, lambda: app.view.title == "My title", what="the rename")
        assert fake.params_of("conversation/rename") == [
            {"conversationId": first, "title": "My title"}
        ]
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: app.view.conversation_id not in ("", first), what="/new")
        assert not app.transcript.item_widgets
        await type_and_send(pilot, "/resume")
        await wait_for(
            pilot,
            lambda: (
                bool(app.screen.query("#resume-list"))
                and app.screen.query_one("#resume-list", OptionList).option_count > 0
            ),
            what="the conversation list",
        )
        await pilot.press("enter", "enter")  # the search field hands over to the list
        await wait_for(pilot, lambda: app.view.conversation_id == first, what="resume")
        assert app.view.title == "My title"
        assert app.transcript.query(AgentMessage)


async def test_compact() -> None:
    fake = FakeClient()
    fake.answer_sends()
    running: list[str] = []

    def hold(params: JsonObject) -> SendResult:  # a turn that runs until interrupted
        cid = str(params["conversationId"])
        loop = asyncio.get_running_loop()
        loop.call_soon(lambda: running.append(fake.start_turn(cid, str(params["text"]))))
        return {"inputId": new_id(), "disposition": "started"}

    def interrupt(params: JsonObject) -> InterruptResult:
        fake.end_turn(str(params["conversationId"]), running.pop(), "interrupted")
        return {"interrupted": True}

    def compact(params: JsonObject) -> CompactResult:
        cid = str(params["conversationId"])
        if running:
            raise refusal(NotIdle("a turn is running"))
        root = fake.root(cid)
        history = fake.snapshot(cid)["sessions"][0]["items"]
        fake.emit("compaction/started", {"sessionId": root, "reason": "manual"})
        marker = item(
            "summary",
            root,
            "## Summary\n\nThe user said hello and asked how the agent was.",
            coversUpTo=history[-1]["itemId"],
            coveredItems=len(history),
            reason="manual",
            model="demo",
        )
        fake.add_item(cid, marker)
        done = {"sessionId": root, "reason": "manual", "summaryItemId": marker["itemId"]}
        fake.emit("compaction/completed", done)
        return {"compacted": True, "summaryItemId": marker["itemId"]}

    def replaced(params: JsonObject) -> ReplacedResult:  # what the expanded summary lists
        history = fake.snapshot(str(params["conversationId"]))["sessions"][0]["items"]
        covered = [i for i in history if i["type"] != "summary"]
        return {
            "summaryItemId": str(params["summaryItemId"]),
            "fromItemId": covered[0]["itemId"],
            "toItemId": covered[-1]["itemId"],
            "replacesSummary": None,
            "keptPinned": [],
            "itemIds": [i["itemId"] for i in covered],
            "items": covered,
        }

    fake.answers.update(
        {
            "turn/interrupt": interrupt,
            "conversation/compact": compact,
            "conversation/replaced": replaced,
        }
    )
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await hello(pilot, app)
        root = app.view.root
        assert root is not None

        # Refused while a turn runs, with a friendly explanation.
        fake.answers["input/send"] = hold
        await type_and_send(pilot, "run: sleep 30")
        await wait_for(pilot, lambda: root.running, what="the turn")
        await type_and_send(pilot, "/compact")
        await wait_for(
            pilot, lambda: any(t.startswith("Not now") for t in notices(app)), what="not_idle"
        )
        assert root.running
        assert not any(i.get("type") == "summary" for i in root.items)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not root.running, timeout=15, what="the turn to end")

        await type_and_send(pilot, "/compact")
        await wait_for(pilot, lambda: bool(app.transcript.query(Summary)), what="/compact")
        marker = app.transcript.query_one(Summary)
        assert marker.item["reason"] == "manual"
        await wait_for(pilot, lambda: not root.compacting, what="the compaction's end")
        collapsible = marker.query_one(Collapsible)
        assert collapsible.collapsed
        assert "compacted by hand" in str(collapsible.title)
        # The summary itself is there to read, one click away.
        collapsible.collapsed = False
        await pilot.pause()
        text = marker.query_one(Markdown).source
        assert text and text == marker.item["text"]


def rewinding() -> FakeClient:
    """A fake whose messages get a reply at once, answering a rewind as the daemon does with no
    file changed: a new conversation with the history before the message, the message for the
    composer (tests/e2e/test_context_e2e.py)."""
    fake = FakeClient()
    fake.answer_sends()

    def checkpoints(params: JsonObject) -> CheckpointsResult:
        return {"enabled": True, "bytes": 0, "limitBytes": 1 << 30, "skipped": [], "turns": []}

    def rewind(params: JsonObject) -> RewindResult:
        source = str(params["conversationId"])
        history = fake.snapshot(source)["sessions"][0]["items"]
        cut = next(n for n, i in enumerate(history) if i["itemId"] == params["messageId"])
        title = f"{fake.info(source)['title']} (rewind)"
        new = fake.add(CWD, title=title)
        root = fake.root(new)
        fake.snapshot(new)["sessions"][0]["items"] = [
            {**i, "sessionId": root} for i in history[:cut]
        ]
        up_to = history[cut - 1]["itemId"] if cut else None
        forked: ForkedFrom = {"conversationId": source, "kind": "rewind", "upToItemId": up_to}
        fake.info(new)["forkedFrom"] = forked
        return {"conversation": fake.info(new), "composerText": str(history[cut].get("text"))}

    fake.answers.update({"conversation/checkpoints": checkpoints, "conversation/rewind": rewind})
    return fake


async def two_turns(pilot: Pilot[int], app: VaalaApp, *texts: str) -> None:
    for count, text in enumerate(texts, 1):
        await type_and_send(pilot, text)
        await wait_for(
            pilot,
            lambda n=count: len(app.transcript.query(AgentMessage)) == n,  # type: ignore[misc]
            what="a turn",
        )


async def test_escape_twice_rewinds() -> None:
    fake = rewinding()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await two_turns(pilot, app, "first message", "second message")
        first = app.view.conversation_id
        app.composer.clear()
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="rewind picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        assert [label for _, label in picker.choices] == ["first message", "second message"]
        await pilot.press("enter")  # the last one is highlighted
        await wait_for(pilot, lambda: app.view.conversation_id != first, what="/rewind")
        [asked] = fake.params_of("conversation/rewind")
        said = [i for i in fake.snapshot(first)["sessions"][0]["items"] if "inputId" in i]
        assert asked == {"conversationId": first, "messageId": said[-1]["itemId"], "force": False}
        # A new conversation up to just before that message, with it back in the composer.
        assert app.composer.text == "second message"
        forked = app.view.conversation.get("forkedFrom")
        assert isinstance(forked, dict) and forked["kind"] == "rewind"
        assert [w.item["text"] for w in app.transcript.query(UserMessage)] == ["first message"]
        assert len(app.transcript.query(AgentMessage)) == 1
        # Sending it again continues the new conversation.
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                [w.item["text"] for w in app.transcript.query(UserMessage)]
                == ["first message", "second message"]
            ),
            what="the message sent again",
        )
        assert app.view.conversation_id != first
        assert fake.params_of("input/send")[-1]["conversationId"] == app.view.conversation_id


async def test_rewind_says_what_it_created() -> None:
    fake = rewinding()
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await two_turns(pilot, app, "first", "second")
        original = app.view.conversation_id
        app.run_slash("rewind", "")
        await wait_for(pilot, lambda: isinstance(app.screen, ListPicker), what="the picker")
        await pilot.press("enter")  # the last message: "second"
        await wait_for(pilot, lambda: app.view.conversation_id != original, what="the rewind")
        await wait_for(pilot, lambda: any(n.startswith("Rewound") for n in notices(app)))
        notice = next(n for n in notices(app) if n.startswith("Rewound"))
        assert "new conversation" in notice and "“second”" in notice
        assert app.composer.text == "second"
