"""Stopping the daemon with turns, a subagent and a tool running: it ends within its documented
bound, and nothing it acknowledged is lost (issue 25; docs/design.md, "Structured concurrency").

Against the real daemon and a provider faked at the wire: one conversation runs a shell command,
one is in the middle of the provider's stream, one has a subagent streaming while its parent waits
for it. SIGTERM; the process must exit within `STOP_BOUND_S`, leave no process of the tool behind,
and after a restart every acknowledged message, the text streamed so far and each turn's end
(interrupted) are there.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable

from openvaala_server.client import Client
from openvaala_server.server import STOP_BOUND_S
from tests.fakes.providers import FakeProvider, RecordedRequest
from tests.fakes.script import Reply
from tests.server.tools.processes import survivors, wait_for_processes
from tests.support.daemon import Daemon
from tests.support.events import (
    Note,
    collect_until,
    new_conversation,
    snapshot_of,
    tool_started,
)
from tests.support.roles import role as _role

MARKER = "60.7781"


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "root"\nmodel = "fake"\ninstructions = "ROLE: root"\n'
        + '\n[agents.worker]\ndescription = "a worker"\ninstructions = "ROLE: worker"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


def _said(text: str) -> Callable[[RecordedRequest], bool]:
    return lambda q: any(
        m["role"] == "user" and text in str(m["content"]) for m in q.json["messages"]
    )


def _has_tool_output(q: RecordedRequest) -> bool:
    return any(m["role"] == "tool" for m in q.json["messages"])


async def _send(client: Client, cid: str, text: str) -> None:
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})


def _streamed(texts: set[str]) -> Callable[[Note], bool]:
    """Stops once every one of `texts` has been streamed whole as some item's text."""
    by_item: dict[str, str] = {}

    def stop(note: Note) -> bool:
        if note["method"] == "item/delta" and note["params"]["field"] == "text":
            item = note["params"]["itemId"]
            by_item[item] = by_item.get(item, "") + note["params"]["delta"]
        return texts <= set(by_item.values())

    return stop


async def _until(check: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_shutdown_with_turns_subagents_and_tools_running_is_bounded_and_loses_nothing(
    daemon_factory: Callable[..., Daemon], fake_openai: FakeProvider
) -> None:
    fake = fake_openai
    d = daemon_factory(_config(fake))
    cwd = str(d.workdir)
    client = await d.client(reconnect=False)
    fake.enqueue(
        Reply().tool_call("shell", {"command": f"sleep {MARKER}"}),
        when=lambda q: _said("RUN-TOOL")(q) and not _has_tool_output(q),
    )
    fake.enqueue(Reply().text("PARTIAL-", "ANSWER").hang(), when=_said("STREAM"))
    fake.enqueue(Reply().text("CHILD-", "PARTIAL").hang(), when=lambda q: _role(q) == "worker")
    fake.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "CHILD-TASK"}),
        when=lambda q: _role(q) == "root" and _said("DELEGATE")(q) and not _has_tool_output(q),
    )
    fake.enqueue(
        Reply().tool_call("wait", {"timeout_s": 300}),
        when=lambda q: _role(q) == "root" and _said("DELEGATE")(q) and _has_tool_output(q),
    )
    try:
        tool = await new_conversation(client, cwd)
        await _send(client, tool, "RUN-TOOL")
        await collect_until(client, tool_started, 30)
        assert wait_for_processes(MARKER, "sleep", 1, within=10)

        stream = await new_conversation(client, cwd)
        await _send(client, stream, "STREAM")
        await _until(lambda: any(_said("STREAM")(q) for q in fake.requests))

        delegate = await new_conversation(client, cwd)
        await _send(client, delegate, "DELEGATE")
        await _until(lambda: any(_role(q) == "worker" for q in fake.requests))
        await _until(lambda: any(_role(q) == "root" and _has_tool_output(q) for q in fake.requests))
        # The streamed deltas have reached the daemon: it passed them on to this client.
        await collect_until(client, _streamed({"PARTIAL-ANSWER", "CHILD-PARTIAL"}), 30)
    finally:
        await client.close()

    assert d.process is not None
    began = time.monotonic()
    d.process.send_signal(signal.SIGTERM)
    code = await asyncio.to_thread(d.process.wait, STOP_BOUND_S + 10)
    took = time.monotonic() - began
    assert took < STOP_BOUND_S, f"stopping took {took:.1f} s (bound {STOP_BOUND_S} s)\n{d.log()}"
    assert code == 0, d.log()
    d.process = None
    assert survivors(MARKER) == []
    assert "Traceback" not in d.log(), d.log()

    d.start()
    client = await d.client(reconnect=False)
    try:
        for cid, said in [(tool, "RUN-TOOL"), (stream, "STREAM"), (delegate, "DELEGATE")]:
            snapshot = await snapshot_of(client, cid)
            sessions = {s["agent"]: s for s in snapshot["sessions"]}
            root = sessions["default"]
            items = root["items"]
            users = [i["text"] for i in items if i["type"] == "user_message"]
            assert users == [said], (cid, items)
            assert root["status"] == "interrupted", (said, root["status"])
            assert root["turn"] is None
            if said == "RUN-TOOL":
                [result] = [i for i in items if i["type"] == "tool_result"]
                assert result["status"] == "interrupted", result
            if said == "STREAM":
                texts = [i["text"] for i in items if i["type"] == "agent_message"]
                assert texts == ["PARTIAL-ANSWER"], items
            if said == "DELEGATE":
                child = sessions["worker"]
                # A subagent at rest comes with no items; its client pages them in
                # (docs/protocol.md, "Snapshot").
                assert child["items"] == [] and child["hasMore"], child
                page = await client.request(
                    "conversation/read", {"conversationId": cid, "sessionId": child["sessionId"]}
                )
                texts = [i["text"] for i in page["items"] if i["type"] == "agent_message"]
                assert texts == ["CHILD-PARTIAL"], child["items"]
                assert child["status"] == "interrupted", child["status"]
    finally:
        await client.close()
