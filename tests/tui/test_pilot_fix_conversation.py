"""A conversation whose agent is no longer configured, or whose directory was removed, says so
when opened and is fixed from the TUI: `/agent NAME` and `/cwd PATH` (docs/protocol.md,
conversation/setAgent and conversation/setCwd)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from textual.widgets import Label

from openvaala_tui import commands
from openvaala_tui.app import VaalaApp
from openvaala_tui.completion import complete
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for
from tests.tui.fake_client import FakeClient
from tests.tui.fake_shapes import CWD, agent

MODELS = """
[models.demo]
provider = "demo"
pace_ms = 0
"""

AGENTS = """
[agents.default]
description = "General assistant"
model = "demo"

[agents.other]
description = "Another"
model = "demo"
"""

CODER = """
[agents.coder]
description = "Writes code"
model = "demo"
"""


async def _saved(daemon: Daemon, cwd: Path, **extra: Any) -> str:
    """A stored conversation (one turn done) in `cwd`."""
    client = await daemon.client(reconnect=False)
    try:
        cid = await new_conversation(client, str(cwd), **extra)
        await run_turn(client, cid, "hello")
    finally:
        await client.close()
    return cid


def _tool_outputs(app: VaalaApp) -> list[str]:
    root = app.view.root
    items = root.items if root is not None else []
    return [
        str(i.get("output") or "")
        for i in items
        if i.get("type") == "tool_result" and i.get("status") == "completed"
    ]


def _status_model(app: VaalaApp) -> str:
    return str(app.query_one("#status-model", Label).render())


async def test_a_missing_agent_is_said_and_another_is_chosen_with_slash_agent(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon: Daemon = daemon_factory(MODELS + AGENTS + CODER)
    cid = await _saved(daemon, daemon.workdir, agent="coder")
    daemon.stop()
    daemon.config_path.write_text(MODELS + AGENTS)  # coder is gone
    daemon.start()
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client, conversation_id=cid)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(
            pilot,
            lambda: any("'coder' is not configured here" in n for n in notices(app)),
            what="the missing agent warning",
        )
        [warning] = [n for n in notices(app) if "'coder'" in n]
        assert "/agent NAME" in warning

        await type_and_send(pilot, "run: echo refused")
        await wait_for(
            pilot,
            lambda: any("available: default, other" in n for n in notices(app)),
            what="the refused send to name the agents there are",
        )
        refused = [n for n in notices(app) if "available: default, other" in n][-1]
        assert "/agent NAME" in refused
        assert "conversation/" not in refused

        await type_and_send(pilot, "/agent other")
        await wait_for(
            pilot, lambda: _status_model(app).startswith("other"), what="the new agent shown"
        )
        await type_and_send(pilot, "run: echo hi")
        await wait_for(
            pilot,
            lambda: any(o.splitlines()[:1] == ["hi"] for o in _tool_outputs(app)),
            what="the shell tool of the chosen agent",
        )


async def test_slash_agent_alone_lists_the_agents_to_pick_from() -> None:
    # The picker and the request it sends: on a fake client (tests/tui/fake_client.py) with
    # AGENTS' two agents, announcing the switch as the daemon does (session/updated).
    fake = FakeClient(agents=(agent("default"), agent("other", description="Another")))
    fake.on(
        "conversation/setAgent",
        lambda p: fake.update_session(str(p["conversationId"]), agent=p["agent"]),
    )
    app = VaalaApp(cwd=CWD, client=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/agent")
        await wait_for(pilot, lambda: bool(app.screen.query("#picker-list")), what="the list")
        await pilot.press("enter")  # the list opens on its last entry: "other"
        await wait_for(
            pilot, lambda: _status_model(app).startswith("other"), what="the picked agent"
        )
        assert [p["agent"] for p in fake.params_of("conversation/setAgent")] == ["other"]


async def test_a_removed_directory_is_said_and_pointed_elsewhere_with_slash_cwd(
    daemon: Daemon, clients: Clients, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "old"
    project.mkdir(parents=True)
    cid = await _saved(daemon, project)
    shutil.rmtree(project)
    moved = tmp_path / "projects" / "new"
    moved.mkdir()
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client, conversation_id=cid)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await wait_for(
            pilot,
            lambda: any(f"{project} does not exist" in n for n in notices(app)),
            what="the missing directory warning",
        )
        [warning] = [n for n in notices(app) if f"{project} does not exist" in n]
        assert "/cwd PATH" in warning

        await type_and_send(pilot, "/cwd ../nowhere")
        await wait_for(
            pilot,
            lambda: any(f"{tmp_path / 'projects' / 'nowhere'} does not" in n for n in notices(app)),
            what="a directory that does not exist refused",
        )
        # Relative to the conversation's directory, even though that one is gone.
        await type_and_send(pilot, "/cwd ../new")
        await wait_for(
            pilot,
            lambda: app.view.conversation.get("cwd") == str(moved),
            what="the conversation pointed at the new directory",
        )
        assert app.composer.cwd == str(moved)
        await type_and_send(pilot, "run: pwd")
        await wait_for(
            pilot,
            lambda: any(o.splitlines()[:1] == [str(moved)] for o in _tool_outputs(app)),
            what="the shell to run in the new directory",
        )


def test_the_commands_are_in_the_popup_and_help() -> None:
    popup = complete("/cw", 3, "/")
    assert popup is not None and [value for value, _ in popup.candidates] == ["/cwd"]
    popup = complete("/agent", 6, "/")  # typed in full: Enter sends it, not "/agents"
    assert popup is not None and [value for value, _ in popup.candidates] == ["/agent", "/agents"]
    assert "/agent" in commands.HELP and "/cwd" in commands.HELP
    assert commands.resolve_dir("~/src", "/work") == str(Path.home() / "src")
    assert commands.resolve_dir("../b", "/work/a") == "/work/b"
