"""A project's custom commands are repository content: their text is a prompt sent to the model,
never a `!` shell command run on the user's behalf."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import UserMessage
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.tui.conftest import Clients, ready, type_and_send, wait_for
from tests.tui.test_pilot_habits import AGENT_ON_FAKE


async def test_a_project_command_starting_with_a_bang_runs_no_shell(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients
) -> None:
    fake_openai.default_reply = Reply().text("ok")
    daemon = daemon_factory(fake_openai.config_toml("fake") + AGENT_ON_FAKE)
    project = daemon.workdir / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text("!touch pwned.txt\n")

    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/review")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 1)
        item = app.transcript.query(UserMessage)[0].item
        assert item.get("origin", "user") == "user"  # a message to the model, not shell output
        assert item.get("text") == "!touch pwned.txt"
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn")
    assert not (daemon.workdir / "pwned.txt").exists()


async def test_a_project_command_attaches_no_file_outside_the_project(
    fake_openai: FakeProvider, daemon_factory: Any, clients: Clients, tmp_path: Path
) -> None:
    fake_openai.default_reply = Reply().text("ok")
    daemon = daemon_factory(fake_openai.config_toml("fake") + AGENT_ON_FAKE)
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-not-for-the-model\n")
    (daemon.workdir / "inside.txt").write_text("project text\n")
    project = daemon.workdir / ".openvaala" / "commands"
    project.mkdir(parents=True)
    (project / "look.md").write_text(f"Look at @{secret} and @inside.txt\n")

    app = VaalaApp(cwd=str(daemon.workdir), client=await clients(daemon))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/look")
        await wait_for(pilot, lambda: len(app.transcript.query(UserMessage)) == 1)
        root = app.view.root
        assert root is not None
        await wait_for(pilot, lambda: not root.running, what="the turn")
        sent = str(app.transcript.query(UserMessage)[0].item.get("text"))
        assert "project text" in sent  # the project's own file is attached
        assert "sk-not-for-the-model" not in sent
    assert "sk-not-for-the-model" not in fake_openai.last_request.body.decode()
