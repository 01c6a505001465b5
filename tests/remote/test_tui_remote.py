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
