"""A tool's output is on screen while it streams and folds once the call is done (issue 21,
"habits"). The demo model runs a real shell command (in the sandbox) that prints, then waits
for the test to let it finish."""

from __future__ import annotations

from typing import Any

from textual.widgets import Collapsible, Static

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import ToolBlock
from tests.tui.conftest import Clients, demo_config, ready, type_and_send, wait_for


async def test_tool_output_streams_open_and_folds_after(
    daemon_factory: Any, clients: Clients
) -> None:
    daemon = daemon_factory(demo_config())
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    go = daemon.workdir / "go"
    command = "echo first-line; while [ ! -e go ]; do sleep 0.05; done; echo second-line"
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, f"run: {command}")
        await wait_for(pilot, lambda: bool(app.transcript.query(ToolBlock)), what="the tool")
        block = app.transcript.query_one(ToolBlock)
        output = block.query_one(".tool-output", Static)
        folder = block.query_one(Collapsible)
        await wait_for(
            pilot, lambda: "first-line" in str(output.render()), what="the streamed output"
        )
        assert block.status == "running" and not folder.collapsed
        go.touch()
        await wait_for(pilot, lambda: block.status == "done", what="the end of the call")
        await wait_for(pilot, lambda: folder.collapsed, what="folded")
        assert "second-line" in str(output.render())
        folder.collapsed = False  # the user opens it again: the whole output is there
        await pilot.pause()
        assert "first-line" in str(output.render())
