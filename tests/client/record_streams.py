"""Record the event streams the fold tests replay (tests/client/streams/*.jsonl) from a real
daemon with the demo model: `python3 -m tests.client.record_streams`.

Each file is one subscription as a client saw it: the first line is the `conversation/subscribe`
result (`{"snapshot", "seq"}`), every later line one notification of that conversation
(`{"method", "params"}`), in the order it arrived. The streams are committed, so the tests run
without a daemon; record again when the protocol's events change."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import orjson

from openvaala_server.client import Client
from tests.support.daemon import Daemon, make_daemon

STREAMS = Path(__file__).parent / "streams"

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "{approval}"

[agents.helper]
description = "A subagent"
model = "demo"
"""

Scenario = Callable[["Recorder"], Awaitable[None]]


class Recorder:
    def __init__(self, client: Client, cid: str, root: str) -> None:
        self.client = client
        self.cid = cid
        self.root = root  # the root session's id
        self.lines: list[object] = []

    async def until(self, method: str, **match: object) -> dict[str, Any]:
        """Record notifications of this conversation up to the first `method` matching."""
        while True:
            note = cast("dict[str, Any]", await self.client.next_notification(timeout=30))
            if note["params"].get("conversationId") != self.cid:
                continue
            self.lines.append(note)
            params = note["params"]
            if note["method"] == method and all(params.get(k) == v for k, v in match.items()):
                return note

    async def turn(self, text: str) -> dict[str, Any]:
        await self.client.send(self.cid, text)
        return await self.until("turn/ended", sessionId=self.root)


async def turns(rec: Recorder) -> None:
    await rec.turn("hello")
    await rec.turn("think: what to say")
    await rec.turn("run: echo hi")
    plan = {
        "plan": [{"step": "look", "status": "completed"}, {"step": "fix", "status": "in_progress"}]
    }
    await rec.turn("call: update_plan " + orjson.dumps(plan).decode())
    await rec.client.request(
        "conversation/rename", {"conversationId": rec.cid, "title": "Recorded"}
    )
    await rec.until("conversation/updated")
    await rec.client.request("conversation/compact", {"conversationId": rec.cid})
    await rec.until("compaction/completed")
    await rec.until("session/updated")
    read = await rec.client.request("conversation/read", {"conversationId": rec.cid, "limit": 50})
    message = next(i for i in read["items"] if i["type"] == "user_message")
    await rec.client.request(
        "conversation/pin", {"conversationId": rec.cid, "itemId": message["itemId"]}
    )
    await rec.until("pins/updated")


async def approvals(rec: Recorder) -> None:
    await rec.client.send(rec.cid, "run: echo allowed")
    asked = await rec.until("approval/requested")
    await rec.client.respond_approval(rec.cid, asked["params"]["approvalId"], "allow")
    await rec.until("turn/ended", sessionId=rec.root)
    await rec.client.send(rec.cid, "run: echo denied")
    asked = await rec.until("approval/requested")
    await rec.client.respond_approval(
        rec.cid, asked["params"]["approvalId"], "deny", "not this one"
    )
    await rec.until("turn/ended", sessionId=rec.root)


async def subagent(rec: Recorder) -> None:
    await rec.client.send(rec.cid, "spawn: run: echo from the child")
    await rec.until("turn/ended")
    await rec.until("turn/ended")  # the root's and the child's, in either order


SCENARIOS: dict[str, tuple[str, Scenario]] = {
    "turns": ("never", turns),
    "approvals": ("always", approvals),
    "subagent": ("never", subagent),
}


async def record(daemon: Daemon, scenario: Scenario) -> list[object]:
    client = await daemon.client("recorder")
    try:
        created = await client.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        subscribed = await client.subscribe(cid)
        assert subscribed["snapshot"] is not None  # a first subscription always has one
        rec = Recorder(client, cid, subscribed["snapshot"]["conversation"]["rootSessionId"])
        rec.lines.append({"snapshot": subscribed["snapshot"], "seq": subscribed["seq"]})
        await scenario(rec)
        return rec.lines
    finally:
        await client.close()


def main() -> None:
    STREAMS.mkdir(exist_ok=True)
    for name, (approval, scenario) in SCENARIOS.items():
        with tempfile.TemporaryDirectory() as tmp:
            daemon = make_daemon(Path(tmp), CONFIG.format(approval=approval))
            daemon.start()
            try:
                lines = asyncio.run(record(daemon, scenario))
            finally:
                daemon.stop()
        path = STREAMS / f"{name}.jsonl"
        path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        print(f"{path}: {len(lines) - 1} notifications")


if __name__ == "__main__":
    main()
