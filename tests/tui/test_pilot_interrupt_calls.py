"""Interrupting with two tool calls in flight, in the terminal UI against a real daemon: the call
that had not started shows as interrupted, not pending forever (docs/protocol.md).
"""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import ToolBlock
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, ready, type_and_send, wait_for
from tests.tui.test_pilot_turns import AGENT_ON_FAKE


async def test_both_calls_show_interrupted(
    daemon_factory: Any, clients: Clients, fake_openai: FakeProvider
) -> None:
    daemon = daemon_factory(
        fake_openai.config_toml("fake") + AGENT_ON_FAKE + 'approval = "never"\n'
    )
    wait = f"while [ ! -f {daemon.workdir / 'never'} ]; do sleep 0.05; done"
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": wait}).tool_call("shell", {"command": "echo second"})
    )
    client = await clients(daemon)
    app = VaalaApp(cwd=str(daemon.workdir), client=client)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "run both")
        await wait_for(
            pilot,
            lambda: any(b.status == "running" for b in app.transcript.query(ToolBlock)),
            what="the first call to run",
        )
        await pilot.press("escape")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn to end")
        await wait_for(
            pilot,
            lambda: (
                [b.status for b in app.transcript.query(ToolBlock)]
                == ["interrupted", "interrupted"]
            ),
            what="both calls interrupted",
        )
