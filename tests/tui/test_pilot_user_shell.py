"""`!command`: the user runs a shell command through the daemon, in the agent's sandbox; the
output joins the conversation and the model reads it with the next message."""

from __future__ import annotations

from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import UserMessage
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, notices, ready, type_and_send, wait_for

AGENT_ON_FAKE = """
[agents.default]
description = "General assistant"
model = "fake"
sandbox = "read-only"
"""


def shown(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(UserMessage)]


async def test_bang_runs_a_command_whose_output_the_model_reads(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    fake_openai.default_reply = Reply().text("ok")
    daemon = daemon_factory(fake_openai.config_toml("fake") + AGENT_ON_FAKE)
    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "!echo answer-$((40+2)); pwd; touch made.txt")
        await wait_for(pilot, lambda: len(shown(app)) == 1, what=f"the output ({notices(app)})")
        text = shown(app)[0]
        assert "$ echo answer-$((40+2)); pwd; touch made.txt" in text
        assert "answer-42" in text
        assert str(daemon.workdir) in text  # it ran in the conversation's directory
        assert not (daemon.workdir / "made.txt").exists()  # in the agent's read-only sandbox
        assert not fake_openai.requests  # no turn started
        await type_and_send(pilot, "what did it print?")
        await wait_for(pilot, lambda: bool(fake_openai.requests), what="the next turn")
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn")
        assert "answer-42" in fake_openai.last_request.body.decode()
