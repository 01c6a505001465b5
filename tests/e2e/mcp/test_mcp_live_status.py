"""MCP servers' state pushed to clients (`mcp/statusChanged`), through the real daemon and real
SDK-built servers: a client that never asks sees a slow server go from starting to ready, and a
server that changes its lists at run time (`notifications/tools/list_changed`,
`notifications/resources/list_changed`) is listed again: clients are told, and the next turn
offers the new tool."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config, gated_config
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, completed_items, new_conversation, run_turn

Factory = Callable[..., Daemon]


def status_is(status: str, tool: str | None = None) -> Callable[[Note], bool]:
    """The first `mcp/statusChanged` of server `t` in `status` (listing `tool`, if given)."""

    def stop(note: Note) -> bool:
        p = note["params"]
        return (
            note["method"] == "mcp/statusChanged"
            and p["name"] == "t"
            and p["status"] == status
            and (tool is None or tool in p["tools"])
        )

    return stop


@pytest.mark.timeout(120)
async def test_a_client_that_never_asks_sees_a_slow_server_start(
    daemon_factory: Factory, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    d = daemon_factory(gated_config(fake, gate))
    fake.enqueue(Reply().text("hello"))
    watcher = await d.client("watcher")  # only listens: never calls mcp/list
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "hi")  # starts the server in the background
        await collect_until(watcher, status_is("starting"), timeout=STARTUP_S)
        gate.touch()  # the server may answer now
        notes = await collect_until(watcher, status_is("ready"), timeout=STARTUP_S)
        ready = notes[-1]["params"]
        assert {"echo", "grow"} <= set(ready["tools"]) and "toolsLastKnown" not in ready
        assert ready["resources"] == [{"uri": "notes://today", "name": "today"}]
        # What mcp/list says is what was pushed.
        assert (await client.request("mcp/list"))["servers"] == [ready]
    finally:
        await watcher.close()
        await client.close()


@pytest.mark.timeout(120)
async def test_a_server_that_lists_a_new_tool_is_listed_again(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n"))
    fake.enqueue(Reply().tool_call("mcp__t__grow", {}), Reply().text("grown"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "grow")
        [result] = completed_items(notes, "tool_result")
        assert result["output"] == "grown"
        # Not offered before the call (the server may not have been ready for that request; the
        # request after the call may already offer it: it is listed again at once).
        first = fake.requests[0].json
        assert "mcp__t__grown" not in {t["function"]["name"] for t in first.get("tools", [])}
        # The server said its lists changed: every client is told what it lists now (during
        # the turn or after it).
        told = status_is("ready", "grown")
        if not any(told(n) for n in notes):
            notes = await collect_until(client, told, timeout=STARTUP_S)
        state = next(n for n in notes if told(n))["params"]
        assert {"uri": "notes://later", "name": "later"} in state["resources"]

        # The next turn offers the new tool, and it runs.
        fake.enqueue(Reply().tool_call("mcp__t__grown", {}), Reply().text("done"))
        notes = await run_turn(client, cid, "use it")
        assert "mcp__t__grown" in {t["function"]["name"] for t in fake.requests[-2].json["tools"]}
        [result] = completed_items(notes, "tool_result")
        assert result["output"] == "grown here" and not result["isError"]
    finally:
        await client.close()


@pytest.mark.timeout(120)
async def test_a_server_that_exits_while_idle_is_shown_failed_without_asking(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(daemon_config(fake, extra=f"startup_timeout_s = {STARTUP_S:g}\n"))
    fake.enqueue(Reply().tool_call("mcp__t__pid", {}), Reply().text("ok"))
    watcher = await d.client("watcher")  # only listens: never calls mcp/list
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        notes = await run_turn(client, cid, "pid")
        [result] = completed_items(notes, "tool_result")
        await collect_until(watcher, status_is("ready"), timeout=STARTUP_S)
        # The turn is over and nobody asks: the server's process ends on its own.
        os.kill(int(result["output"]), signal.SIGKILL)
        notes = await collect_until(watcher, status_is("failed"), timeout=STARTUP_S)
        assert "exited" in notes[-1]["params"]["error"]
    finally:
        await watcher.close()
        await client.close()


@pytest.mark.timeout(120)
async def test_a_list_change_told_while_the_server_starts_is_listed(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    # The server adds a tool after the start's tool listing, before the server is ready.
    d = daemon_factory(
        daemon_config(fake, mode="late", extra=f"startup_timeout_s = {STARTUP_S:g}\n")
    )
    fake.enqueue(Reply().text("hello"))
    watcher = await d.client("watcher")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await run_turn(client, cid, "hi")  # starts the server
        await collect_until(watcher, status_is("ready", "grown"), timeout=STARTUP_S)
        servers = (await client.request("mcp/list"))["servers"]
        assert "grown" in servers[0]["tools"]
    finally:
        await watcher.close()
        await client.close()
