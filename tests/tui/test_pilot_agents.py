"""Subagents in the terminal UI, against a real daemon: the demo model's `spawn: <task>` starts a
real subagent (the first configured agent) that runs the task and reports back to its parent.
`/agents` lists it with its status, live; from there the user follows it (its transcript, live),
interrupts it and messages it."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input, OptionList

from openvaala_server.client.view import SessionView
from openvaala_tui.app import VaalaApp
from openvaala_tui.screens import AgentsScreen, PromptScreen
from openvaala_tui.widgets.items import AgentMessage, ToolBlock, UserMessage
from tests.tui.conftest import Clients, demo_config, ready, type_and_send, wait_for


def child_of(app: VaalaApp) -> SessionView | None:
    children = [s for s in app.view.sessions.values() if s.info.get("parentSessionId")]
    return children[0] if children else None


def agent_rows(screen: AgentsScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def open_agents(pilot: Any, app: VaalaApp, highlight: int) -> AgentsScreen:
    await type_and_send(pilot, "/agents")
    await wait_for(pilot, lambda: isinstance(app.screen, AgentsScreen), what="the agents tree")
    screen = app.screen
    assert isinstance(screen, AgentsScreen)
    screen.query_one(OptionList).highlighted = highlight
    await pilot.pause()
    return screen


async def test_agents_follow_interrupt_and_message_a_spawned_subagent(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config())
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        root = app.view.root
        assert root is not None
        # The subagent's task makes it run a long shell command, so it is seen running.
        await type_and_send(pilot, "spawn: run: sleep 30")
        await wait_for(
            pilot,
            lambda: (
                (child := child_of(app)) is not None
                and child.running
                and any(i.get("type") == "tool_result" for i in child.items)
            ),
            what="the subagent to run its command",
        )
        child = child_of(app)
        assert child is not None and child.info["depth"] == 1
        assert child.info["parentSessionId"] == app.view.root_id

        # /agents: the tree, the subagent under its parent, running; the list follows live.
        screen = await open_agents(pilot, app, highlight=1)
        rows = agent_rows(screen)
        assert len(rows) == 2
        assert "▶ default" in rows[0]  # the root agent, followed
        assert rows[1].startswith("  ") and "run: sleep 30" in rows[1] and "[running]" in rows[1]

        # Interrupt it from the tree: its turn ends interrupted, and the tree says so live.
        await pilot.press("i")
        await wait_for(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        await wait_for(
            pilot, lambda: child.status == "interrupted", what="the subagent to be interrupted"
        )
        # The interrupted subagent reports to its parent, which answers.
        await wait_for(
            pilot,
            lambda: (
                any(
                    i.get("origin") == "subagent" and i.get("type") == "user_message"
                    for i in root.items
                )
                and not root.running
            ),
            what="the report to the parent",
        )
        assert any(w.item.get("origin") == "subagent" for w in app.transcript.query(UserMessage))

        # Follow it: the transcript is the subagent's, from its parent's task to the
        # interrupted command.
        screen = await open_agents(pilot, app, highlight=1)
        assert "[interrupted]" in agent_rows(screen)[1]
        await pilot.press("f")
        await wait_for(pilot, lambda: app.following == child.session_id, what="following")
        shown = app.transcript.item_widgets
        assert shown[0].item.get("text") == "run: sleep 30"
        assert shown[0].border_title == "parent agent"
        blocks = list(app.transcript.query(ToolBlock))
        assert blocks and blocks[0].status == "interrupted"
        assert "subagent" in str(app.composer.border_title)
        assert "run: sleep 30" in str(app.query_one("#status-title").render())

        # Message it from the tree: it answers in its own transcript (followed, live) and
        # reports to its parent again.
        reports = sum(1 for i in root.items if i.get("origin") == "subagent")
        screen = await open_agents(pilot, app, highlight=1)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the prompt")
        app.screen.query_one(Input).value = "what did you find?"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: any(
                w.item.get("status") == "completed" for w in app.transcript.query(AgentMessage)
            ),
            what="the subagent's answer",
        )
        assert any(
            w.item.get("text") == "what did you find?" and w.border_title == "you"
            for w in app.transcript.query(UserMessage)
        )
        await wait_for(
            pilot,
            lambda: sum(1 for i in root.items if i.get("origin") == "subagent") > reports,
            what="the second report",
        )

        # What is typed while following goes to the subagent, not to the root agent.
        root_count = len(root.items)
        await type_and_send(pilot, "and one more thing")
        await wait_for(
            pilot,
            lambda: any(i.get("text") == "and one more thing" for i in child.items),
            what="the message to the followed subagent",
        )
        assert not any(i.get("text") == "and one more thing" for i in root.items[root_count:])

        # Back to the main agent.
        await open_agents(pilot, app, highlight=0)
        await pilot.press("f")
        await wait_for(pilot, lambda: app.following == app.view.root_id)
        assert app.transcript.item_widgets[0].item.get("text") == "spawn: run: sleep 30"
