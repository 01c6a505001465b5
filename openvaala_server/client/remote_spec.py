"""What `--remote` names and where a new conversation works there: plain values read by every
command's first steps (the command line, exec's early start of a daemon), so nothing here imports
the dialer's machinery (asyncio, sockets, subprocesses; docs/design.md, "A cold exec, end to
end")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from openvaala_server.domain import dir_paths

ENV_REMOTE = "OPENVAALA_REMOTE"


@dataclass(frozen=True)
class Remote:
    destination: str  # `[user@]host` as ssh takes it (a Host alias of ~/.ssh/config works)
    directory: str | None  # the working directory of new conversations over there

    @property
    def host(self) -> str:
        """The machine, as a status line names it."""
        return self.destination.rpartition("@")[2]


def parse(spec: str) -> Remote:
    """`[user@]host[:dir]`; ValueError naming what is wrong."""
    destination, _, directory = spec.strip().partition(":")
    if not destination or destination.startswith("-") or any(c.isspace() for c in destination):
        raise ValueError(f"--remote {spec!r}: expected [user@]host[:dir]")
    return Remote(destination, directory or None)


def configured(environ: Mapping[str, str] | None = None) -> Remote | None:
    """The remote named by `OPENVAALA_REMOTE` (what `--remote` sets), if any."""
    spec = (os.environ if environ is None else environ).get(ENV_REMOTE, "").strip()
    return parse(spec) if spec else None


def working_directory(given: str | None, remote: Remote | None) -> str | None:
    """A new conversation's directory: `--cwd`, else here, or with a remote, else its `:dir`;
    None with a remote and neither: the remote home, which `Dialer.resolve` fills in.
    NoDirectory for an empty `--cwd`, here or there."""
    if remote is None:
        return local_directory(given)
    _refuse_empty(given)
    return given or remote.directory


class NoDirectory(ValueError):
    """No directory to work in: `--cwd` is empty or names no path the daemon would take (`~other`,
    a NUL), or there is no `--cwd` and the directory the command runs in was removed since the
    shell entered it. The message names the option and what is wrong."""


def local_directory(given: str | None) -> str:
    """`--cwd` on this machine, absolute, read by the daemon's rule for a `cwd` (docs/protocol.md,
    `domain/dir_paths.absolute`): a leading `~` or `~/` is this user's home, `~other` is refused;
    a shell leaves the `~` as typed in `--cwd=~/x` or in quotes. A relative path starts here.
    Without `--cwd`, the current directory; NoDirectory if it was removed."""
    _refuse_empty(given)
    try:
        where = given or os.getcwd()
        # The `~` forms are the daemon's alone: anything else is made absolute here first.
        text = where if where.startswith("~") else os.path.abspath(where)
    except FileNotFoundError:
        raise NoDirectory(
            "the current directory no longer exists: cd to another one, or pass --cwd DIR"
        ) from None
    try:
        return dir_paths.absolute(text, os.path.expanduser("~"))
    except dir_paths.BadPath as exc:
        raise NoDirectory(f"--cwd {given}: {exc}") from None


def _refuse_empty(given: str | None) -> None:
    # `--cwd ""` (an unset variable in a script) would otherwise fall back to here, silently.
    if given is not None and not given.strip():
        raise NoDirectory("--cwd is empty: name a directory (or leave --cwd out to work here)")
