"""Helpers for reading a client's notifications in tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

from openvaala_server.client import Client
from openvaala_server.protocol.payloads import Snapshot
from tests.support.waits import WAIT_S

Note = dict[str, Any]


async def collect_until(
    client: Client, stop: Callable[[Note], bool], timeout: float = WAIT_S
) -> list[Note]:
    """Every notification up to and including the first one `stop` accepts."""
    notes: list[Note] = []

    async def run() -> None:
        async for note in client.notifications():
            notes.append(cast("Note", note))  # the tests read any method's params by key
            if stop(notes[-1]):
                return

    try:
        await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        methods = [n["method"] for n in notes[-40:]]
        raise AssertionError(f"timed out; last notifications: {methods}") from None
    return notes


def turn_ended(session_id: str | None = None) -> Callable[[Note], bool]:
    def stop(note: Note) -> bool:
        return note["method"] == "turn/ended" and (
            session_id is None or note["params"]["sessionId"] == session_id
        )

    return stop


def tool_started(note: Note) -> bool:
    """A tool began running (its result item started)."""
    return bool(
        note["method"] == "item/started" and note["params"]["item"]["type"] == "tool_result"
    )


def method_is(method: str) -> Callable[[Note], bool]:
    return lambda note: note["method"] == method


async def new_conversation(client: Client, cwd: str, **extra: Any) -> str:
    result = await client.request("conversation/create", {"cwd": cwd, **extra})
    cid: str = result["conversation"]["conversationId"]
    await client.subscribe(cid)
    return cid


async def run_turn(
    client: Client, cid: str, text: str, *, within: float = WAIT_S, **extra: Any
) -> list[Note]:
    """Send a message to an idle conversation and return the events of its turn (which must
    end `within` seconds)."""
    await client.request(
        "input/send", {"conversationId": cid, "text": text, "mode": "queue", **extra}
    )
    return await collect_until(client, turn_ended(), within)


def completed_items(notes: list[Note], item_type: str | None = None) -> list[dict[str, Any]]:
    items = [n["params"]["item"] for n in notes if n["method"] == "item/completed"]
    return [i for i in items if item_type is None or i["type"] == item_type]


async def snapshot_of(client: Client, conversation_id: str) -> Snapshot:
    """Subscribe and return the conversation's snapshot (a first subscription always has one)."""
    snapshot = (await client.subscribe(conversation_id))["snapshot"]
    assert snapshot is not None, "a subscription without afterSeq returns a snapshot"
    return snapshot


async def until(check: Callable[[], bool], timeout: float = WAIT_S) -> None:
    """Re-check `check` until it holds (a poll with a deadline, not a wait for time)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)
