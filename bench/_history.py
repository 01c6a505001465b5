"""The one generator of bench data: conversations written as the daemon writes them, through the
store's own writers (`Store.create_conversation`, `append_metadata`, `append_items`), so every
bench that opens, pages, reindexes or lists measures the shape a user has (issue 40).

Per turn, as `runtime/` writes it: a `turn_started` and a `turn_ended` record in metadata.jsonl and
the turn's items in the session's journal. Two shapes of turn:

- ``tools`` (the default; 5 items a turn, so 50k items are 10k turns): a user message, reasoning,
  a shell call, its ~1.5 KB result and an agent message — what an agent's history looks like;
- ``chat``: a user message and a short agent answer (2 items a turn, ~100 bytes of text each).

Besides, in the ``tools`` shape: every `SUBAGENT_EVERY` turns a subagent session (its
`session_created` record, one turn of its own with a call and a result in its own journal),
and every `COMPACT_EVERY` items a compaction (a `summary` item covering what came before, as
runtime/compaction.py writes it). `write_fork` writes a fork of a conversation, with turns of its
own; `write_many` many small conversations at once (the journal's group commit makes that fast).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from openvaala_server.domain import records as r
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

LOREM = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. "
SUBAGENT_EVERY = 25  # turns
COMPACT_EVERY = 2_000  # items
_BATCH = 2_000  # items per append: the store's writers, without one fsync per item


@dataclass
class _Writer:
    """What one conversation has written so far, and what waits to be appended."""

    store: Store
    cid: str
    root: str
    prefix: str = field(default_factory=lambda: secrets.token_hex(10))
    ids: list[str] = field(default_factory=list)  # the root session's items, in order
    items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # per session
    meta: list[JsonMapping] = field(default_factory=list)
    serial: int = 0

    def new_id(self) -> str:
        self.serial += 1
        return f"{self.prefix}{self.serial:012x}"

    def item(self, sid: str, tid: str, kind: str, **fields: Any) -> None:
        item = {
            "itemId": self.new_id(),
            "type": kind,
            "sessionId": sid,
            "turnId": tid,
            "createdAt": r.utc_now(),
            "status": r.COMPLETED,
            **fields,
        }
        self.items.setdefault(sid, []).append(item)
        if sid == self.root:
            self.ids.append(item["itemId"])

    def turn(self, sid: str, shape: str, n: int) -> None:
        tid = self.new_id()[::-1]
        self.meta.append({"type": r.TURN_STARTED, "sessionId": sid, "turnId": tid})
        if shape == "chat":
            self.item(sid, tid, r.USER_MESSAGE, text=f"Please look at issue {n}.", origin="user")
            self.item(sid, tid, r.AGENT_MESSAGE, text=f"Issue {n} is fixed: off by one.")
        else:
            call, command = f"call-{n}", f"grep -rn pattern{n} src/"
            self.item(sid, tid, r.USER_MESSAGE, text=f"Question {n}: " + LOREM, origin="user")
            self.item(sid, tid, r.REASONING, text=LOREM * 4)
            arguments = {"command": command}
            text = f'{{"command": "{command}"}}'
            self.item(
                sid, tid, r.TOOL_CALL, callId=call, name="shell", arguments=arguments,
                argumentsText=text,
            )  # fmt: skip
            self.item(sid, tid, r.TOOL_RESULT, callId=call, name="shell", output=LOREM * 18)
            self.item(sid, tid, r.AGENT_MESSAGE, text=f"Answer {n}: " + LOREM * 7)
        self.meta.append(
            {"type": r.TURN_ENDED, "sessionId": sid, "turnId": tid, "status": "completed"}
        )

    def subagent(self, n: int) -> None:
        sid = secrets.token_hex(16)
        self.meta.append(
            {
                "type": r.SESSION_CREATED,
                "sessionId": sid,
                "parentSessionId": self.root,
                "agent": "explore",
                "model": "demo",
                "title": f"look into {n}",
            }
        )
        self.turn(sid, "tools", n)

    def compaction(self) -> None:
        tid = self.new_id()[::-1]
        covered = len(self.ids)
        self.meta.append({"type": r.TURN_STARTED, "sessionId": self.root, "turnId": tid})
        self.item(
            self.root, tid, r.SUMMARY, text="Summary so far: " + LOREM * 12,
            coversUpTo=self.ids[-1], coveredItems=covered, reason="auto", model="demo",
        )  # fmt: skip
        self.meta.append(
            {"type": r.TURN_ENDED, "sessionId": self.root, "turnId": tid, "status": "completed"}
        )

    async def flush(self) -> None:
        """Metadata first, as the runtime does (a turn starts before its items are written)."""
        if self.meta:
            await self.store.append_metadata(self.cid, self.meta)
            self.meta = []
        for sid, items in self.items.items():
            if items:
                await self.store.append_items(self.cid, sid, cast("list[r.Item]", items))
        self.items = {}

    def pending(self) -> int:
        return sum(map(len, self.items.values()))


async def _create(
    store: Store, cwd: Path, title: str, model: str, forked_from: r.ForkedFrom | None = None
) -> _Writer:
    cid, sid = secrets.token_hex(16), secrets.token_hex(16)
    await store.create_conversation(
        {
            "conversationId": cid,
            "cwd": str(cwd),
            "agent": "default",
            "model": model,
            "title": title,
            "titleSource": "user",
            "rootSessionId": sid,
            "forkedFrom": cast("Any", forked_from),
            "formatVersion": r.FORMAT_VERSION,
        }
    )
    return _Writer(store, cid, sid)


async def _fill(writer: _Writer, count: int, shape: str) -> None:
    """Turns until the root session holds `count` items (the last turn cut to fit)."""
    turn = 0
    while len(writer.ids) < count:
        turn += 1
        if shape == "tools" and turn % SUBAGENT_EVERY == 0:
            writer.subagent(turn)
        since = len(writer.ids) % COMPACT_EVERY
        writer.turn(writer.root, shape, turn)
        if shape == "tools" and len(writer.ids) % COMPACT_EVERY < since:
            writer.compaction()
        if writer.pending() >= _BATCH:
            await writer.flush()
    extra = len(writer.ids) - count
    if extra > 0:  # the last turn's last items: never written
        del writer.ids[count:]
        writer.items[writer.root] = writer.items[writer.root][:-extra]
    await writer.flush()


async def write_conversation(
    home: Path,
    cwd: Path,
    count: int,
    shape: str = "tools",
    model: str = "demo",
    tail: Callable[[str, list[str]], list[dict[str, Any]]] | None = None,
) -> tuple[str, list[str]]:
    """A new conversation whose root session holds `count` items, in the data directory `home`:
    (its id, the root session's item ids). `tail(session id, item ids)`: items written after
    them (a summary, say), not counted."""
    store = await Store.open(DataDir(home))
    try:
        writer = await _create(store, cwd, f"{count} items", model)
        await _fill(writer, count, shape)
        if tail is not None:
            await store.append_items(
                writer.cid, writer.root, cast("list[r.Item]", tail(writer.root, writer.ids))
            )
    finally:
        await store.close()
    return writer.cid, writer.ids


async def write_fork(home: Path, cwd: Path, parent: str, up_to: str, count: int) -> str:
    """A fork of `parent` at its item `up_to`, with `count` items of its own after it."""
    store = await Store.open(DataDir(home))
    try:
        forked: r.ForkedFrom = {"conversationId": parent, "kind": "fork", "upToItemId": up_to}
        writer = await _create(store, cwd, "a fork", "demo", forked)
        await _fill(writer, count, "tools")
    finally:
        await store.close()
    return writer.cid


async def write_many(
    home: Path, cwd: Path, conversations: int, count: int, shape: str = "tools", together: int = 64
) -> list[str]:
    """`conversations` conversations of `count` root items each, `together` written at a time
    (their appends share the journal's group commits)."""
    store = await Store.open(DataDir(home))
    cids: list[str] = []

    async def one(n: int) -> None:
        writer = await _create(store, cwd, f"conversation {n}", "demo")
        await _fill(writer, count, shape)
        cids.append(writer.cid)

    try:
        for start in range(0, conversations, together):
            stop = min(conversations, start + together)
            await asyncio.gather(*(one(n) for n in range(start, stop)))
    finally:
        await store.close()
    return cids
