"""How a client finds the running server, without the store: where the data directory is, the
reader side of `runtime.lock`, and the token file (docs/storage.md, "Data directory").

The server's store owns the writer side (`store/lock.py` takes the flock and writes the file);
the client library reads the same files through this module, so it imports nothing of the store.

Contract: the running server holds a non-blocking exclusive ``flock`` on ``runtime.lock`` for its
whole life, and the file holds ``{"pid": ..., "address": ...}``. Whether a server runs is the
lock, not the file's existence: the kernel drops the lock when the process dies.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

LOCK_FILE = "runtime.lock"
TOKEN_FILE = "token"


def config_path() -> Path:
    """`$OPENVAALA_CONFIG` › `$XDG_CONFIG_HOME/openvaala/config.toml` › `~/.config/...`: here
    rather than in `config` so a client can name the file without importing the daemon's reader."""
    explicit = os.environ.get("OPENVAALA_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "openvaala" / "config.toml"


def data_root(environ: Mapping[str, str] | None = None) -> Path:
    """`$OPENVAALA_HOME` › `$XDG_DATA_HOME/openvaala` › `~/.local/share/openvaala`."""
    env = os.environ if environ is None else environ
    if env.get("OPENVAALA_HOME"):
        return Path(env["OPENVAALA_HOME"]).expanduser()
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).expanduser() / "openvaala"
    return Path.home() / ".local" / "share" / "openvaala"


# A NamedTuple, not a dataclass, like the other values on `openvaala exec`'s way to the daemon's
# spawn: `dataclasses` imports `inspect` (and with it `ast` and `dis`), and the JSON codec
# imports orjson, which imports `dataclasses`; the spawn comes before both (docs/design.md,
# "Exec's spawn and the daemon's first turn").
class LockInfo(NamedTuple):
    pid: int | None
    address: str | None


def parse_lock(data: bytes) -> LockInfo:
    from openvaala_server.protocol import codec  # only a held lock is read: see LockInfo

    try:
        value = codec.parse(data)
    except codec.JSONDecodeError:
        return LockInfo(None, None)  # the holder is between truncate and write
    if not isinstance(value, dict):
        return LockInfo(None, None)
    pid, address = value.get("pid"), value.get("address")
    return LockInfo(
        pid if isinstance(pid, int) else None, address if isinstance(address, str) else None
    )


def _probe(path: Path) -> tuple[bool, bytes]:
    """(held by someone, content), probing with a flock on a fresh descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # no data directory there: nobody holds it
        return False, b""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            held = True
        else:
            held = False
            fcntl.flock(fd, fcntl.LOCK_UN)
        return held, os.pread(fd, 4096, 0)
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    return _probe(path)[0]


def read_lock(path: Path) -> LockInfo | None:
    """Who holds the lock, or None if nobody does (a leftover file's content means nothing)."""
    held, data = _probe(path)
    return parse_lock(data) if held else None


def find_server(root: Path) -> tuple[str, str] | None:
    """(address, token) of the server running on the data directory at `root`, if any."""
    info = read_lock(root / LOCK_FILE)
    if info is None or not info.address:
        return None
    try:
        token = (root / TOKEN_FILE).read_text().strip()
    except OSError:
        return None
    return info.address, token
