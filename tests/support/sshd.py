"""A real OpenSSH server for tests of `--remote` (docs/remote.md, "Testing").

It runs Debian's `sshd` on a free loopback port, as the current user, with a throwaway host key
and a throwaway authorized key. It stands for the remote machine: its `SetEnv` gives every session
there a data directory, config and PATH of its own (`remote_env`), so the bridge a client runs
through it finds (or starts) the "remote" daemon and not the local one. The client's side uses
its own ssh config (`ssh -F`, through `OPENVAALA_SSH_COMMAND`): the host alias `remotebox`, the
key, and a known_hosts file in the temp directory.

Run as root (CI containers), sshd needs its privilege-separation directory, which a container
without a running sshd service lacks: it is created as the Debian service would."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = "/usr/sbin/sshd"
HOST = "remotebox"
START_TIMEOUT_S = 20.0


@dataclass
class Sshd:
    directory: Path
    port: int
    process: subprocess.Popen[bytes]

    @property
    def ssh_config(self) -> Path:
        return self.directory / "ssh_config"

    @property
    def ssh_command(self) -> str:
        return f"ssh -F {self.ssh_config}"

    def client_env(self, base: Mapping[str, str], remote: str = HOST) -> dict[str, str]:
        """The local client's environment: `--remote` through this server."""
        return {**base, "OPENVAALA_SSH_COMMAND": self.ssh_command, "OPENVAALA_REMOTE": remote}

    def log(self) -> str:
        return (self.directory / "sshd.log").read_text(errors="replace")

    def kill_clients(self) -> int:
        """Kill every local `ssh` of this server's config (SIGKILL): a dropped connection."""
        killed = 0
        marker = str(self.ssh_config).encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and Path(argv[0].decode(errors="replace")).name == "ssh" and marker in argv:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed += 1
        return killed


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def start_sshd(directory: Path, remote_env: Mapping[str, str]) -> Sshd:
    """Start sshd for the current user; `pytest.skip` naming why when it cannot run here."""
    if not Path(SSHD).exists() or shutil.which("ssh") is None:
        pytest.skip("openssh-server / openssh-client are not installed (.ci/run installs them)")
    if os.geteuid() == 0 and not Path("/run/sshd").is_dir():
        try:
            Path("/run/sshd").mkdir(mode=0o755)
        except OSError as exc:
            pytest.skip(f"sshd's privilege separation directory /run/sshd is missing: {exc}")
    directory.mkdir(parents=True, exist_ok=True)
    _keygen(directory / "host_key")
    _keygen(directory / "user_key")
    (directory / "authorized_keys").write_bytes((directory / "user_key.pub").read_bytes())
    (directory / "authorized_keys").chmod(0o600)
    port = _free_port()
    set_env = " ".join(f"{k}={v}" for k, v in remote_env.items())
    (directory / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {directory / 'host_key'}\n"
        f"AuthorizedKeysFile {directory / 'authorized_keys'}\nPidFile {directory / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"PermitRootLogin prohibit-password\nSetEnv {set_env}\n"
    )
    (directory / "ssh_config").write_text(
        f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n"
        f"  IdentityFile {directory / 'user_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {directory / 'known_hosts'}\n"
        "  StrictHostKeyChecking accept-new\n  BatchMode yes\n  LogLevel ERROR\n"
    )
    log = open(directory / "sshd.log", "wb")  # noqa: SIM115 - the server's for its life
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(directory / "sshd_config")],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    log.close()
    server = Sshd(directory, port, process)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.skip(f"sshd could not start: {server.log()}")
        probe = subprocess.run(
            ["ssh", "-F", str(server.ssh_config), HOST, "true"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if probe.returncode == 0:
            return server
        time.sleep(0.1)
    stop_sshd(server)
    pytest.skip(f"sshd did not accept the test key: {server.log()}")


def stop_sshd(server: Sshd) -> None:
    server.kill_clients()  # a forward or a bridge a test's client left running
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    for pid in _children(server.process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


def remote_path() -> str:
    """A PATH on which the remote side finds this checkout's `openvaala`."""
    return f"{Path(sys.executable).parent}:/usr/bin:/bin"


@contextlib.contextmanager
def running_sshd(directory: Path, remote_env: Mapping[str, str]) -> Iterator[Sshd]:
    server = start_sshd(directory, remote_env)
    try:
        yield server
    finally:
        stop_sshd(server)
