"""The daemon runs nothing from the directory it was started in (docs/security.md).

The daemon is started wherever the user happened to be (`openvaala` in a project starts it), and
that directory is often an agent's working directory. `python -m` puts the start directory first
on `sys.path`, so a module an agent wrote there (`inotify_simple.py`, or a whole
`openvaala_server/`) would be imported by the daemon at its next start. So the daemon is started
with `-P` (no start directory on `sys.path`), and the serving process leaves it on its own too:
it drops it from `sys.path` and moves into its data directory, which no tool can write to (an
MCP server configured without `cwd` starts there).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Final

# Variables naming the daemon's places: made absolute before the move, so that a relative one
# keeps naming the same place.
_PLACE_VARIABLES: Final = ("OPENVAALA_HOME", "OPENVAALA_CONFIG", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


def daemon_command(*args: str) -> list[str]:
    """The command line that runs `openvaala_server` with `args`, blind to the start directory."""
    return [sys.executable, "-P", "-m", "openvaala_server", *args]


def leave_start_dir(data_root: Path) -> None:
    """Forget the start directory: off `sys.path`, and the process moved to `data_root`."""
    try:
        start = os.path.realpath(os.getcwd())
    except OSError:  # the start directory was removed: nothing there to import from
        start = None
    if start is not None:
        sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != start]
    for name in _PLACE_VARIABLES:
        value = os.environ.get(name)
        if value:
            os.environ[name] = os.path.abspath(os.path.expanduser(value))
    target = Path(os.path.abspath(data_root.expanduser()))
    with contextlib.suppress(OSError):  # created 0700 by the store just after, if it can be
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.chdir(target)
    except OSError:
        os.chdir("/")
