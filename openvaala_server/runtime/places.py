"""The daemon's own places (config file, its directory, the data directory) as they were at start.

A tool that renames `~/.config` and makes a new one, or replaces the data directory, must not get
the daemon to load its config or to write its conversations there. The identity of a directory is
its device and inode number: a rename keeps the path but not the identity of what sits there. When
one changed since the daemon started, nothing is reloaded and (for the data directory) nothing is
written until a restart; the config watcher reports it as `config/error` (docs/security.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

Identity = tuple[int, int] | None  # (st_dev, st_ino) of a directory; None: not there


def identity(path: str) -> Identity:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


@dataclass(frozen=True)
class Places:
    config_file: str
    config_dir: Identity
    data_dir: str
    data: Identity

    @classmethod
    def now(cls, config_file: str, data_dir: str) -> Places:
        return cls(
            config_file,
            identity(os.path.dirname(config_file)),
            data_dir,
            identity(data_dir),
        )

    def replaced(self) -> tuple[str, bool] | None:
        """What was replaced since start, as a message, and whether it is the data directory."""
        restart = "restart the daemon (`openvaala serve restart`) if you made the change"
        if self.data is not None and identity(self.data_dir) != self.data:
            return (
                f"the data directory {self.data_dir} was moved or replaced while the daemon ran; "
                f"nothing more is saved there: {restart}",
                True,
            )
        folder = os.path.dirname(self.config_file)
        if self.config_dir is not None and identity(folder) != self.config_dir:
            return (
                f"the directory {folder} of the config file was moved or replaced while the "
                f"daemon ran; it is not reloaded: {restart}",
                False,
            )
        return None
