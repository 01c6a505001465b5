"""`/setup` in a TUI attached over `--remote` configures the remote machine: the daemon there
reads its own config.toml, so setup runs there (`ssh -t HOST openvaala setup`), and nothing is
written on this machine (docs/remote.md, "Set-up").

A machine of its own (its own sshd and data directory): setup rewrites that machine's config,
which the package's shared remote daemon must keep."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from openvaala_server.client.remote import ENV_REMOTE, ENV_SSH
from openvaala_server.config import load_config
from openvaala_tui.app import VaalaApp
from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.remote.conftest import assert_no_daemon_here
from tests.support.daemon import Daemon, kill_leftovers, make_daemon, stop_any_server
from tests.support.sshd import Sshd, remote_path, running_sshd
from tests.tui.conftest import demo_config, notices, ready, type_and_send, wait_for

OUTCOMES = ("Model configured", "Setup ")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=None) as fake:  # a local server that takes no key
        fake.json_routes[("GET", "/v1/models")] = shapes.openai_models("fake-model")
        fake.json_routes[("GET", "/props")] = shapes.llamacpp_props(16_384)
        yield fake


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Sshd]]:
    machines = tmp_path_factory.mktemp("setupbox")
    there = make_daemon(machines, demo_config(), name="there")
    env = {
        "OPENVAALA_HOME": str(there.home),
        "OPENVAALA_CONFIG": str(there.config_path),
        "PATH": remote_path(),
    }
    with running_sshd(machines / "sshd", env) as sshd:
        try:
            yield there, sshd
        finally:
            stop_any_server(there)
            kill_leftovers(there)


async def test_setup_over_remote_writes_the_remote_machines_config(
    box: tuple[Daemon, Sshd],
    server: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    there, sshd = box
    here = make_daemon(tmp_path, name="here")
    monkeypatch.setenv("OPENVAALA_HOME", str(here.home))
    monkeypatch.setenv("OPENVAALA_CONFIG", str(here.config_path))
    monkeypatch.setenv(ENV_SSH, sshd.ssh_command)
    monkeypatch.setenv(ENV_REMOTE, f"remotebox:{there.workdir}")
    local_config = here.config_path.read_text()
    server.enqueue(Reply().text("ready"))
    args = f"--provider compatible --base-url {server.base_url()} --model fake-model"
    app = VaalaApp()
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # a headless app cannot
        before = len(notices(app))
        await type_and_send(pilot, f"/setup {args}")
        # The daemon's "Reloaded …" notice may come first: wait for setup's own outcome.
        await wait_for(
            pilot,
            lambda: any(n.startswith(OUTCOMES) for n in notices(app)[before:]),
            timeout=60,
            what="the outcome",
        )
        said = notices(app)[before:]
        await app.action_quit()
    assert any(n.startswith("Model configured") for n in said), said
    assert "fake-model" in load_config(there.config_path).models
    assert here.config_path.read_text() == local_config  # this machine's config untouched
    assert_no_daemon_here(here)
