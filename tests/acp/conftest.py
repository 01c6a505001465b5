"""One daemon on the default config shared by the ACP tests that only need a fresh conversation
(each works in a directory of its own, `workdir`); tests that restart, kill or reconfigure the
daemon start their own with `daemon_factory`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import Daemon, make_daemon, stop_any_server


@pytest.fixture(scope="package")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    daemon = make_daemon(tmp_path_factory.mktemp("acp-daemon"))
    try:
        daemon.start()
        yield daemon
    finally:
        daemon.stop()
        stop_any_server(daemon)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path
