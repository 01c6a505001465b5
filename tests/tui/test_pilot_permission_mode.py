"""The conversation's permission mode from the terminal (docs/security.md, "Permission modes"):
Shift+Tab cycles it and the footer shows it; under `ask` a write asks, under `auto-edit` it runs,
under `plan` it is refused; a switch from another client reaches the footer. (Shift+Tab pressed
twice quickly: test_permission_mode_fake_client.py, no daemon.)

One daemon for the module; the demo model's `call: write_file {...}` makes the write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.footer import QuietFooter
from openvaala_tui.widgets.items import ToolBlock
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.running import running_daemon
from tests.tui.conftest import Clients, ready, type_and_send, wait_for


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("modes"), DEFAULT_CONFIG) as d:
        yield d


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def footer_mode(app: VaalaApp) -> str | None:
    return app.query_one(QuietFooter).permission_mode


def shown_mode(app: VaalaApp) -> str:
    """The footer's text for the mode, as drawn."""
    keys = app.query_one(QuietFooter).query(".-permission-mode")
    return str(keys.first().render()) if keys else ""


async def mode_is(pilot: Pilot[int], app: VaalaApp, mode: str) -> None:
    await wait_for(pilot, lambda: footer_mode(app) == mode, what=f"mode {mode} in the footer")
    await wait_for(pilot, lambda: f"mode: {mode}" in shown_mode(app), what="the footer drawn")


def write(path: Path, content: str) -> str:
    return "call: write_file " + json.dumps({"path": str(path), "content": content})


async def last_tool(pilot: Pilot[int], app: VaalaApp, count: int) -> ToolBlock:
    root = app.view.root
    assert root is not None
    await wait_for(pilot, lambda: len(app.transcript.query(ToolBlock)) == count, what="the call")
    block = list(app.transcript.query(ToolBlock))[-1]
    await wait_for(pilot, lambda: block.status in ("done", "error"), what="the tool result")
    await wait_for(pilot, lambda: not root.running, what="the turn to end")
    return block


async def test_shift_tab_cycles_and_ask_asks_where_auto_edit_writes(
    home: Daemon, clients: Clients, workdir: Path
) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await mode_is(pilot, app, "auto-edit")  # the agent's configuration
        await pilot.press("shift+tab")
        await mode_is(pilot, app, "plan")
        await pilot.press("shift+tab")
        await mode_is(pilot, app, "ask")
        assert app.composer.has_focus  # the key cycled the mode, it did not move the focus

        await type_and_send(pilot, write(workdir / "asked.txt", "one"))
        prompt = app.approval_prompt
        await wait_for(pilot, lambda: prompt.approval is not None, what="the approval prompt")
        assert prompt.approval is not None
        assert 'permission mode is "ask"' in prompt.approval.reason
        prompt.focus()
        await pilot.press("y")
        await last_tool(pilot, app, 1)
        assert (workdir / "asked.txt").read_text() == "one"

        await pilot.press("shift+tab")
        await mode_is(pilot, app, "auto-edit")
        await type_and_send(pilot, write(workdir / "free.txt", "two"))
        block = await last_tool(pilot, app, 2)
        assert block.status == "done"
        assert (workdir / "free.txt").read_text() == "two"
        assert prompt.approval is None  # never asked


async def test_plan_mode_refuses_a_write(home: Daemon, clients: Clients, workdir: Path) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await mode_is(pilot, app, "auto-edit")
        await pilot.press("shift+tab")
        await mode_is(pilot, app, "plan")
        await type_and_send(pilot, write(workdir / "planned.txt", "no"))
        block = await last_tool(pilot, app, 1)
        assert block.status == "error"
        assert "plan mode" in str(block.result.get("output") if block.result else "")
        assert not (workdir / "planned.txt").exists()
        assert app.approval_prompt.approval is None  # refused, not asked


async def test_a_switch_from_another_client_reaches_the_footer(
    home: Daemon, clients: Clients, workdir: Path
) -> None:
    app = VaalaApp(cwd=str(workdir), client=await clients(home))
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await mode_is(pilot, app, "auto-edit")
        other = await clients(home, name="raw")
        await other.request(
            "conversation/setPermissionMode",
            {"conversationId": app.view.conversation_id, "mode": "ask"},
        )
        await mode_is(pilot, app, "ask")
        await app.slash("approvals", "plan")  # Codex's /approvals picks it too
        await mode_is(pilot, app, "plan")
