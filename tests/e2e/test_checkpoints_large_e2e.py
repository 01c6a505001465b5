"""A file larger than `[checkpoints] max_file_mb` made by a shell command, through the real daemon:
it is recorded as skipped when the turn is captured, listed by `conversation/checkpoints`, left
as it is by undo and rewind, which restore the rest and name it (docs/storage.md, "Checkpoints")."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import NamedTuple

from openvaala_server.client import Client
from tests.e2e.test_checkpoints_e2e import config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn

Factory = Callable[..., Daemon]
BIG = 11_000_000  # over the default max_file_mb of 10
SKIPPED = [{"path": "data.db", "reason": "too_large"}]


class Ran(NamedTuple):
    work: Path
    client: Client
    cid: str


@contextlib.asynccontextmanager
async def two_turns(daemon_factory: Factory, fake: FakeProvider) -> AsyncIterator[Ran]:
    """A daemon where turn 1 wrote a.txt and turn 2 made an 11 MB data.db with the shell, and
    b.txt."""
    d = daemon_factory(config(fake))
    work = d.workdir
    client = await d.client()
    try:
        yield Ran(work, client, await _two_turns(client, fake, work))
    finally:
        await client.close()


async def _two_turns(client: Client, fake: FakeProvider, work: Path) -> str:
    cid = await new_conversation(client, str(work))
    fake.enqueue(
        Reply().tool_call("write_file", {"path": "a.txt", "content": "one\n"}),
        Reply().text("ok"),
    )
    await run_turn(client, cid, "write a")
    fake.enqueue(
        Reply().tool_call(
            "shell", {"command": f"head -c {BIG} /dev/zero > data.db && echo two > b.txt"}
        ),
        Reply().text("ok"),
    )
    await run_turn(client, cid, "make the database")
    assert (work / "data.db").stat().st_size == BIG and (work / "b.txt").exists()
    return cid


async def test_the_large_file_is_listed_as_skipped_and_undo_restores_the_rest(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    async with two_turns(daemon_factory, fake) as (work, client, cid):
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        first, second = report["turns"]
        assert [f["path"] for f in first["files"]] == ["a.txt"] and "skipped" not in first
        assert second["files"] == [{"path": "b.txt", "change": "created"}]
        assert second["skipped"] == SKIPPED

        undone = await client.request("conversation/undo", {"conversationId": cid})
        assert undone["restored"] == ["b.txt"] and undone["skipped"] == SKIPPED
        assert not (work / "b.txt").exists()
        assert (work / "data.db").stat().st_size == BIG  # left as it is
        again = await client.request("conversation/undo", {"conversationId": cid})
        assert again["restored"] == ["a.txt"] and "skipped" not in again
        assert not (work / "a.txt").exists()


async def test_a_rewind_restores_the_rest_and_names_the_large_file(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    async with two_turns(daemon_factory, fake) as (work, client, cid):
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        first = next(i for i in items if i["type"] == "user_message")
        rewound = await client.request(
            "conversation/rewind",
            {"conversationId": cid, "messageId": first["itemId"], "restoreFiles": True},
        )
        files = rewound["files"]
        assert files["restored"] == ["a.txt", "b.txt"] and files["skipped"] == SKIPPED
        assert files["conflicts"] == []
        assert not (work / "a.txt").exists() and not (work / "b.txt").exists()
        assert (work / "data.db").stat().st_size == BIG
