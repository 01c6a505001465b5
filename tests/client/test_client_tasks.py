"""The Python client's tasks have one owner (issue 25; docs/design.md, "Structured concurrency"):
the connection's reader is a task of the runner's task group, and `close()` ends the runner. So
closing a client leaves no task behind, and a reader cannot outlive its runner."""

from __future__ import annotations

import asyncio

from openvaala_server.client import Client
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


async def test_closing_a_client_leaves_no_task_behind(daemon: Daemon) -> None:
    before = asyncio.all_tasks()
    client = await Client.connect(data_dir=daemon.data_dir, start=False)
    cid = await new_conversation(client, str(daemon.workdir))
    await run_turn(client, cid, "hello")
    assert asyncio.all_tasks() - before  # the runner and its reader run meanwhile
    await client.close()
    assert asyncio.all_tasks() - before == set()


async def test_the_reader_is_the_runners_and_ends_with_it(daemon: Daemon) -> None:
    client = await Client.connect(data_dir=daemon.data_dir, start=False)
    try:
        await client.request("conversation/list", {})
        runner, reader = client._runner, client._reader_task
        assert runner is not None and reader is not None and not reader.done()
        runner.cancel()  # the owner going away, whatever the reason
        await asyncio.wait({runner}, timeout=10)
        assert runner.done() and reader.done()
    finally:
        await client.close()

    async def drained() -> None:
        async for _note in client.notifications():
            pass

    await asyncio.wait_for(drained(), 10)  # the notifications end: the client says it closed


async def test_a_task_of_the_client_ends_with_it_and_may_close_it(daemon: Daemon) -> None:
    before = asyncio.all_tasks()
    client = await Client.connect(data_dir=daemon.data_dir, start=False)
    started = asyncio.Event()

    async def pump() -> None:  # as a `Link`'s notification pump: until the client is closed
        started.set()
        await asyncio.Event().wait()

    client.start_soon(pump, "test-pump")
    await asyncio.wait_for(started.wait(), 10)
    await client.close()
    assert asyncio.all_tasks() - before == set()

    # A task of the client's may close it (a pump told to stop): it does not wait for itself.
    client = await Client.connect(data_dir=daemon.data_dir, start=False)
    closed = asyncio.Event()

    async def closer() -> None:
        await client.close()
        closed.set()

    client.start_soon(closer, "test-closer")
    await asyncio.wait_for(closed.wait(), 10)
    runner = client._runner
    assert runner is not None
    await asyncio.wait({runner}, timeout=10)
    assert asyncio.all_tasks() - before == set()
