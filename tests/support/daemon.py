"""A real OpenVaala daemon for tests: its own process, a free loopback port, a temporary data
directory and config. Tests talk to it over the real websocket with the real client."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from openvaala_server.client import Client
from openvaala_server.daemon_spawn import ready
from openvaala_server.store.lock import is_locked, read_lock
from openvaala_server.store.paths import DataDir

# Instant demo model and fast retries unless a test says otherwise.
DEFAULT_CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
"""


@dataclass
class Daemon:
    home: Path
    config_path: Path
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    address: str = ""
    token: str = ""
    log_path: Path = field(default_factory=Path)
    # The port `start` asks for: 0 is any free one; a fixed one restarts on the same address
    # (a browser page reconnects only to the address it came from).
    listen_port: int = 0

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["OPENVAALA_HOME"] = str(self.home)
        env["OPENVAALA_CONFIG"] = str(self.config_path)
        return env

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    @property
    def data_dir(self) -> DataDir:
        return DataDir(self.home)

    def start(self, timeout: float = 30) -> None:
        if self.log_path == Path():
            self.log_path = self.home.parent / f"{self.home.name}-server.log"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "openvaala_server",
                    "serve",
                    "--port",
                    str(self.listen_port),
                ],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited at start:\n{self.log()}")
            info = (
                read_lock(self.data_dir.lock_path) if is_locked(self.data_dir.lock_path) else None
            )
            if info and info.address and self.data_dir.token_path.exists():
                self.address = info.address
                self.token = self.data_dir.token_path.read_text().strip()
                if ready(self.address, self.token, timeout=deadline - time.monotonic()):
                    return
            time.sleep(0.03)
        self.kill()  # never leave a half-started daemon behind (its Popen would warn later)
        raise RuntimeError(f"daemon did not start in {timeout} s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        return code

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def start_or_adopt(self, timeout: float = 30) -> None:
        """Start the daemon again, unless a client already did: the clients start one at once
        when a daemon died and its lock is free, and then that one serves (the factory's
        teardown stops it, `stop_any_server`)."""
        if not is_locked(self.data_dir.lock_path):
            try:
                self.start(timeout)
                return
            except RuntimeError:
                if not is_locked(self.data_dir.lock_path):
                    raise
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = read_lock(self.data_dir.lock_path)
            if info and info.address and self.data_dir.token_path.exists():
                self.address = info.address
                self.token = self.data_dir.token_path.read_text().strip()
                if ready(self.address, self.token, timeout=deadline - time.monotonic()):
                    return
            time.sleep(0.03)
        raise RuntimeError(f"no daemon served in {timeout} s:\n{self.log()}")

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""

    async def client(self, name: str = "test", reconnect: bool = True) -> Client:
        return await Client.connect(self.address, self.token, client_name=name, reconnect=reconnect)

    def cli(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "openvaala_server", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def make_daemon(tmp_path: Path, config: str = DEFAULT_CONFIG, name: str = "home") -> Daemon:
    home = tmp_path / name  # the daemon creates it, as on a fresh machine
    config_path = tmp_path / f"{name}-config.toml"
    if "[server]" not in config:
        # A daemon a client starts by itself (`serve start`) takes a free port too: the default
        # one may be held by another test, or by a daemon of the machine's user.
        config += "\n[server]\nport = 0\n"
    config_path.write_text(config)
    workdir = tmp_path / f"{name}-work"
    workdir.mkdir()
    return Daemon(home=home, config_path=config_path, workdir=workdir)


@pytest.fixture
def daemon_factory(tmp_path: Path) -> Iterator[object]:
    started: list[Daemon] = []

    def factory(config: str = DEFAULT_CONFIG, *, start: bool = True, name: str = "home") -> Daemon:
        d = make_daemon(tmp_path, config, name)
        started.append(d)  # before start(): a daemon that fails to start is stopped too
        if start:
            d.start()
        return d

    yield factory
    for d in started:
        d.stop()
        stop_any_server(d)
        kill_leftovers(d)


def stop_any_server(d: Daemon) -> None:
    """Stop a server some client started on this data directory by itself (the editor bridge and
    the TUI restart a daemon that died), so no test leaves one running."""
    if not is_locked(d.data_dir.lock_path):
        return
    info = read_lock(d.data_dir.lock_path)
    if info is None or info.pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and is_locked(d.data_dir.lock_path):
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(info.pid, signal.SIGKILL)


def kill_leftovers(d: Daemon) -> None:
    """Kill every process still running for this data directory, found by its environment
    (Linux /proc): an editor bridge a test's Neovim left behind can start a daemon after the
    teardown stopped the test's own, and that daemon then runs on with no client until the
    machine stops (seen after CI runs). Again a moment later when any was found: one may
    have been starting another."""
    home = f"OPENVAALA_HOME={d.home}".encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for _ in range(2):
        killed = 0
        for entry in proc.iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:  # gone meanwhile, or not ours
                continue
            if home in environ:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed += 1
        if not killed:
            return
        time.sleep(0.2)


@pytest.fixture
def daemon(daemon_factory: object) -> Daemon:
    return daemon_factory()  # type: ignore[operator, no-any-return]
