"""Waiting for the daemon's index: a turn's text reaches it just after the turn ends
(docs/protocol.md, "conversation/list"), so a test that searches right away asks until it is."""

from __future__ import annotations

import asyncio
from typing import Any

from openvaala_server.client import Client


async def search_until(client: Client, search: str, want: int = 1) -> list[Any]:
    """`conversation/list` with `search` once it finds at least `want` conversations."""
    for _ in range(1200):  # a minute, even on a loaded machine
        found = (await client.request("conversation/list", {"search": search}))["conversations"]
        if len(found) >= want:
            return list(found)
        await asyncio.sleep(0.05)
    raise AssertionError(f"the index never found {want} conversations for {search!r}")
