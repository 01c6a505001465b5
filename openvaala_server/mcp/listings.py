"""Each MCP server's last tool listing, kept in the data directory across restarts.

A server that is still starting (or failed) is offered, and counted in the context cockpit, with
the tools it listed last, so a turn need not wait for it (docs/design.md, "MCP servers start in
the background"). The file is a cache: unreadable or from another version, it counts as empty.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcp.types import Tool as McpToolInfo
from pydantic import ValidationError

from openvaala_server.protocol import codec

log = logging.getLogger(__name__)

VERSION = 1


def load(path: Path | None) -> dict[str, tuple[McpToolInfo, ...]]:
    """The listings by server name; empty when there is no readable file."""
    if path is None:
        return {}
    try:
        data = codec.parse_text(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    servers = data.get("servers")
    out: dict[str, tuple[McpToolInfo, ...]] = {}
    for name, tools in (servers if isinstance(servers, dict) else {}).items():
        try:
            out[name] = tuple(McpToolInfo.model_validate(t) for t in tools)
        except (ValidationError, TypeError):
            continue  # one bad entry costs that server's listing only
    return out


def save(path: Path | None, listings: Mapping[str, Sequence[McpToolInfo]]) -> None:
    """Replace the file atomically (a crash leaves the old or the new one, whole)."""
    if path is None:
        return
    servers = {
        name: [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
        for name, tools in listings.items()
    }
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        # 0600 like every file of the data directory (docs/storage.md).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as out:
            out.write(codec.text({"version": VERSION, "servers": servers}, ascii=True))
        os.replace(tmp, path)
    except OSError as exc:  # a cache: the next listing tries again
        log.warning("cannot keep the MCP tool listings in %s: %s", path, exc)
