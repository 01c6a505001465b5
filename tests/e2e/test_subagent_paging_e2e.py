"""Subagent sessions at rest are paged in by the client that shows them (docs/protocol.md,
"Snapshot"; docs/design.md, "Subagent sessions paged on demand").

A real daemon cold-opens a saved conversation with a closed subagent session of 250 items and an
idle one: the snapshot lists both with no items and `hasMore`, and `conversation/read` gives
every item back, the last page first, then older pages by `beforeItem`. A subagent that is
running when a client subscribes is in its snapshot with its items and its turn, and streams on
as before; once it is at rest, a new snapshot leaves its items to paging too."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.support import subagent_history
from tests.support.daemon import Daemon
from tests.support.events import collect_until
from tests.support.roles import role

CONFIG_FAKE = (
    '\n[agents.default]\ndescription = "root"\nmodel = "main"\ninstructions = "ROLE: root"\n'
    '\n[agents.worker]\ndescription = "Explores"\ninstructions = "ROLE: worker"\n'
)


async def read_all(client: Client, cid: str, sid: str, limit: int) -> list[dict[str, Any]]:
    """Every item of a session, read as a client pages: the last page, then older ones."""
    params: dict[str, Any] = {"conversationId": cid, "sessionId": sid, "limit": limit}
    page = await client.request("conversation/read", params)
    items = list(page["items"])
    while page["hasMore"]:
        before = {**params, "beforeItem": items[0]["itemId"]}
        page = await client.request("conversation/read", before)
        items[:0] = page["items"]
    return items


def by_id(snapshot: Any) -> dict[str, dict[str, Any]]:
    return {s["sessionId"]: s for s in snapshot["sessions"]}


async def test_a_cold_open_leaves_subagents_at_rest_to_paging(daemon_factory: Any) -> None:
    d: Daemon = daemon_factory(start=False)
    written = await subagent_history.write(d.home, d.workdir, "demo")
    d.start()
    client = await d.client()
    subscribed = await client.subscribe(written.cid)
    sessions = by_id(subscribed["snapshot"])
    assert sessions[written.root]["items"] and not sessions[written.root]["hasMore"]
    for sid in (written.closed, written.idle):
        assert sessions[sid]["items"] == [] and sessions[sid]["hasMore"] is True
    assert sessions[written.closed]["status"] == "closed"
    assert sessions[written.idle]["status"] == "idle"

    last = await client.request(
        "conversation/read", {"conversationId": written.cid, "sessionId": written.closed}
    )
    assert [i["text"] for i in last["items"]] == written.closed_texts[-100:]
    assert last["hasMore"] is True
    paged = await read_all(client, written.cid, written.closed, 70)
    assert [i["text"] for i in paged] == written.closed_texts
    idle = await read_all(client, written.cid, written.idle, 100)
    assert [i["text"] for i in idle] == written.idle_texts
    await client.close()


async def test_a_running_subagent_streams_as_before_and_is_paged_once_at_rest(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=fake_openai.config_toml("main") + CONFIG_FAKE)
    client = await d.client()
    created = await client.request("conversation/create", {"cwd": str(d.workdir)})
    cid, root = created["conversation"]["conversationId"], created["conversation"]["rootSessionId"]
    await client.subscribe(cid)
    gate = Gate()
    fake_openai.default_reply = Reply().text("noted")
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "WORKER-TASK"}),
        Reply().text("spawned"),
        when=lambda q: role(q) == "root",
    )
    fake_openai.enqueue(
        Reply().text("WORKER-").wait(gate).text("ANSWER"), when=lambda q: role(q) == "worker"
    )
    await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
    await collect_until(
        client, lambda n: n["method"] == "item/delta" and n["params"]["sessionId"] != root
    )

    watcher = await d.client("watcher")
    snapshot: Any = (await watcher.subscribe(cid))["snapshot"]
    [worker] = [s for s in snapshot["sessions"] if s["parentSessionId"] == root]
    assert worker["status"] == "running" and worker["turn"] is not None
    assert [i["text"] for i in worker["items"]] == ["WORKER-TASK"]
    streamed = [i.get("text") for i in worker["turn"]["items"]]
    assert streamed == ["WORKER-"]
    sid = worker["sessionId"]
    gate.open()
    notes = await collect_until(
        watcher,
        lambda n: n["method"] == "turn/ended" and n["params"]["sessionId"] == sid,
    )
    deltas = [
        n["params"]["delta"]
        for n in notes
        if n["method"] == "item/delta" and n["params"]["sessionId"] == sid
    ]
    assert "ANSWER" in "".join(deltas)
    completed = [
        n["params"]["item"]["text"]
        for n in notes
        if n["method"] == "item/completed" and n["params"]["sessionId"] == sid
    ]
    assert completed == ["WORKER-ANSWER"]

    late = await d.client("late")
    at_rest = by_id((await late.subscribe(cid))["snapshot"])[sid]
    assert at_rest["items"] == [] and at_rest["hasMore"] is True
    paged = await read_all(late, cid, sid, 100)
    assert [i["text"] for i in paged] == ["WORKER-TASK", "WORKER-ANSWER"]
    for c in (client, watcher, late):
        await c.close()
