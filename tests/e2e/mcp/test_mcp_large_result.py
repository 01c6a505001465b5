"""A result past the streamable-HTTP transport's default limit (issue 34, point 2), through the
real daemon and a real SDK-built HTTP server: it is cut to `tool_output_limit` like any output;
past `max_result_mb` it is a tool error naming that setting. Either way the call of another
conversation on the same server, in flight meanwhile, still succeeds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    new_conversation,
    run_turn,
    tool_started,
    turn_ended,
)

Factory = Callable[..., Daemon]
LIMIT = 5000
BIG = 3_000_000  # over the SDK's 1 MiB default for one server-sent event


def config(fake: FakeProvider, url: str, extra: str = "") -> str:
    return (
        fake.config_toml("fake")
        + f"\n[server]\nport = 0\ntool_output_limit = {LIMIT}\n"
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = ["mcp:web"]\n'
        + f'\n[mcp_servers.web]\nurl = "{url}"\nstartup_timeout_s = 45\ntrust = true\n'
        + extra
    )


def until_exists(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def result_of(notes: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    [result] = [r for r in completed_items(notes, "tool_result") if r["name"].endswith(tool)]
    return result


async def big_call_beside_a_waiting_one(
    d: Daemon, fake: FakeProvider, client: Client, flag: Path
) -> dict[str, Any]:
    """Conversation B's call stays in flight on the shared server until `flag` exists, while
    conversation A's turn calls `big`; returns A's result once B's call has succeeded."""
    fake.enqueue(Reply().tool_call("mcp__web__wait_file", {"path": str(flag)}))
    b = await new_conversation(client, str(d.workdir))
    await client.request("input/send", {"conversationId": b, "text": "wait", "mode": "queue"})
    await collect_until(client, tool_started, 60)
    await anyio.to_thread.run_sync(until_exists, Path(f"{flag}.started"))  # the server has it

    fake.enqueue(Reply().tool_call("mcp__web__big", {"size": BIG}), Reply().text("big"))
    a = await new_conversation(client, str(d.workdir))
    notes = await run_turn(client, a, "big")

    fake.enqueue(Reply().text("done"))
    await anyio.Path(flag).touch()
    notes += await collect_until(client, turn_ended(), 60)
    big, waited = result_of(notes, "big"), result_of(notes, "wait_file")
    assert waited["output"] == "waited" and not waited["isError"]
    [server] = (await client.request("mcp/list"))["servers"]
    assert server["status"] == "ready"
    return big


@pytest.mark.timeout(180)
async def test_a_3_mb_http_result_is_cut_and_another_conversations_call_goes_on(
    daemon_factory: Factory, fake: FakeProvider, http_server: str, tmp_path: Path
) -> None:
    d = daemon_factory(config(fake, http_server))
    flag = tmp_path / "flag"
    client = await d.client()
    try:
        big = await big_call_beside_a_waiting_one(d, fake, client, flag)
        assert not big["isError"] and big.get("truncated") is True, big["output"]
        assert big["output"].startswith("start\n") and big["output"].endswith("\nend")
        assert len(big["output"]) < LIMIT + 200  # the cut, and its notice
        assert "characters of output truncated" in big["output"]
    finally:
        await anyio.Path(flag).touch()  # the server's waiting call ends, so it can stop
        await client.close()


@pytest.mark.timeout(180)
async def test_a_result_past_max_result_mb_names_it_and_fails_no_other_call(
    daemon_factory: Factory, fake: FakeProvider, http_server: str, tmp_path: Path
) -> None:
    d = daemon_factory(config(fake, http_server, "max_result_mb = 1\n"))
    flag = tmp_path / "flag"
    client = await d.client()
    try:
        big = await big_call_beside_a_waiting_one(d, fake, client, flag)
        assert big["isError"]
        assert big["output"] == (
            "web: the result of big is larger than max_result_mb = 1 MiB, the most read from "
            "this server; raise it in [mcp_servers.web] to receive it"
        )
    finally:
        await anyio.Path(flag).touch()
        await client.close()
