"""Reaching a daemon on another machine through the user's own `ssh` (docs/remote.md).

`--remote [user@]host[:dir]` (or `OPENVAALA_REMOTE`) names the machine. Every connection runs
`ssh host openvaala bridge` with its stdin and stdout on one end of a socket pair; the other end
is the client's socket, on which it speaks the websocket protocol as it does over TCP. The bridge
on the remote machine starts the daemon there if none runs, says it is ready in one JSON line (the
banner), and then relays bytes, adding the daemon's token to the request it forwards: the token
never leaves the remote machine. ssh is the user's (config, agent, jump hosts, ControlMaster);
`OPENVAALA_SSH_COMMAND` replaces it, as `GIT_SSH_COMMAND` does for git."""

from __future__ import annotations

import asyncio
import os
import posixpath
import shlex
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, TypedDict

from openvaala_server.client.remote_spec import (
    ENV_REMOTE,
    NoDirectory,
    Remote,
    configured,
    local_directory,
    parse,
    working_directory,
)
from openvaala_server.protocol import codec

__all__ = [
    "ENV_REMOTE",
    "NoDirectory",
    "Remote",
    "configured",
    "local_directory",
    "parse",
    "working_directory",
]

ENV_SSH = "OPENVAALA_SSH_COMMAND"  # the ssh command line, split as a shell would
ENV_PROGRAM = "OPENVAALA_REMOTE_PROGRAM"  # `openvaala` on the remote machine, when off its PATH
BANNER_LIMIT = 4096  # the bridge's first line; anything longer is not a bridge speaking
READY_TIMEOUT_S = 60.0  # ssh set-up, and a daemon started on demand over there


class RemoteUnavailable(OSError):
    """The remote daemon cannot be reached; the message names the step that failed. An
    `OSError`, so that a client reconnecting after a dropped ssh keeps trying."""


class BannerWire(TypedDict):
    """The bridge's first line, as JSON (`remote/bridge.py` writes it)."""

    bridge: int  # the bridge's protocol: 1
    address: str
    home: str
    pid: int


@dataclass(frozen=True)
class Banner:
    """What the bridge says once the remote daemon answers (none of it secret)."""

    address: str  # the daemon's 127.0.0.1:port over there
    home: str  # the remote user's home: where a relative `dir` is
    pid: int  # the remote daemon: a new one means it restarted


def on_remote(home: str, path: str | None) -> str:
    """`path` on the remote machine whose home is `home`: a relative one (and none) starts
    there, and `~` / `~/…` is that home, as the remote shell would read it: the daemon takes
    the path as it is, and no shell between expands it (`HOST:~/project`, docs/remote.md)."""
    if path is not None and (path == "~" or path.startswith("~/")):
        path = path[2:]
    return posixpath.join(home, path) if path else home


def ssh_command(remote: Remote, *args: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """`ssh host openvaala ARGS…`: the remote shell runs the command, so it is quoted."""
    ssh, command = _ssh_and_program(remote, args, environ)
    # -T: no terminal (bytes pass untouched); -e none: no escape character in the stream.
    return [*ssh, "-T", "-e", "none", "--", remote.destination, command]


def terminal_command(
    remote: Remote, *args: str, environ: Mapping[str, str] | None = None
) -> list[str]:
    """`ssh -t host openvaala ARGS…`: a command that asks its questions on this terminal (the
    TUI's `/setup`), run there so that what it writes is the remote daemon's."""
    ssh, command = _ssh_and_program(remote, args, environ)
    return [*ssh, "-t", "--", remote.destination, command]


def _ssh_and_program(
    remote: Remote, args: tuple[str, ...], environ: Mapping[str, str] | None
) -> tuple[list[str], str]:
    env = os.environ if environ is None else environ
    program = env.get(ENV_PROGRAM) or "openvaala"
    return shlex.split(env.get(ENV_SSH) or "ssh"), shlex.join([program, *args])


def forward_command(
    remote: Remote, local: str, port: int, environ: Mapping[str, str] | None = None
) -> list[str]:
    """`ssh -N -L`: the Unix socket `local` here (in a private directory: only this user
    reaches it, and no other process can take its name first as it could a free TCP port) to
    the remote daemon's 127.0.0.1:port."""
    env = os.environ if environ is None else environ
    ssh = shlex.split(env.get(ENV_SSH) or "ssh")
    forward = f"{local}:127.0.0.1:{port}"
    # -S none (no ControlMaster; unlike `-o ControlPath=none` it wins over an earlier one):
    # through a master, `ssh -N -L` hands the forward to the master and exits at once, leaving
    # nothing to wait on, to open again when ssh drops, or to stop at Ctrl-C.
    options = ["-o", "ExitOnForwardFailure=yes", "-o", "ClearAllForwardings=no", "-S", "none"]
    return [*ssh, "-N", "-T", *options, "-L", forward, "--", remote.destination]


def explain(remote: Remote, returncode: int | None, stderr: str) -> str:
    """Why the bridge did not answer, naming the step to take."""
    said = stderr.strip()
    program = os.environ.get(ENV_PROGRAM) or "openvaala"
    # The bridge's own failures (it runs, so it is installed) may name a missing file too.
    ours = said.startswith("openvaala bridge:")
    if returncode == 127 or (not ours and ("command not found" in said or "No such file" in said)):
        return (
            f"`{program}` is not installed on {remote.host} (or not on the PATH of a "
            f"non-interactive ssh session there): install OpenVaala on {remote.host}, or name "
            f"the program with {ENV_PROGRAM} (ssh said: {said or f'exit {returncode}'})"
        )
    if returncode == 255:
        return f"ssh could not connect to {remote.destination}: {said or 'exit 255'}"
    return f"the bridge on {remote.host} failed (exit {returncode}): {said or 'no message'}"


def _reap(process: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
    """Wait for ssh in a thread, so that it is no zombie once the connection closes."""

    def wait() -> None:
        process.wait()
        errors.close()

    threading.Thread(target=wait, name="openvaala-ssh-reaper", daemon=True).start()


class Dialer:
    """Opens one ssh channel to the remote daemon per connection (a client's first and each
    reconnection); remembers the last banner."""

    def __init__(self, remote: Remote, *args: str) -> None:
        self.remote = remote
        self.args = args or ("bridge",)
        self.banner: Banner | None = None

    def where(self) -> str:
        """The machine and the daemon there, as `/status` says it."""
        there = f" (daemon at {self.banner.address} there)" if self.banner is not None else ""
        return f"{self.remote.host} over ssh{there}"

    def resolve(self, path: str | None) -> str:
        """A path on the remote machine: relative ones (and none) start at the remote home."""
        return on_remote(self.banner.home if self.banner is not None else "", path)

    async def open(self) -> socket.socket:
        ours, process, errors = _spawn(ssh_command(self.remote, *self.args))
        try:
            line = await asyncio.wait_for(_read_line(ours), READY_TIMEOUT_S)
            self.banner = _banner(line)
        except (OSError, EOFError, ValueError, TimeoutError) as exc:
            ours.close()
            code = await asyncio.to_thread(_exit_code, process)
            with errors:
                errors.seek(0)
                said = errors.read().decode(errors="replace")
            # What the bridge did not say right (a shell's greeting, another version) is the
            # reason when ssh itself said nothing.
            said = said or str(exc) or "no answer"
            raise RemoteUnavailable(explain(self.remote, code, said)) from None
        _reap(process, errors)
        return ours


def _spawn(command: list[str]) -> tuple[socket.socket, subprocess.Popen[bytes], IO[bytes]]:
    """ssh with its stdin and stdout on one end of a socket pair; (the other end, ssh, the file
    its stderr goes to). A file, not a pipe: nothing has to read it while the connection lasts."""
    ours, theirs = socket.socketpair()
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed once ssh has exited
    try:
        # A session of its own: the terminal's Ctrl-C is the client's to handle (an `exec`
        # interrupts the turn), not a signal that cuts the connection under it.
        process = subprocess.Popen(
            command,
            stdin=theirs.fileno(),
            stdout=theirs.fileno(),
            stderr=errors,
            start_new_session=True,
        )
    except OSError as exc:
        ours.close()
        errors.close()
        raise RemoteUnavailable(f"cannot run ssh: {exc}") from None
    finally:
        theirs.close()
    return ours, process, errors


def _exit_code(process: subprocess.Popen[bytes]) -> int | None:
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        return None


async def _read_line(sock: socket.socket) -> bytes:
    """The banner, byte by byte: nothing follows it until the client speaks, but reading
    past it would take the start of the stream from the websocket."""
    loop = asyncio.get_running_loop()
    sock.setblocking(False)
    line = bytearray()
    while not line.endswith(b"\n"):
        chunk = await loop.sock_recv(sock, 1)
        if not chunk:
            raise EOFError("the bridge closed before it was ready")
        line += chunk
        if len(line) > BANNER_LIMIT:
            raise ValueError("the remote side did not answer as an OpenVaala bridge")
    return bytes(line)


def _banner(line: bytes) -> Banner:
    try:
        value = codec.parse(line)
    except codec.JSONDecodeError:
        raise ValueError(f"not an OpenVaala bridge: {line[:200]!r}") from None
    if not isinstance(value, dict) or value.get("bridge") != 1:
        raise ValueError(f"not an OpenVaala bridge: {line[:200]!r}")
    address, home, pid = value.get("address"), value.get("home"), value.get("pid")
    if not isinstance(address, str) or not isinstance(home, str) or not isinstance(pid, int):
        raise ValueError(f"the bridge's banner lacks its address, home or pid: {line[:200]!r}")
    return Banner(address, home, pid)
