"""Long conversations written straight into a data directory with the store's own writer, for the
benchmarks of issue 17 (memory, cold open, paging at 1k / 10k / 50k items).

Two shapes:
- ``chat``: a user message and a short agent answer per turn (bench/paging.py's shape, ~100 bytes
  of text per item);
- ``tools``: per turn a user message, reasoning, a shell call, its ~1.5 KB result and an agent
  message (bench/context.py's shape): what an agent's history looks like.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from openvaala_server.domain import records as r
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

LOREM = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "


def make_items(sid: str, count: int, shape: str) -> list[dict[str, Any]]:
    prefix = secrets.token_hex(10)
    items: list[dict[str, Any]] = []
    turn = 0
    while len(items) < count:
        turn += 1
        tid = f"{prefix[::-1]}{turn:012x}"

        def item(kind: str, **fields: Any) -> dict[str, Any]:
            return {
                "itemId": f"{prefix}{len(items):012x}",
                "type": kind,
                "sessionId": sid,
                "turnId": tid,  # noqa: B023 - used right away
                "createdAt": r.utc_now(),
                "status": r.COMPLETED,
                **fields,
            }

        if shape == "chat":
            items.append(item(r.USER_MESSAGE, text=f"Please look at issue {turn}.", origin="user"))
            items.append(item(r.AGENT_MESSAGE, text=f"Issue {turn} is fixed: off by one."))
            continue
        call = f"call-{turn}"
        command = f"grep -rn pattern{turn} src/"
        items.append(item(r.USER_MESSAGE, text=f"Question {turn}: " + LOREM, origin="user"))
        items.append(item(r.REASONING, text=LOREM * 4))
        items.append(
            item(
                r.TOOL_CALL,
                callId=call,
                name="shell",
                arguments={"command": command},
                argumentsText=f'{{"command": "{command}"}}',
            )
        )
        items.append(item(r.TOOL_RESULT, callId=call, name="shell", output=LOREM * 18))
        items.append(item(r.AGENT_MESSAGE, text=f"Answer {turn}: " + LOREM * 7))
    return items[:count]


async def write_conversation(
    home: Path,
    cwd: Path,
    count: int,
    shape: str = "chat",
    model: str = "demo",
    tail: Callable[[str, list[str]], list[dict[str, Any]]] | None = None,
) -> tuple[str, list[str]]:
    """A new conversation of `count` items in the data directory `home`: (its id, item ids).
    `tail(session id, item ids)`: items written after them (a summary, say), not counted."""
    store = await Store.open(DataDir(home))
    cid, sid = secrets.token_hex(16), secrets.token_hex(16)
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": model,
            "title": f"{count} items",
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": None,
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    items = make_items(sid, count, shape)
    ids = [i["itemId"] for i in items]
    if tail is not None:
        items += tail(sid, ids)
    for start in range(0, len(items), 5_000):
        await store.append_items(cid, sid, cast("list[r.Item]", items[start : start + 5_000]))
    await store.close()
    return cid, ids
