"""A turn interrupted at each of its await points leaves no task behind (issue 25; docs/design.md,
"Structured concurrency").

One real daemon, started with OPENVAALA_DEBUG_TASKS=1 so that `debug/tasks` counts its event
loop's tasks, and a provider faked at the wire. After a warm-up turn (so that everything made
once per daemon exists), the count is the baseline; each case then runs a turn to one await point
— the provider's first byte, the middle of its stream, a shell command, an approval, a subagent's
turn with its parent waiting, the back-off before a retry — interrupts it, and checks that the
daemon's tasks are the baseline's again (names and numbers), and that the turn ended interrupted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from openvaala_server.api.debug_methods import ENV
from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider, RecordedRequest
from tests.fakes.script import Reply
from tests.server.tools.processes import survivors, wait_for_processes
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, method_is, new_conversation, turn_ended
from tests.support.roles import role as _role

# How long a cancelled activity may take to be gone (an HTTP connection closing, a process group
# being reaped): the count is polled until it matches, within this.
SETTLE_S = 10.0


def _config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "root"\nmodel = "fake"\ninstructions = "ROLE: root"\n'
        + '\n[agents.worker]\ndescription = "a worker"\ninstructions = "ROLE: worker"\n'
        + '\n[agents.careful]\ndescription = "asks first"\nmodel = "fake"\napproval = "always"\n'
        # A failed call waits 20-30 s before its retry: long enough to be interrupted there.
        + "\n[retry]\nbase_delay_s = 20\nmax_delay_s = 30\n"
    )


def _said(text: str) -> Callable[[RecordedRequest], bool]:
    return lambda q: any(
        m["role"] == "user" and text in str(m["content"]) for m in q.json["messages"]
    )


async def _tasks(client: Client) -> dict[str, int]:
    result: dict[str, Any] = await client.request("debug/tasks", {})
    by_name: dict[str, int] = result["byName"]
    return by_name


async def _quiet(client: Client) -> dict[str, int]:
    """The tasks once two looks a moment apart agree (the index writer briefly has a helper task
    while it gathers a batch: docs/storage.md)."""
    last = await _tasks(client)
    while True:
        await asyncio.sleep(0.2)
        now = await _tasks(client)
        if now == last:
            return now
        last = now


async def _settled(client: Client, baseline: dict[str, int]) -> dict[str, int]:
    deadline = time.monotonic() + SETTLE_S
    while True:
        now = await _tasks(client)
        if now == baseline or time.monotonic() > deadline:
            return now
        await asyncio.sleep(0.05)


async def _send(client: Client, cid: str, text: str) -> None:
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})


async def _interrupt(client: Client, cid: str, sid: str | None = None) -> None:
    params: dict[str, Any] = {"conversationId": cid}
    if sid is not None:
        params["sessionId"] = sid
    await client.request("turn/interrupt", params)


def _session_started(note: Note) -> bool:
    return bool(note["method"] == "session/started")


@pytest.fixture
def debug_daemon(
    daemon_factory: Callable[..., Daemon],
    fake_openai: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> Daemon:
    monkeypatch.setenv(ENV, "1")
    return daemon_factory(_config(fake_openai))


async def test_a_turn_interrupted_at_each_await_point_leaves_no_task_behind(
    debug_daemon: Daemon, fake_openai: FakeProvider
) -> None:
    d, fake = debug_daemon, fake_openai
    client = await d.client()
    cwd = str(d.workdir)
    try:
        fake.enqueue(Reply().text("warm"), when=_said("WARM-UP"))
        warm = await new_conversation(client, cwd)
        await _send(client, warm, "WARM-UP")
        await collect_until(client, turn_ended())
        await client.unsubscribe(warm)
        baseline = await _quiet(client)

        async def case(
            name: str,
            reached: Callable[[str], Awaitable[object]],
            agent: str | None = None,
            after: Callable[[str], Awaitable[object]] | None = None,
        ) -> None:
            extra = {"agent": agent} if agent else {}
            cid = await new_conversation(client, cwd, **extra)
            await _send(client, cid, name)
            await reached(cid)
            during = await _tasks(client)
            await _interrupt(client, cid)
            notes = await collect_until(client, turn_ended(), 30)
            ended = [n for n in notes if n["method"] == "turn/ended"][-1]["params"]
            assert ended["status"] == "interrupted", (name, ended)
            if after is not None:
                await after(cid)
            await client.unsubscribe(cid)
            left = await _settled(client, baseline)
            assert left == baseline, f"{name}: before {baseline}, during {during}, after {left}"

        async def request_reached(count: int) -> None:
            await fake.wait_for_request(count, timeout=15)

        # 1. Waiting for the provider's first byte (it answered the headers, then nothing).
        fake.enqueue(Reply().hang(), when=_said("FIRST-BYTE"))
        await case("FIRST-BYTE", lambda cid: request_reached(2))

        # 2. In the middle of the provider's stream.
        fake.enqueue(Reply().text("half an ans").hang(), when=_said("MID-STREAM"))
        await case(
            "MID-STREAM",
            lambda cid: collect_until(client, method_is("item/delta")),
        )

        # 3. While a shell command runs (its process group is gone too).
        marker = "60.25031"
        fake.enqueue(Reply().tool_call("shell", {"command": f"sleep {marker}"}), when=_said("TOOL"))

        async def sleeping(cid: str) -> None:
            await collect_until(
                client,
                lambda n: (
                    n["method"] == "item/started" and n["params"]["item"]["type"] == "tool_result"
                ),
            )
            # The command itself runs: the turn is inside the shell call, not before it.
            assert await asyncio.to_thread(wait_for_processes, marker, "sleep", 1, 15.0)

        async def no_sleeper(cid: str) -> None:
            assert survivors(marker) == []

        await case("TOOL", sleeping, after=no_sleeper)

        # 4. While a tool call waits for the user's approval.
        fake.enqueue(Reply().tool_call("shell", {"command": "true"}), when=_said("APPROVAL"))
        await case(
            "APPROVAL",
            lambda cid: collect_until(client, method_is("approval/requested")),
            agent="careful",
        )

        # 5. In a subagent's turn, its parent waiting for it: both are interrupted.
        fake.enqueue(Reply().text("digging").hang(), when=lambda q: _role(q) == "worker")

        def wait_for_child(q: RecordedRequest) -> bool:
            return _role(q) == "root" and any(m["role"] == "tool" for m in q.json["messages"])

        fake.enqueue(
            Reply().tool_call("spawn_agent", {"agent": "worker", "task": "CHILD-TASK"}),
            when=lambda q: _role(q) == "root" and _said("SUBAGENT")(q) and not wait_for_child(q),
        )
        fake.enqueue(Reply().tool_call("wait", {"timeout_s": 120}), when=wait_for_child)
        child: list[str] = []

        async def subagent_reached(cid: str) -> None:
            notes = await collect_until(client, _session_started, 30)
            child.append(notes[-1]["params"]["session"]["sessionId"])
            # The child streams and hangs; the parent is in its `wait` call.
            await _until(lambda: any(wait_for_child(q) for q in fake.requests))
            await _until(lambda: any(_role(q) == "worker" for q in fake.requests))

        async def interrupt_child(cid: str) -> None:
            await _interrupt(client, cid, child[0])
            await collect_until(client, turn_ended(child[0]), 30)

        await case("SUBAGENT", subagent_reached, after=interrupt_child)

        # 6. In the back-off before retrying a failed model call.
        fake.enqueue(Reply.server_error(503), when=_said("RETRY"))
        await case("RETRY", lambda cid: collect_until(client, method_is("retry/scheduled")))
    finally:
        await client.close()


async def _until(check: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)
