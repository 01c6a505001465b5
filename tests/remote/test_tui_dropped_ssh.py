"""The terminal UI over `--remote` when ssh is killed mid-turn: the status line says ssh to the
machine is lost, the TUI dials again through ssh, and the reply ends whole, once, with no gap
and no duplicate (docs/remote.md, "When ssh drops")."""

from __future__ import annotations

import pytest
from textual.widgets import Label

from openvaala_server.client.remote import ENV_PROGRAM, ENV_REMOTE, ENV_SSH
from openvaala_tui.app import VaalaApp
from openvaala_tui.widgets.items import AgentMessage
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support.daemon import Daemon
from tests.support.sshd import Sshd
from tests.tui.conftest import ready, type_and_send, wait_for


def _replies(app: VaalaApp) -> list[str]:
    return [str(w.item.get("text")) for w in app.transcript.query(AgentMessage)]


async def test_the_tui_resumes_the_turn_after_ssh_is_killed(
    sshd: Sshd, remote: Daemon, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    monkeypatch.setenv(ENV_REMOTE, f"remotebox:{remote.workdir}")
    gate = Gate()
    fake.enqueue(Reply().text("before the drop, ").wait(gate).text("after ", "it."))
    app = VaalaApp()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(pilot)
            await type_and_send(pilot, "go")
            await wait_for(
                pilot,
                lambda: any("before the drop" in r for r in _replies(app)),
                timeout=30,
                what="the first part of the reply",
            )
            assert sshd.kill_clients() >= 1
            lost = app.query_one("#status-connection", Label)
            await wait_for(
                pilot,
                lambda: "ssh to remotebox lost" in str(lost.render()),
                timeout=30,
                what="the status line saying ssh is lost",
            )
            gate.open()  # the turn goes on over there while the TUI is away
            await wait_for(
                pilot,
                lambda: app.view.connection == "connected" and not lost.display,
                timeout=60,
                what="the connection back",
            )
            await wait_for(
                pilot,
                lambda: any(r.endswith("after it.") for r in _replies(app)),
                timeout=30,
                what="the end of the reply",
            )
            assert _replies(app) == ["before the drop, after it."]  # once, whole
            await app.action_quit()
    finally:
        gate.open()


async def test_an_ssh_that_cannot_come_back_says_why(
    sshd: Sshd, remote: Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not `reconnecting…` in silence: the status line gives the last attempt's reason, and
    clears once ssh is back."""
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    monkeypatch.setenv(ENV_REMOTE, f"remotebox:{remote.workdir}")
    app = VaalaApp()
    async with app.run_test(size=(200, 30)) as pilot:
        await ready(pilot)
        lost = app.query_one("#status-connection", Label)
        # From now on the bridge cannot run over there (openvaala "uninstalled").
        monkeypatch.setenv(ENV_PROGRAM, "/nonexistent/openvaala")
        assert sshd.kill_clients() >= 1
        await wait_for(
            pilot,
            lambda: "`/nonexistent/openvaala` is not installed on remotebox" in str(lost.render()),
            timeout=30,
            what="the reason in the status line",
        )
        assert str(lost.render()).startswith("ssh to remotebox lost, reconnecting… (")
        monkeypatch.delenv(ENV_PROGRAM)  # installed again: the next attempt gets through
        await wait_for(
            pilot,
            lambda: app.view.connection == "connected" and not lost.display,
            timeout=60,
            what="the connection back",
        )
        await app.action_quit()
