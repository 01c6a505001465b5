"""Approvals in the terminal UI against the real daemon: the prompt appears above the composer,
its keys answer it, and an answer from another client makes it go away.

The agent is configured `approval = "always"`, so the demo model's `run: CMD` (a shell call)
asks before it runs. The conversations work in a directory of their own (`workdir`): the
daemon's test directory holds its config, which the daemon keeps private from every tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from openvaala_server.client import Client
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.approval import DenyMessage
from openvaala_tui.widgets.items import AgentMessage, ToolBlock
from openvaala_tui.widgets.status import StatusBar
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def approval_config(extra: str = "") -> str:
    return f"""
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "always"
{extra}
"""


async def asked(pilot: Pilot[int], command: str) -> VaalaApp:
    """Send `run: command` and wait until the prompt asks about it."""
    app = await ready(pilot)
    await type_and_send(pilot, f"run: {command}")
    prompt = app.approval_prompt
    await wait_for(
        pilot,
        lambda: prompt.display and prompt.approval is not None,
        what="the approval prompt",
    )
    assert prompt.approval is not None and prompt.approval.summary == command
    return app


async def turn_over(pilot: Pilot[int], app: VaalaApp) -> ToolBlock:
    root = app.view.root
    assert root is not None
    await wait_for(pilot, lambda: not root.running, what="the turn to end")
    await wait_for(pilot, lambda: bool(app.transcript.query(ToolBlock)), what="the tool block")
    block = app.transcript.query_one(ToolBlock)
    await wait_for(pilot, lambda: block.status in ("done", "error"), what="the tool result")
    return block


def state_label(app: VaalaApp) -> str:
    return str(app.query_one(StatusBar).query_one("#status-state").render())


async def test_y_allows_and_the_command_runs(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, "echo hi-from-the-shell")
        prompt = app.approval_prompt
        assert prompt.has_focus  # the composer was empty: the prompt took the focus
        await wait_for(
            pilot,
            lambda: state_label(app) == "waiting for your approval",
            what="the status line",
        )
        root = app.view.root
        assert root is not None and root.running  # Esc would interrupt it
        await pilot.press("y")
        block = await turn_over(pilot, app)
        assert block.status == "done"
        assert "hi-from-the-shell" in block._output()
        assert not prompt.display
        assert app.composer.has_focus  # back to the composer once nothing waits
        assert "Allowed once · shell: echo hi-from-the-shell" in notices(app)
        message = app.transcript.query(AgentMessage).last()
        assert "hi-from-the-shell" in message.source


async def test_n_denies_and_the_tool_result_says_so(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    marker = workdir / "made-by-the-command"
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, f"touch {marker}")
        await pilot.press("n")
        block = await turn_over(pilot, app)
        assert block.status == "error"
        assert "The user denied this call; it did not run." in block._output()
        assert not marker.exists()
        assert f"Denied · shell: touch {marker}" in notices(app)


async def test_d_denies_with_the_message_the_model_receives(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, "echo hi")
        prompt = app.approval_prompt
        await pilot.press("d")
        field = prompt.query_one(DenyMessage)
        assert field.display and field.has_focus
        await pilot.press("escape")  # back to the keys, nothing sent, the turn not interrupted
        assert not field.display and prompt.has_focus and prompt.approval is not None
        root = app.view.root
        assert root is not None and root.running
        await pilot.press("d", *"yes no", "enter")  # letters typed here answer nothing
        block = await turn_over(pilot, app)
        assert block.status == "error"
        assert "Their message: yes no" in block._output()
        assert "Denied · shell: echo hi · “yes no”" in notices(app)


async def test_typing_in_the_composer_is_not_taken_by_the_prompt(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        app.composer.set_text("draft")
        other: Client = await clients(daemon, "other")  # the request starts elsewhere
        await other.request(
            "input/send", {"conversationId": app.view.conversation_id, "text": "run: echo typed"}
        )
        prompt = app.approval_prompt
        await wait_for(pilot, lambda: prompt.display, what="the approval prompt")
        assert app.composer.has_focus
        assert prompt.border_subtitle == "Ctrl+O to answer"
        await pilot.press("y", "a")  # typed into the draft, not answers
        assert app.composer.text == "drafty" + "a"
        assert prompt.approval is not None and not app.view.answered_here
        await pilot.press("ctrl+o", "y")
        block = await turn_over(pilot, app)
        assert block.status == "done" and "typed" in block._output()
        assert app.composer.text == "draftya"


async def test_answered_from_another_client_the_prompt_goes_away(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    other: Client = await clients(daemon, "other")
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, "echo from-elsewhere")
        prompt = app.approval_prompt
        assert prompt.approval is not None
        approval_id = prompt.approval.approval_id
        await other.subscribe(app.view.conversation_id)
        await other.respond_approval(app.view.conversation_id, approval_id, "allow")
        await wait_for(pilot, lambda: not prompt.display, what="the prompt to go")
        block = await turn_over(pilot, app)
        assert "from-elsewhere" in block._output()
        assert (
            "Allowed once · shell: echo from-elsewhere (answered from another client)"
            in notices(app)
        )
        assert app.composer.has_focus


async def test_an_answer_that_came_too_late_is_a_short_notice(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    """The other client answers first, and this one's `y` reaches the daemon after it."""
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    other: Client = await clients(daemon, "other")
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, "echo raced")
        prompt = app.approval_prompt
        assert prompt.approval is not None
        approval_id = prompt.approval.approval_id
        async with app._lock:  # hold the notifications back: this UI has not seen the answer
            await other.subscribe(app.view.conversation_id)
            await other.respond_approval(app.view.conversation_id, approval_id, "deny")
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: any("already answered" in n for n in notices(app)),
                what="the notice",
            )
        block = await turn_over(pilot, app)
        assert block.status == "error"  # the first answer, the other client's deny, counts
        assert "Denied · shell: echo raced (answered from another client)" in notices(app)


async def test_several_approvals_are_answered_one_after_another(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    """A subagent asks, then the root agent: the subagent's request names it, and once it is
    answered the root's shows."""
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "spawn: run: echo child-ran")
        prompt = app.approval_prompt
        await wait_for(
            pilot, lambda: prompt.display and prompt.approval is not None, what="the prompt"
        )
        first = prompt.approval
        assert first is not None and first.summary == "echo child-ran"
        assert first.session_id != app.view.root_id
        title = str(prompt.query_one("#approval-title").render())
        assert title == "Subagent default asks to use shell"
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the root's turn to end")
        await type_and_send(pilot, "run: echo root-ran")  # the composer has the focus now
        await wait_for(pilot, lambda: len(app.view.approvals) == 2, what="a second request")
        assert prompt.approval is first
        assert "(1 more waiting)" in str(prompt.query_one("#approval-title").render())
        await pilot.press("ctrl+o", "y")
        await wait_for(
            pilot,
            lambda: prompt.approval is not None and prompt.approval is not first,
            what="the next request",
        )
        assert prompt.approval is not None and prompt.approval.summary == "echo root-ran"
        assert prompt.has_focus
        assert str(prompt.query_one("#approval-title").render()) == ("The agent asks to use shell")
        await pilot.press("n")
        await wait_for(pilot, lambda: not prompt.display, what="the prompt to go")
        await wait_for(pilot, lambda: not root.running, what="the root's turn to end")
        child = app.view.sessions[first.session_id]
        await wait_for(pilot, lambda: not child.running, what="the subagent's turn to end")
        results = [i for i in child.items if i.get("type") == "tool_result"]
        assert results and "child-ran" in str(results[-1].get("output"))
        denied = [i for i in root.items if i.get("type") == "tool_result"]
        assert "The user denied this call" in str(denied[-1].get("output"))


async def test_esc_interrupts_a_turn_that_waits_and_its_approval_is_denied(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    daemon = daemon_factory(approval_config())
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 40)) as pilot:
        await asked(pilot, "echo never")
        prompt = app.approval_prompt
        await pilot.press("tab")  # the focus can leave the prompt, which stays
        assert app.composer.has_focus and prompt.display
        await pilot.press("escape")
        await wait_for(pilot, lambda: not prompt.display, what="the prompt to go")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn to end")
        assert root.status == "interrupted"
        # This client interrupted: the denial is not put down to another client.
        assert "Denied · shell: echo never · “The user interrupted the turn.”" in notices(app)


async def test_a_conversation_opened_while_a_call_waits_shows_the_prompt(
    daemon_factory: Any, clients: Clients, workdir: Path
) -> None:
    """The question was asked before this UI subscribed: it comes with the snapshot."""
    daemon = daemon_factory(approval_config())
    other: Client = await clients(daemon, "other")
    created = await other.request("conversation/create", {"cwd": str(workdir)})
    cid = str(created["conversation"]["conversationId"])
    await other.subscribe(cid)
    await other.request("input/send", {"conversationId": cid, "text": "run: echo late"})
    while (await other.next_notification())["method"] != "approval/requested":
        pass
    app = VaalaApp(cwd=str(workdir), client=await clients(daemon), conversation_id=cid)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        prompt = app.approval_prompt
        await wait_for(pilot, lambda: prompt.display, what="the prompt")
        assert prompt.approval is not None and prompt.approval.summary == "echo late"
        assert prompt.has_focus
        assert state_label(app) == "waiting for your approval"
        await pilot.press("a")
        block = await turn_over(pilot, app)
        assert "late" in block._output()
        assert any(
            n.startswith("Allowed for this conversation · shell: echo late") for n in notices(app)
        )
