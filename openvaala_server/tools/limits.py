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
import resource
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio

from openvaala_server.domain.permissions import Limits

log = logging.getLogger(__name__)

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
_MB: Final = 1024 * 1024
# How long a call waits for the kernel to release its groups once its processes were killed.
_RELEASE_S: Final = 1.0
_RELEASE_TRIES: Final = 100
_serial = itertools.count()

# What a command prints when a resource limit (not a cgroup) stopped it.
_PROCESS_ERRORS: Final = re.compile(r"fork: .*Resource temporarily unavailable|Cannot fork")
_MEMORY_ERRORS: Final = re.compile(
    r"MemoryError|Cannot allocate memory|[Oo]ut of memory|std::bad_alloc|"
    r"memory allocation .*failed|failed to allocate"
)
_TMP_FULL: Final = re.compile(r"No space left on device")


def tmp_args(limits: Limits) -> list[str]:
    """The private /tmp, bounded: to put in place of a plain `--tmpfs /tmp`."""
    return ["--size", str(limits.tmp_mb * _MB), "--tmpfs", "/tmp"]


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
    return list({h.controller: h for h in usable}.values())


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

    def preexec(self) -> Callable[[], None]:
        """What the command's first process runs before `exec`: join the groups, or else set
        its resource limits (inherited by everything it starts)."""
        procs = [str(group / "cgroup.procs") for _h, group in self._groups.values()]
        rlimits: list[tuple[int, int]] = []
        if "pids" not in self._groups:
            rlimits.append((resource.RLIMIT_NPROC, self.limits.processes))
        if "memory" not in self._groups:
            rlimits.append((resource.RLIMIT_DATA, self.limits.memory_mb * _MB))

        def enter() -> None:
            # In the child between fork and exec: only system calls, nothing that takes a lock.
            pid = str(os.getpid()).encode()
            for path in procs:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            for which, value in rlimits:
                resource.setrlimit(which, (value, value))

        return enter

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
                f"[the command hit the memory limit ({self.limits.memory_mb} MB for all its "
                "processes: `limits.memory_mb` of this agent)]"
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

    def counted(self) -> bool:
        """Whether a group counted a limit hit (a sure sign, unlike an error message)."""
        return self._counted("pids") or self._counted("memory")

    async def close(self) -> None:
        """Remove the groups. The kernel may still be ending the call's last processes: a
        group it does not let go of within `_RELEASE_S` is removed at a later call."""
        _leftovers.extend(group for _hierarchy, group in self._groups.values())
        self._groups.clear()
        # Polled: the kernel's only signal (cgroup.events) would need inotify for a few ms.
        for _ in range(_RELEASE_TRIES):
            if not _remove_leftovers():
                return
            await anyio.sleep(_RELEASE_S / _RELEASE_TRIES)


_leftovers: list[Path] = []


def _remove_leftovers() -> bool:
    """Remove what groups can be; whether some are left."""
    for group in list(_leftovers):
        try:
            group.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        _leftovers.remove(group)
    return bool(_leftovers)


def _field(path: Path, name: str) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0
