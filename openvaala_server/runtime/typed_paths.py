"""A path a client sends for the daemon to use (a conversation's `cwd`, a bundle's file): a
leading `~` or `~/` is the home of the daemon's user, on the machine the daemon runs on (over
`--remote` too: it is where the conversation runs); any other relative path is refused
(docs/protocol.md, "conversation/create")."""

from __future__ import annotations

from pathlib import Path

from openvaala_server import errors
from openvaala_server.domain.dir_paths import BadPath, absolute


def absolute_path(raw: str, param: str) -> str:
    """`raw` as an absolute, normalized path; `invalid_params` naming `param` if it is not one."""
    try:
        return absolute(raw, str(Path.home()))
    except BadPath as exc:
        raise errors.InvalidParams(f'"{param}": {exc}', param=param) from None
