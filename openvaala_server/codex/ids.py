"""Thread ids: an OpenVaala id (32 hex characters) written as a UUID, the form Codex clients
parse (docs/codex.md). A conversation's thread is its id; a subagent's thread is its session's id.

Ids from a client are read back in either form, hyphens or none."""

from __future__ import annotations

import uuid

from openvaala_server import errors
from openvaala_server.domain.ids import is_valid_id


def thread_id(openvaala_id: str) -> str:
    return str(uuid.UUID(hex=openvaala_id))


def openvaala_id(value: object, param: str = "threadId") -> str:
    """The OpenVaala id a client's thread (or turn, or item) id names, or `invalid_params`."""
    if not isinstance(value, str):
        raise errors.InvalidParams(f'"{param}" is required (a string)', param=param)
    plain = value.replace("-", "").lower()
    if not is_valid_id(plain):
        raise errors.InvalidParams(
            f'"{param}" is not an id this server made: {value[:80]!r}', param=param
        )
    return plain
