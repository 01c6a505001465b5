"""The terminal UI attached to the remote daemon (pilot): a turn runs there, in the remote
directory, and the status line names the machine."""

from __future__ import annotations

import pytest
from textual.widgets import Label

from openvaala_server.client.remote import ENV_REMOTE, ENV_SSH
from openvaala_tui.app import VaalaApp
from openvaala_tui.completion import complete
from openvaala_tui.widgets.items import AgentMessage
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd
from tests.tui.conftest import ready, type_and_send, wait_for


async def test_the_tui_runs_a_turn_on_the_remote_daemon(
    sshd: Sshd, remote: Daemon, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    # A relative :dir is the remote home's; this one is absolute, the remote workdir.
    monkeypatch.setenv(ENV_REMOTE, f"remotebox:{remote.workdir}")
    fake.enqueue(Reply().text("Answered ", "remotely."))
    app = VaalaApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        assert app.view.conversation.get("cwd") == str(remote.workdir)
        machine = app.query_one("#status-machine", Label)
        assert machine.display and str(machine.render()) == "on remotebox"
        # `@` offers no path of this machine: the directory is the remote one.
        (remote.workdir / "local-looking.txt").write_text("x")
        assert complete("@loc", 4, app.composer.cwd, local_files=app.composer.local_files) is None
        await type_and_send(pilot, "hello there")
        await wait_for(
            pilot,
            lambda: any(
                "Answered remotely." in str(w.item.get("text"))
                for w in app.transcript.query(AgentMessage)
            ),
            timeout=30,
            what="the remote reply",
        )
        await app.action_quit()
    messages = fake.requests[-1].json["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["hello there"]


async def test_a_remote_directory_that_does_not_exist_is_refused(
    sshd: Sshd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `--cwd` to a missing directory is here: not a TUI stuck on a conversation that could
    never run."""
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    monkeypatch.setenv(ENV_REMOTE, "remotebox:no-such-project")
    app = VaalaApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: not app.is_running, timeout=60, what="the app to exit")
    assert app.return_code == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "no-such-project does not exist on remotebox" in said
