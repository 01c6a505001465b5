"""Archiving and unarchiving a conversation through the real daemon leaves its `updatedAt`, and so
its place in the list, as it was — also once the daemon has read its journal again."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


async def _listed(client: Client) -> list[tuple[str, str]]:
    listed = await client.request("conversation/list", {})
    return [(c["conversationId"], c["updatedAt"]) for c in listed["conversations"]]


async def test_archive_then_unarchive_keeps_updated_at_and_the_order(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    client = await d.client()
    fake_openai.default_reply = Reply().text("ok")
    older = await new_conversation(client, str(d.workdir))
    await run_turn(client, older, "the older one")
    newer = await new_conversation(client, str(d.workdir))
    await run_turn(client, newer, "the newer one")
    before = await _listed(client)
    assert [cid for cid, _ in before] == [newer, older]

    await client.request("conversation/archive", {"conversationId": older})
    archived = await client.request("conversation/list", {"archived": True})
    [(cid, stamp)] = [(c["conversationId"], c["updatedAt"]) for c in archived["conversations"]]
    assert (cid, stamp) == before[1]
    await client.request("conversation/unarchive", {"conversationId": older})
    assert await _listed(client) == before

    await client.close()
    d.restart()  # folded from the journals again
    client = await d.client()
    assert await _listed(client) == before
    await client.close()
