"""Appearance: the main screens drawn from a fixed snapshot, at a pinned size, with no daemon."""

from __future__ import annotations

from typing import Any, cast

from textual.pilot import Pilot
from textual.widgets import Collapsible, Input, OptionList, Switch

from openvaala_server.client import Client
from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import AgentsScreen, ListPicker, ResumeScreen
from openvaala_tui.widgets.approval import DenyMessage
from openvaala_tui.widgets.inbox import InboxList, InboxPanel
from openvaala_tui.widgets.items import Reasoning, ToolBlock
from openvaala_tui.widgets.status import StatusBar
from tests.tui import fixed
from tests.tui.conftest import notices, type_and_send, wait_for

SIZE = (100, 40)


def fixed_app(client: fixed.FixedClient | None = None) -> VaalaApp:
    """The fixed conversation; `client` answers what a screen asks the daemon (else none)."""
    return VaalaApp(
        cwd="/home/user/project",
        snapshot=fixed.snapshot(),
        client=cast(Client, client) if client is not None else None,
    )


def test_main_screen(snap_compare: Any) -> None:
    """The transcript: a collapsed reasoning item, a finished tool call with its output (folded,
    its last line in the title), Markdown, an interrupted message, and a turn running a tool."""

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        reasoning = app.transcript.query_one(Reasoning)
        assert reasoning.query_one(Collapsible).collapsed
        done = [b for b in app.transcript.query(ToolBlock) if b.status == "done"]
        assert len(done) == 1
        assert done[0].query_one(Collapsible).title == "output · 2 lines · b.txt"

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_retry_and_reconnecting_in_the_status_bar(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        app.query_one(StatusBar).clock = lambda: 0.0  # the countdown stands still
        retry = {
            "sessionId": fixed.ROOT,
            "attempt": 3,
            "maxAttempts": 10,
            "delaySeconds": 4,
            "error": {"kind": "unavailable", "message": "cannot connect to 127.0.0.1:9"},
        }
        await app.draw(app.view.apply({"method": "retry/scheduled", "params": retry}))
        await app.draw(
            app.view.apply({"method": "client/connection", "params": {"state": "reconnecting"}})
        )
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_rewind_picker(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        root = app.view.root
        assert root is not None
        choices = [(str(m["itemId"]), str(m["text"])) for m in root.user_messages()]
        await app.push_screen(ListPicker("Rewind to before which message?", choices))
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_agents_tree(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        sessions = app.session_infos()
        await app.push_screen(AgentsScreen(sessions, fixed.ROOT))
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_following_a_subagent(snap_compare: Any) -> None:
    """The transcript of a running subagent: its parent's task, its work, its status bar."""

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        app.following = fixed.CHILD
        await app.redraw()
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_waiting_input_panel(snap_compare: Any) -> None:
    """While a turn runs: a steer, a subagent's report (a steer too, marked as from a subagent)
    and two queued inputs, the panel focused (its keys in the footer)."""
    report = (
        f"[Report from subagent {fixed.SIBLING} (agent 'reviewer', task 'Review the test "
        "changes')] Its turn ended: interrupted."
    )
    inputs = [
        {"inputId": "a" * 32, "text": "Also check the docs", "mode": "steer", "origin": "user"},
        {
            "inputId": "c" * 32,
            "text": report,
            "mode": "steer",
            "origin": "subagent",
            "fromSessionId": fixed.SIBLING,
        },
        {"inputId": "b" * 32, "text": "Then summarize", "mode": "queue", "origin": "user"},
        {
            "inputId": "d" * 32,
            "text": "Then open a pull request\nwith the summary as its description",
            "mode": "queue",
            "origin": "user",
        },
    ]

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        note = {"method": "inbox/updated", "params": {"sessionId": fixed.ROOT, "inputs": inputs}}
        await app.draw(app.view.apply(note))
        await pilot.press("ctrl+w")
        await pilot.pause()
        panel = app.query_one(InboxPanel)
        assert panel.display and app.query_one(InboxList).has_focus
        assert [i["mode"] for i in panel.inputs] == ["steer", "steer", "queue", "queue"]

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


async def open_resume(pilot: Pilot[int]) -> ResumeScreen:
    """`/resume` as the user types it, answered by the fixed client."""
    app = pilot.app
    assert isinstance(app, VaalaApp)
    await type_and_send(pilot, "/resume")
    await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the list")
    screen = app.screen
    assert isinstance(screen, ResumeScreen)
    screen.query_one(Input).cursor_blink = False
    return screen


async def listed(pilot: Pilot[int], screen: ResumeScreen) -> list[str]:
    """The list's lines once the screen's last reload is done."""
    app = pilot.app
    await pilot.pause()
    await wait_for(
        pilot,
        lambda: all(w.is_finished for w in app.workers if w.node is screen),
        what="the list's reload",
    )
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def test_conversation_list_with_a_search(snap_compare: Any) -> None:
    """/resume with "conf" typed: the two active conversations whose title has a word that
    starts with it, the first highlighted."""
    client = fixed.FixedClient()

    async def run_before(pilot: Pilot[int]) -> None:
        screen = await open_resume(pilot)
        await pilot.press(*"conf")
        shown = await listed(pilot, screen)
        assert [s.split("  ")[0] for s in shown] == ["Fix the config loader", "Config docs review"]
        assert client.requests[-1] == (
            "conversation/list",
            {"archived": False, "limit": 100, "search": "conf"},
        )

    assert snap_compare(fixed_app(client), terminal_size=SIZE, run_before=run_before)


def test_conversation_list_archived(snap_compare: Any) -> None:
    """/resume with the archived switch turned on (clicked): the archived conversations only."""
    client = fixed.FixedClient()

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        app.animation_level = "none"  # the switch's slider lands at once
        screen = await open_resume(pilot)
        await listed(pilot, screen)
        await pilot.click("#resume-archived")
        shown = await listed(pilot, screen)
        assert screen.query_one(Switch).value
        assert [s.split("  ")[0] for s in shown] == [
            "Old config migration",
            "Scratch: regex experiments",
        ]
        assert client.requests[-1] == ("conversation/list", {"archived": True, "limit": 100})

    assert snap_compare(fixed_app(client), terminal_size=SIZE, run_before=run_before)


async def test_ctrl_a_toggles_archived_from_the_search_box() -> None:
    """The list says "archived (^a)", and the search box has the focus when it opens."""
    app = fixed_app(fixed.FixedClient())
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_resume(pilot)
        await listed(pilot, screen)
        assert screen.query_one(Input).has_focus
        await pilot.press("ctrl+a")
        await listed(pilot, screen)
        assert screen.query_one(Switch).value


def test_context_detail(snap_compare: Any) -> None:
    """/context twice: first the provider's reported figure, then, after the usage was updated
    from an estimate, the estimated one (the status bar's meter marks it with ~)."""
    reported = {
        "used": 70_000,
        "contextWindow": 100_000,
        "threshold": 80_000,
        "maxOutputTokens": 8_000,
        "source": "reported",
    }
    estimated = {**reported, "used": 74_500, "source": "estimated"}
    client = fixed.FixedClient(usage=[reported, estimated])

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: len(notices(app)) == 2, what="the first report")
        note = {"method": "usage/updated", "params": {"sessionId": fixed.ROOT, "usage": estimated}}
        await app.draw(app.view.apply(note))
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: len(notices(app)) == 3, what="the second report")
        first, second = notices(app)[1:]
        assert first.startswith(
            "Context: 70,000 of 100,000 tokens (70.0%, reported); compaction at 80,000; "
            "10,000 left before it.\nNext request, about 70,000 tokens:"
        )
        assert second.startswith(
            "Context: 74,500 of 100,000 tokens (74.5%, estimated); compaction at 80,000; "
            "5,500 left before it.\nNext request, about 74,500 tokens:"
        )
        assert "Left out: 3 items, replaced by the summary." in second

    assert snap_compare(fixed_app(client), terminal_size=SIZE, run_before=run_before)


def approval_requested(approval_id: str, session: str, agent: str, command: str) -> dict[str, Any]:
    return {
        "method": "approval/requested",
        "params": {
            "conversationId": fixed.CID,
            "sessionId": session,
            "approvalId": approval_id,
            "tool": "shell",
            "summary": command,
            "arguments": {"command": command},
            "reason": "the agent's approval setting is 'always'",
            "agent": agent,
            # What the daemon says "allow for this conversation" covers (docs/protocol.md).
            **_grant(command),
        },
    }


def _grant(command: str) -> dict[str, Any]:
    if "&&" in command:
        return {"grantScope": None, "noGrantReason": "the command uses a shell operator"}
    return {"grantScope": f"shell: exactly the command `{command}`; nothing else"}


def test_approval_prompt(snap_compare: Any) -> None:
    """A subagent asks to run a command, a second request waits behind it: the prompt above the
    composer names the subagent, the command, why it asks and why it cannot be allowed for the
    conversation (a shell operator: no `a` key); it has the focus, so the footer lists its keys."""

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        first = approval_requested("ap1", fixed.CHILD, "explorer", "rm -rf build/ && make")
        await app.draw(app.view.apply(first))
        second = approval_requested("ap2", fixed.ROOT, "default", "git push")
        await app.draw(app.view.apply(second))
        await pilot.pause()
        prompt = app.approval_prompt
        assert prompt.display and prompt.has_focus
        assert prompt.approval is not None and prompt.approval.approval_id == "ap1"

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


def test_approval_deny_message(snap_compare: Any) -> None:
    """`d` opens the line where the user types what the model is told."""

    async def run_before(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, VaalaApp)
        await app.draw(app.view.apply(approval_requested("ap1", fixed.ROOT, "default", "ls /")))
        await pilot.pause()
        await pilot.press("d", *"use the docs")
        field = app.approval_prompt.query_one(DenyMessage)
        field.cursor_blink = False
        assert field.has_focus and field.value == "use the docs"

    assert snap_compare(fixed_app(), terminal_size=SIZE, run_before=run_before)


async def test_help_lists_the_approval_keys() -> None:
    app = fixed_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: any("Approvals" in n for n in notices(app)), what="help")
        text = " ".join(" ".join(n.split()) for n in notices(app))
        for keys in (
            "Ctrl+O reaches it",
            "y allow once",
            "a allow for this conversation",
            "n deny",
            "d deny with a message the model receives (Enter denies, Esc goes back)",
        ):
            assert keys in text
