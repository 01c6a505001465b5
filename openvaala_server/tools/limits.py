"""Per-call limits of a shell command: processes, memory and the private /tmp (docs/security.md).

- The private /tmp is a tmpfs of `tmp_mb` (bwrap `--size`): full, a write fails with ENOSPC.
- Processes and memory, all of the call's processes together, are bounded by a control group of
  the call's own (`pids.max`, `memory.max` / `memory.limit_in_bytes`) when the daemon may make
  one under its own (cgroup v1, or a v2 group whose controllers are delegated); the group's
  counters then tell which limit was hit. Elsewhere each process gets resource limits instead
  (`RLIMIT_NPROC`, `RLIMIT_DATA`), and a hit is recognised from the command's own error message.
  Resource limits do not bind root: as root without a usable cgroup only /tmp is bounded.

A command that hit a limit fails with a line naming it and the setting that raises it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from openvaala_server.domain.permissions import Limits

log = logging.getLogger(__name__)

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
_MB: Final = 1024 * 1024
_serial = itertools.count()

# What a command prints when a resource limit (not a cgroup) stopped it.
_PROCESS_ERRORS: Final = re.compile(r"fork: .*Resource temporarily unavailable|Cannot fork")
_MEMORY_ERRORS: Final = re.compile(
    r"MemoryError|Cannot allocate memory|[Oo]ut of memory|std::bad_alloc|"
    r"memory allocation .*failed|failed to allocate"
)
_TMP_FULL: Final = re.compile(r"No space left on device")
_GROUP_NAME: Final = re.compile(r"openvaala-(\d+)-\d+")


def tmp_args(limits: Limits) -> list[str]:
    """The private /tmp, bounded: to put in place of a plain `--tmpfs /tmp`."""
    return ["--size", str(limits.tmp_mb * _MB), "--tmpfs", "/tmp"]


def shm_args(limits: Limits) -> list[str]:
    """A /dev/shm of `tmp_mb` too: bwrap's `--dev` makes one of half the RAM otherwise."""
    return ["--size", str(limits.tmp_mb * _MB), "--tmpfs", "/dev/shm"]


@dataclass(frozen=True)
class _Hierarchy:
    controller: str  # "pids" or "memory"
    base: Path  # the daemon's own group: a call's group is made under it
    v2: bool


def _hierarchies() -> list[_Hierarchy]:
    """Where the daemon may make a call's group, for each controller it may use."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found: list[_Hierarchy] = []
    for line in lines:
        number, controllers, path = line.split(":", 2)
        for name in ("pids", "memory"):
            if name in controllers.split(","):
                found.append(_Hierarchy(name, CGROUP_ROOT / name / path.lstrip("/"), False))
        if number == "0" and not controllers and (CGROUP_ROOT / "cgroup.controllers").exists():
            base = CGROUP_ROOT / path.lstrip("/")
            with contextlib.suppress(OSError):
                delegated = (base / "cgroup.subtree_control").read_text().split()
                found += [_Hierarchy(n, base, True) for n in ("pids", "memory") if n in delegated]
    usable = [h for h in found if os.access(h.base, os.W_OK)]
    for hierarchy in usable:
        _remove_stale(hierarchy.base)
    return list({h.controller: h for h in usable}.values())


def _remove_stale(base: Path) -> None:
    """Remove the groups a daemon that is gone left behind (its last calls' groups)."""
    with contextlib.suppress(OSError), os.scandir(base) as entries:
        for entry in entries:
            match = _GROUP_NAME.fullmatch(entry.name)
            if match and not _alive(int(match[1])):
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_usable: list[_Hierarchy] | None = None


def _cached_hierarchies() -> list[_Hierarchy]:
    global _usable
    if _usable is None:
        _usable = _hierarchies()
    return _usable


class CallLimits:
    """The limits of one running command: its groups (if any) and how to tell what it hit."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._groups: dict[str, tuple[_Hierarchy, Path]] = {}
        _remove_leftovers()
        for hierarchy in _cached_hierarchies():
            group = hierarchy.base / f"openvaala-{os.getpid()}-{next(_serial)}"
            try:
                group.mkdir()
                self._set_limit(hierarchy, group)
            except OSError as exc:
                log.debug("no %s group for a command: %s", hierarchy.controller, exc)
                with contextlib.suppress(OSError):
                    group.rmdir()
                continue
            self._groups[hierarchy.controller] = (hierarchy, group)

    def _set_limit(self, hierarchy: _Hierarchy, group: Path) -> None:
        if hierarchy.controller == "pids":
            (group / "pids.max").write_text(str(self.limits.processes))
        elif hierarchy.v2:
            (group / "memory.max").write_text(str(self.limits.memory_mb * _MB))
        else:
            (group / "memory.limit_in_bytes").write_text(str(self.limits.memory_mb * _MB))

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started by a shell that first joins the groups, or else sets the resource
        limits (inherited by everything it starts), then `exec`s it: the same process.

        A shell rather than a `preexec_fn`: with one, Python forks the whole daemon instead of
        using vfork, which costs more than the shell (bench/sandbox.py)."""
        procs = [str(group / "cgroup.procs") for _h, group in self._groups.values()]
        steps = [f'echo $$ > "${number}"' for number in range(1, len(procs) + 1)]
        shell = "/bin/sh"
        if "pids" not in self._groups or "memory" not in self._groups:
            bash = shutil.which("bash")  # `ulimit -u` (processes) is bash's
            if bash is None:
                log.warning("no bash: commands run without process and memory limits")
            else:
                shell = bash
                if "pids" not in self._groups:
                    steps.append(f"ulimit -u {self.limits.processes}")
                if "memory" not in self._groups:
                    steps.append(f"ulimit -d {self.limits.memory_mb * 1024}")
        if not steps:
            return argv
        script = " && ".join([*steps, f"shift {len(procs)}", 'exec "$@"'])
        return [shell, "-c", script, "openvaala-limits", *procs, *argv]

    def hit(self, output: str) -> list[str]:
        """The limits the command ran into, as lines for its result."""
        hits: list[str] = []
        if self._counted("pids") or ("pids" not in self._groups and _PROCESS_ERRORS.search(output)):
            hits.append(
                f"[the command hit the process limit ({self.limits.processes} processes: "
                "`limits.processes` of this agent); it could not start more]"
            )
        if self._counted("memory") or (
            "memory" not in self._groups and _MEMORY_ERRORS.search(output)
        ):
            hits.append(
                f"[the command hit the memory limit ({self.limits.memory_mb} MB: "
                "`limits.memory_mb` of this agent)]"
            )
        if _TMP_FULL.search(output):
            hits.append(
                f"[the private /tmp may be full: it holds at most {self.limits.tmp_mb} MB "
                "(`limits.tmp_mb` of this agent)]"
            )
        return hits

    def _counted(self, controller: str) -> bool:
        entry = self._groups.get(controller)
        if entry is None:
            return False
        hierarchy, group = entry
        if controller == "pids":
            return _field(group / "pids.events", "max") > 0
        # The OOM kills only: reaching the limit alone may just have evicted page cache.
        events = group / ("memory.events" if hierarchy.v2 else "memory.oom_control")
        return _field(events, "oom_kill") > 0

    def group_files(self) -> list[str]:
        """The files the command's shell joins its groups through (`wrap`): one named in an
        error means the command did not start."""
        return [str(group / "cgroup.procs") for _h, group in self._groups.values()]

    def counted(self) -> bool:
        """Whether a group counted a limit hit (a sure sign, unlike an error message)."""
        return self._counted("pids") or self._counted("memory")

    def close(self) -> None:
        """Remove the groups. The kernel may still be ending the call's last processes (a
        group with one is busy): such a group is removed by a later call, without waiting."""
        _leftovers.extend(group for _hierarchy, group in self._groups.values())
        self._groups.clear()
        _remove_leftovers()


_leftovers: list[Path] = []


def _remove_leftovers() -> None:
    """Remove the groups of ended calls that can be by now."""
    for group in list(_leftovers):
        try:
            group.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        _leftovers.remove(group)


def _field(path: Path, name: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0
