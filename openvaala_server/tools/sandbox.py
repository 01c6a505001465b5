"""How a tool's process is confined: the bubblewrap command line and the scrubbed environment.

Every command the shell tool starts runs under `bwrap` (bubblewrap) when it is installed:
- a new PID namespace whose init dies with the command (and with the daemon, --die-with-parent),
  so nothing the command starts — setsid, nohup, a double fork — outlives the call;
- the daemon's protected paths (its data directory and configuration) hidden in every mode;
- "workspace": the filesystem read-only except the working directory and a private /tmp;
  "read-only": read-only except the private /tmp; both without the network unless allowed;
- "off": the whole filesystem writable and the host network, but still the PID namespace and the
  hidden paths (docs/security.md says what each mode promises).

A sandboxed call where bwrap is missing or cannot create namespaces fails with a message saying
what to install or which setting to change; it never runs unconfined instead. Only "off", which
promises no sandbox, runs without bwrap there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from openvaala_server.domain.permissions import Confinement, Limits
from openvaala_server.tools import limits, pins, vcs_dirs

log = logging.getLogger(__name__)

# Names the bwrap binary to use instead of the one on PATH: a path, or "" for "not installed"
# (tests and benchmarks use it to see the behaviour of a machine without bubblewrap).
BWRAP_ENV: Final = "OPENVAALA_BWRAP"
# Every OPENVAALA_* variable configures the daemon itself; no tool process inherits them.
DAEMON_ENV_PREFIX: Final = "OPENVAALA_"
# Bound on the one-time check that bwrap can create the namespaces it needs.
_PROBE_TIMEOUT_S: Final = 10.0
# Unix sockets under /run (Docker, D-Bus, systemd) are reachable through a read-only bind: a
# sandboxed command gets an empty /run instead.
_RUN_DIR: Final = Path("/run")

# The kernel's and devices' directories: a sandboxed call gets its own, so a working directory
# inside them would bring the host's back (its /proc leads to every process's root).
_SYSTEM_DIRS: Final = ("/proc", "/sys", "/dev")

INSTALL_HINT: Final = (
    "Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: "
    '`dnf install bubblewrap`), or set `sandbox = "off"` for this agent in config.toml '
    "(docs/security.md explains what that gives up)."
)


class SandboxUnavailable(Exception):
    """bwrap is missing or cannot create namespaces here; the message says what to do."""


@dataclass(frozen=True)
class _Probe:
    ok: bool
    detail: str = ""
    # False for an answer a loaded machine may change (a timeout): asked again next call.
    final: bool = True


# One probe per bwrap path: namespaces don't come and go while the daemon runs.
_probes: dict[str, _Probe] = {}
_warned_unconfined = False


def bwrap_path() -> str | None:
    """The bwrap to run, or None where it is not installed."""
    override = os.environ.get(BWRAP_ENV)
    if override is not None:
        return override if override and os.access(override, os.X_OK) else None
    return shutil.which("bwrap")


async def usable_bwrap(mode: str) -> str | None:
    """The bwrap a call in `mode` runs under; None when "off" must do without one.

    Raises SandboxUnavailable when a sandboxed mode cannot be enforced here.
    """
    global _warned_unconfined
    path = bwrap_path()
    problem = None
    if path is None:
        problem = "bubblewrap (`bwrap`) is not installed"
    else:
        probe = _probes.get(path) or await _probe(path)
        if probe.final:
            _probes[path] = probe
        if not probe.ok:
            problem = f"bubblewrap ({path}) cannot create a sandbox here: {probe.detail}"
    if problem is None:
        return path
    if mode != "off":
        raise SandboxUnavailable(
            f"The sandbox ({mode!r}) cannot run this command: {problem}. {INSTALL_HINT}"
        )
    if not _warned_unconfined:
        _warned_unconfined = True
        log.warning(
            "%s: shell commands of agents with sandbox = off run without a PID namespace and "
            "can read the daemon's data directory (docs/security.md)",
            problem,
        )
    return None


async def _probe(path: str) -> _Probe:
    argv = [path, *_namespace_args(network=False), "--ro-bind", "/", "/", "--proc", "/proc"]
    argv += ["--dev", "/dev", "true"]
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(_PROBE_TIMEOUT_S):
            _, stderr = await process.communicate()
    except OSError as exc:
        return _Probe(False, str(exc))
    except TimeoutError:
        process.kill()
        await process.wait()
        return _Probe(False, f"`bwrap … true` did not finish in {_PROBE_TIMEOUT_S:g} s", False)
    if process.returncode != 0:
        text = stderr.decode(errors="replace").strip() or f"exit code {process.returncode}"
        return _Probe(False, text + " (are unprivileged user namespaces disabled?)")
    return _Probe(True)


def _namespace_args(*, network: bool) -> list[str]:
    args = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    # The command's init dies with the daemon; the kernel then kills the whole namespace.
    return [*args, "--die-with-parent"]


def bwrap_argv(bwrap: str, argv: list[str], cwd: Path, confinement: Confinement) -> list[str]:
    """The command line that runs `argv` in `cwd` under `confinement`."""
    args = [bwrap, *_namespace_args(network=confinement.network)]
    real = os.path.realpath(cwd)
    protected = [os.path.realpath(path) for path in confinement.protected]
    if confinement.mode == "off":
        # Everything as it is, devices included; only a fresh /proc (so `ps` and `kill` see
        # the processes of this call), a read-only /sys (a call stays in its control groups)
        # and the hidden paths differ.
        args += ["--dev-bind", "/", "/", "--proc", "/proc", *_read_only_sys()]
        args += pins.pin_args(protected, "/")
    else:
        args += ["--ro-bind", "/", "/"]
        system = _system_mounts(confinement.limits)
        # A working directory under /tmp is bound after the private /tmp, which would cover it;
        # one that holds a system directory (`/`) before them, as its bind brings the host's
        # /proc (and the token through /proc/<daemon>/root), /tmp, /run and /sys along.
        for mount, mount_args in system:
            if Path(real).is_relative_to(mount):
                args += mount_args
        # By its real path, which a symlinked working directory leads to.
        bind = "--bind" if confinement.mode == "workspace" else "--ro-bind"
        args += [bind, real, real]
        if confinement.mode == "workspace":
            # Before the hiding mounts: a bind brings the host's tree and would cover them.
            args += pins.pin_args(protected, real)
        for mount, mount_args in system:
            if not Path(real).is_relative_to(mount):
                args += mount_args
        if confinement.mode == "workspace":
            args += pins.read_only_repository_args(real)
    args += hide_args(confinement.protected)
    return [*args, "--chdir", str(cwd), "--", *argv]


def _system_mounts(bounds: Limits) -> list[tuple[str, list[str]]]:
    """The sandbox's own /dev, /proc, /tmp and /run and a read-only /sys, by mount point."""
    return [
        ("/dev", ["--dev", "/dev", *limits.shm_args(bounds)]),
        ("/proc", ["--proc", "/proc"]),
        ("/tmp", limits.tmp_args(bounds)),
        (str(_RUN_DIR), _run_dir_args()),
        ("/sys", _read_only_sys()),
    ]


def _read_only_sys() -> list[str]:
    return ["--ro-bind", "/sys", "/sys"] if os.path.isdir("/sys") else []


def _run_dir_args() -> list[str]:
    if not _RUN_DIR.is_dir():
        return []
    args = ["--tmpfs", str(_RUN_DIR)]
    # With systemd-resolved, /etc/resolv.conf points into /run: keep name resolution working.
    resolv = Path(os.path.realpath("/etc/resolv.conf"))
    if resolv.is_relative_to(_RUN_DIR) and resolv.is_file():
        args += ["--ro-bind", str(resolv), str(resolv)]
    return args


def hide_args(protected: tuple[Path, ...]) -> list[str]:
    """Mounts that make each protected path unreadable: an empty directory, or /dev/null."""
    args: list[str] = []
    for path in protected:
        # The real path: a symlink to it then leads to the hidden one too.
        real = os.path.realpath(path)
        if os.path.isdir(real):
            # Read-only too, so nothing can be written where the data directory was.
            args += ["--tmpfs", real, "--remount-ro", real]
        elif os.path.exists(real):
            args += ["--ro-bind", "/dev/null", real]
    return args


def ensure_private_dir(path: Path) -> None:
    """Create a protected directory that does not exist yet (mode 0700), so it can be hidden.

    A missing one cannot be covered by a mount, and a tool could then create it with its own
    content (a config naming `sandbox = "off"`)."""
    if not path.is_dir():
        with contextlib.suppress(OSError):  # unwritable parent: nothing a tool can create either
            path.mkdir(mode=0o700, parents=True, exist_ok=True)


def ensure_private_file(path: Path) -> None:
    """Create a protected file that does not exist yet, empty (0600, its new directories 0700),
    so it can be hidden: a key file named in the config before `openvaala setup` writes it.

    A missing one cannot be covered by a mount, and a tool could then create it, or a link in
    its place through which the key stored next would be written where the agent reads it."""
    real = Path(os.path.realpath(path))  # a dangling link: its target is what gets written
    if os.path.lexists(real):
        return
    with contextlib.suppress(OSError):  # unwritable: nothing a tool can create there either
        real.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        os.close(os.open(real, flags, 0o600))


def scrubbed_env(hidden: frozenset[str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a tool's process: the daemon's, less the hidden and OPENVAALA_* names."""
    source = os.environ if base is None else base
    return {
        key: value
        for key, value in source.items()
        if key not in hidden and not key.startswith(DAEMON_ENV_PREFIX)
    }


def sandboxed_env(env: dict[str, str], confinement: Confinement) -> dict[str, str]:
    """`env` adjusted to the sandbox: temporary files go to the private /tmp."""
    if confinement.mode != "off":
        env["TMPDIR"] = "/tmp"
    return env


def working_dir_problem(cwd: Path, confinement: Confinement) -> str | None:
    """Why a command cannot run in `cwd` at all under `confinement`, if it cannot."""
    real = Path(os.path.realpath(cwd))
    if confinement.mode != "off" and any(real.is_relative_to(d) for d in _SYSTEM_DIRS):
        return (
            f"The working directory {cwd} is inside {', '.join(_SYSTEM_DIRS)}, which the "
            "sandbox replaces with its own; tools cannot run there sandboxed."
        )
    if confinement.mode == "workspace" and (links := vcs_dirs.own_links(str(real))):
        return (
            f"{links[0]} is a symbolic link: a command could replace it with a repository of its "
            "own, whose hooks your next git command would run, so `workspace` cannot run here. "
            "Replace the link by a `.git` file (`gitdir: <path>`), or use an agent with "
            '`sandbox = "read-only"`.'
        )
    for path in confinement.protected:
        if real.is_relative_to(os.path.realpath(path)):
            return (
                f"The working directory {cwd} is inside {path}, which the daemon keeps private "
                "(its data or configuration); tools cannot run there."
            )
    return None
