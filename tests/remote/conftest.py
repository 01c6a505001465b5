"""One sshd and one "remote machine" for the tests of this package (docs/remote.md, "Testing").

The remote machine is a second data directory (`remote`), with its own config naming the fake
provider; the sshd's `SetEnv` points every session at it. The local side (`local`) is a data
directory of its own, where no daemon may ever start: the tests check it stays empty of one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.wire import CHAT
from tests.support.daemon import Daemon, kill_leftovers, make_daemon, stop_any_server
from tests.support.sshd import Sshd, remote_path, running_sshd


@pytest.fixture(scope="package")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(wire=CHAT) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _fresh(fake: FakeProvider) -> None:
    fake.reset()


@pytest.fixture(scope="package")
def machines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("remote")


@pytest.fixture(scope="package")
def remote(fake: FakeProvider, machines: Path) -> Iterator[Daemon]:
    """The remote machine's daemon: not started here, the first bridge starts it."""
    config = (
        fake.config_toml("fake")
        + fake.config_toml("seeing", vision=True)
        + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "never"\n'
        + "\n[retry]\nmax_retries = 0\n"
    )
    d = make_daemon(machines, config, name="remote")
    yield d
    stop_any_server(d)
    kill_leftovers(d)  # a bridge still starting one as the test ended (seen once: a daemon left)


@pytest.fixture(scope="package")
def local(machines: Path) -> Daemon:
    """This machine's data directory, with no daemon."""
    return make_daemon(machines, name="local")


@pytest.fixture(scope="package")
def sshd(remote: Daemon, fake: FakeProvider, machines: Path) -> Iterator[Sshd]:
    remote_env = {
        "OPENVAALA_HOME": str(remote.home),
        "OPENVAALA_CONFIG": str(remote.config_path),
        "PATH": remote_path(),
        **fake.env,
    }
    with running_sshd(machines / "sshd", remote_env) as server:
        yield server


@pytest.fixture(scope="package")
def client_env(sshd: Sshd, local: Daemon) -> dict[str, str]:
    """A local client's environment: its own data directory, `--remote` through the sshd."""
    return sshd.client_env(local.env)


def assert_no_daemon_here(local: Daemon) -> None:
    """No daemon ever ran on this machine's data directory: no token was written there."""
    assert not local.data_dir.token_path.exists()
    assert not local.data_dir.lock_path.exists()
