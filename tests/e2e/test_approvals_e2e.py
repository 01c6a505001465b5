"""Approvals through the real daemon: a call the agent's policy asks about waits for an answer
from any subscribed client; the first answer wins and every client sees it resolved.

The demo model (`run: CMD` calls the shell tool) drives the shell flows with an agent configured
`approval = "always"`; the fake provider at the wire scripts file-tool calls and shows what the
model receives after a denial.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client, RpcError
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.errors import error_data
from tests.support.events import (
    Note,
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    snapshot_of,
    turn_ended,
)

DemoFactory = Callable[..., Daemon]


def demo_config(approval: str = "always", extra: str = "") -> str:
    return f"""
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"
approval = "{approval}"
{extra}
"""


def fake_config(fake: FakeProvider, approval: str) -> str:
    return (
        fake.config_toml("fake")
        + f'\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "{approval}"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
    )


async def send(client: Client, cid: str, text: str) -> None:
    await client.request("input/send", {"conversationId": cid, "text": text, "mode": "queue"})


async def requested(client: Client) -> Note:
    notes = await collect_until(client, method_is("approval/requested"))
    return notes[-1]["params"]  # type: ignore[no-any-return]


async def respond(
    client: Client, cid: str, approval_id: str, decision: Any, message: str | None = None
) -> dict[str, Any]:
    return dict(await client.respond_approval(cid, approval_id, decision, message))


Connect = Callable[..., Awaitable[Client]]


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """`await connect(daemon, name)`: a client closed when the test ends."""
    clients: list[Client] = []

    async def make(d: Daemon, name: str = "test") -> Client:
        client = await d.client(name)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def two_clients(connect: Connect, d: Daemon) -> tuple[Client, Client, str]:
    a = await connect(d, "a")
    b = await connect(d, "b")
    cid = await new_conversation(a, str(d.workdir))
    await b.subscribe(cid)
    return a, b, cid


def statuses(notes: list[Note]) -> list[str]:
    return [n["params"]["session"]["status"] for n in notes if n["method"] == "session/updated"]


# -- deny, allow, first answer wins ------------------------------------------------------------


async def test_both_clients_see_the_request_and_a_deny_runs_nothing(
    connect: Connect,
    daemon_factory: DemoFactory,
) -> None:
    d = daemon_factory(demo_config())
    a, b, cid = await two_clients(connect, d)
    marker = d.workdir / "marker"
    await send(a, cid, "run: touch marker")
    seen_a, seen_b = await requested(a), await requested(b)
    assert seen_a == seen_b
    assert seen_a["tool"] == "shell" and seen_a["agent"] == "default"
    assert seen_a["arguments"] == {"command": "touch marker"}
    assert "touch marker" in seen_a["summary"] and "always" in seen_a["reason"]
    # A client arriving now finds the question in its snapshot, and the session waiting.
    late = await connect(d, "late")
    snapshot = await snapshot_of(late, cid)
    assert snapshot["approvals"] == [seen_a]
    assert snapshot["sessions"][0]["status"] == "awaiting_approval"

    with pytest.raises(RpcError) as bad:
        await respond(b, cid, seen_a["approvalId"], "maybe")
    assert bad.value.kind == "invalid_params" and error_data(bad.value)["param"] == "decision"
    result = await respond(b, cid, seen_a["approvalId"], "deny", "not in my repo")
    assert result == {"approvalId": seen_a["approvalId"], "decision": "deny"}
    for client in (a, b, late):
        notes = await collect_until(client, turn_ended())
        [resolved] = [n["params"] for n in notes if n["method"] == "approval/resolved"]
        assert resolved["decision"] == "deny" and resolved["message"] == "not in my repo"
        [out] = completed_items(notes, "tool_result")
        assert out["isError"] and "denied" in out["output"] and "not in my repo" in out["output"]
        assert notes[-1]["params"]["status"] == "completed"
    assert not marker.exists()
    # The first answer won: a second one is told so, and an unknown id is not found.
    with pytest.raises(RpcError) as second:
        await respond(a, cid, seen_a["approvalId"], "allow")
    assert second.value.kind == "already_resolved"
    with pytest.raises(RpcError) as unknown:
        await respond(a, cid, "f" * 32, "allow")
    assert unknown.value.kind == "not_found"
    snapshot = await snapshot_of((await connect(d, "later")), cid)
    assert snapshot["approvals"] == []


async def test_allow_from_the_other_client_runs_the_call(
    connect: Connect, daemon_factory: DemoFactory
) -> None:
    d = daemon_factory(demo_config())
    a, b, cid = await two_clients(connect, d)
    await send(a, cid, "run: echo approved-output")
    asked = await requested(b)
    await respond(b, cid, asked["approvalId"], "allow")
    notes = await collect_until(a, turn_ended())
    [resolved] = [n["params"] for n in notes if n["method"] == "approval/resolved"]
    assert resolved == {
        "conversationId": cid,
        "seq": resolved["seq"],
        "sessionId": asked["sessionId"],
        "approvalId": asked["approvalId"],
        "decision": "allow",
    }
    [out] = completed_items(notes, "tool_result")
    assert not out["isError"] and "approved-output" in out["output"]
    # The session waited, then ran again once answered.
    assert statuses(notes)[-2:] == ["awaiting_approval", "running"]
    # "allow" is for this call only: the same command asks again.
    await send(a, cid, "run: echo approved-output")
    again = await requested(a)
    await respond(a, cid, again["approvalId"], "deny")
    await collect_until(a, turn_ended())


async def test_the_model_receives_the_deny_message(
    connect: Connect, daemon_factory: DemoFactory, fake: FakeProvider
) -> None:
    d = daemon_factory(fake_config(fake, "always"))
    client = await connect(d)
    cid = await new_conversation(client, str(d.workdir))
    fake.enqueue(
        Reply().tool_call("shell", {"command": "touch marker"}), Reply().text("Understood.")
    )
    await send(client, cid, "make a marker")
    asked = await requested(client)
    await respond(client, cid, asked["approvalId"], "deny", "use the build dir instead")
    await collect_until(client, turn_ended())
    _first, second = fake.requests
    [message] = [m for m in second.json["messages"] if m["role"] == "tool"]
    assert "denied" in message["content"]
    assert "use the build dir instead" in message["content"]
    assert not (d.workdir / "marker").exists()


# -- allow for this conversation ---------------------------------------------------------------


async def test_allow_for_the_conversation_is_remembered_across_a_restart(
    connect: Connect,
    daemon_factory: DemoFactory,
) -> None:
    d = daemon_factory(demo_config())
    client = await connect(d)
    cid = await new_conversation(client, str(d.workdir))
    await send(client, cid, "run: echo granted one")
    asked = await requested(client)
    await respond(client, cid, asked["approvalId"], "allow_conversation")
    await collect_until(client, turn_ended())

    async def runs_without_asking(client: Client, text: str, expected: str) -> None:
        await send(client, cid, text)
        notes = await collect_until(client, turn_ended())
        assert not [n for n in notes if n["method"].startswith("approval/")]
        [out] = completed_items(notes, "tool_result")
        assert expected in out["output"]

    await runs_without_asking(client, "run: echo granted one", "one")
    await client.close()
    d.stop()
    d.start()
    client = await connect(d)
    await client.subscribe(cid)
    await runs_without_asking(client, "run: echo granted one", "one")
    # The grant covers that exact command only, as the prompt said.
    assert "`echo granted one`" in (asked["grantScope"] or "")
    await send(client, cid, "run: echo granted two")
    other = await requested(client)
    assert other["arguments"] == {"command": "echo granted two"}
    await respond(client, cid, other["approvalId"], "deny")
    await collect_until(client, turn_ended())


# -- interrupts and subagents ------------------------------------------------------------------


async def test_an_interrupt_while_waiting_resolves_it_denied(
    connect: Connect, daemon_factory: DemoFactory
) -> None:
    d = daemon_factory(demo_config())
    a, b, cid = await two_clients(connect, d)
    await send(a, cid, "run: touch marker")
    asked = await requested(b)
    assert (await a.request("turn/interrupt", {"conversationId": cid}))["interrupted"]
    notes = await collect_until(b, turn_ended())
    [resolved] = [n["params"] for n in notes if n["method"] == "approval/resolved"]
    assert resolved["approvalId"] == asked["approvalId"] and resolved["decision"] == "deny"
    assert notes[-1]["params"]["status"] == "interrupted"
    assert not (d.workdir / "marker").exists()
    with pytest.raises(RpcError) as late:
        await respond(a, cid, asked["approvalId"], "allow")
    assert late.value.kind == "already_resolved"
    items = (await a.request("conversation/read", {"conversationId": cid}))["items"]
    [out] = [i for i in items if i["type"] == "tool_result"]
    assert out["isError"] and "did not run" in out["output"]


async def test_a_subagents_request_arrives_with_its_name(
    connect: Connect, daemon_factory: DemoFactory
) -> None:
    # The demo model spawns the first configured agent: the worker, which asks for everything.
    config = """
default_agent = "main"

[models.demo]
provider = "demo"
pace_ms = 0

[agents.worker]
description = "Asks first"
approval = "always"

[agents.main]
description = "Root"
model = "demo"
"""
    d = daemon_factory(config)
    a, b, cid = await two_clients(connect, d)
    await send(a, cid, "spawn: run: echo from-worker")
    asked = await requested(b)
    assert asked["agent"] == "worker"
    sessions = (await a.request("sessions/list", {"conversationId": cid}))["sessions"]
    [worker] = [s for s in sessions if s["agent"] == "worker"]
    assert asked["sessionId"] == worker["sessionId"] and worker["status"] == "awaiting_approval"
    await respond(b, cid, asked["approvalId"], "allow")
    notes = await collect_until(a, turn_ended(worker["sessionId"]))
    [out] = [
        i for i in completed_items(notes, "tool_result") if i["sessionId"] == worker["sessionId"]
    ]
    assert "from-worker" in out["output"]


# -- escalation and "never" --------------------------------------------------------------------


async def test_escalate_asks_before_writing_outside_the_workspace(
    connect: Connect, daemon_factory: DemoFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    d = daemon_factory(fake_config(fake, "escalate"))
    client = await connect(d)
    cid = await new_conversation(client, str(d.workdir))
    outside = tmp_path / "elsewhere" / "notes.txt"
    inside = d.workdir / "inside.txt"
    fake.enqueue(
        Reply().tool_call("write_file", {"path": str(inside), "content": "in"}),
        Reply().tool_call("write_file", {"path": str(outside), "content": "out"}),
        Reply().text("Written."),
    )
    await send(client, cid, "write two files")
    asked = await requested(client)
    # The write inside the working directory did not ask; the one outside does.
    assert inside.read_text() == "in"
    assert asked["tool"] == "write_file" and str(outside) in asked["reason"]
    assert not outside.exists()
    await respond(client, cid, asked["approvalId"], "allow")
    notes = await collect_until(client, turn_ended())
    assert notes[-1]["params"]["status"] == "completed"
    assert outside.read_text() == "out"


async def test_never_refuses_a_blocked_write_without_asking(
    connect: Connect, daemon_factory: DemoFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    d = daemon_factory(fake_config(fake, "never"))
    client = await connect(d)
    cid = await new_conversation(client, str(d.workdir))
    outside = tmp_path / "elsewhere.txt"
    fake.enqueue(
        Reply().tool_call("write_file", {"path": str(outside), "content": "out"}),
        Reply().text("Could not."),
    )
    await send(client, cid, "write outside")
    notes = await collect_until(client, turn_ended())
    assert not [n for n in notes if n["method"].startswith("approval/")]
    [out] = completed_items(notes, "tool_result")
    assert out["isError"] and str(outside) in out["output"] and "never" in out["output"]
    assert not outside.exists()


async def test_a_shell_call_asking_to_leave_the_sandbox_runs_outside_once_allowed(
    connect: Connect, daemon_factory: DemoFactory, fake: FakeProvider, tmp_path: Path
) -> None:
    d = daemon_factory(fake_config(fake, "escalate"))
    client = await connect(d)
    cid = await new_conversation(client, str(d.workdir))
    outside = tmp_path / "shared" / "flag"
    outside.parent.mkdir()
    touch = {"command": f"touch {outside}"}
    escalated = {**touch, "outside_sandbox": True, "justification": "the flag lives in shared/"}
    fake.enqueue(
        Reply().tool_call("shell", touch),
        Reply().tool_call("shell", escalated),
        Reply().text("Done."),
    )
    await send(client, cid, "set the flag")
    asked = await requested(client)
    # The sandboxed attempt ran without asking, and could not write there.
    assert not outside.exists()
    assert asked["tool"] == "shell" and asked["reason"] == "the flag lives in shared/"
    await respond(client, cid, asked["approvalId"], "allow")
    await collect_until(client, turn_ended())
    items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
    first, second = [i for i in items if i["type"] == "tool_result"]
    assert "exit code: 0" not in first["output"]
    assert not second["isError"] and "exit code: 0" in second["output"]
    assert outside.exists()


async def test_a_pending_approval_is_lost_when_the_daemon_stops(
    connect: Connect, daemon_factory: DemoFactory
) -> None:
    d = daemon_factory(demo_config())
    client = await connect(d, "a")
    cid = await new_conversation(client, str(d.workdir))
    await send(client, cid, "run: touch marker")
    asked = await requested(client)
    d.stop()
    d.start()
    client = await connect(d, "b")
    snapshot = await snapshot_of(client, cid)
    assert snapshot["approvals"] == []
    assert snapshot["sessions"][0]["status"] == "interrupted"
    [out] = [i for i in snapshot["sessions"][0]["items"] if i["type"] == "tool_result"]
    assert out["isError"] and "did not run" in out["output"]
    with pytest.raises(RpcError) as gone:
        await respond(client, cid, asked["approvalId"], "allow")
    assert gone.value.kind == "not_found"
    assert not (d.workdir / "marker").exists()
