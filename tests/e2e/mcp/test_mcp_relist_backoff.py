"""A server that answers every tools/list with another `notifications/tools/list_changed` (a real
SDK-built server) is listed again with a growing wait between listings, not in a loop: the
daemon keeps serving turns and requests, and the listings stay within what the back-off allows
for the time that passed (docs/protocol.md, mcp/statusChanged)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from openvaala_server.mcp.connection import RELIST_MAX_S, RELIST_MIN_S
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.mcp.conftest import STARTUP_S, daemon_config
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

Factory = Callable[..., Daemon]


def allowed_listings(elapsed: float) -> int:
    """The most listings the back-off allows in `elapsed` seconds: the start's, one at once,
    then each after twice the wait before it (RELIST_MIN_S up to RELIST_MAX_S)."""
    count, at, delay = 2, 0.0, RELIST_MIN_S
    while at + delay <= elapsed:
        at += delay
        count += 1
        delay = min(delay * 2, RELIST_MAX_S)
    return count


def listings(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


async def until_listed(path: Path, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while listings(path) < count:
        assert time.monotonic() < deadline, f"listed {listings(path)} times, not {count}"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(120)
async def test_a_server_that_always_says_its_tools_changed_is_not_relisted_in_a_loop(
    daemon_factory: Factory, fake: FakeProvider, tmp_path: Path
) -> None:
    counted = tmp_path / "listed.txt"
    d = daemon_factory(
        daemon_config(
            fake,
            mode="chatty",
            mode_args=(str(counted),),
            extra=f"startup_timeout_s = {STARTUP_S:g}\n",
        )
    )
    fake.enqueue(
        Reply().tool_call("mcp__t__echo", {"text": "start"}),
        Reply().text("started"),
        Reply().tool_call("mcp__t__add", {"a": 2, "b": 3}),
        Reply().text("still here"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        started = time.monotonic()  # before the server's first listing
        await run_turn(client, cid, "start it")
        # It is listed again after each change it tells, more and more slowly.
        await until_listed(counted, 4, timeout=STARTUP_S)
        # Meanwhile the daemon serves: a turn calls the server, a request is answered.
        notes = await run_turn(client, cid, "add")
        assert notes[-1]["params"]["status"] == "completed"
        [server] = (await client.request("mcp/list"))["servers"]
        assert server["status"] == "ready" and "add" in server["tools"]
        elapsed = time.monotonic() - started
        assert listings(counted) <= allowed_listings(elapsed)
    finally:
        await client.close()
