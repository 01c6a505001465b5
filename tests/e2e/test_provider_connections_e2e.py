"""One kept HTTP client per model provider (docs/design.md, "Performance at scale"): a real daemon
talks to the fake provider, which records every TCP connection it accepts — so the test sees at
the wire that turns reuse one connection, that a reload replacing the model's config closes the
old one while the daemon keeps running, and that shutdown closes the rest."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES
from tests.support.daemon import Daemon
from tests.support.events import (
    Note,
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    run_turn,
)

AGENT = '\n[agents.default]\ndescription = "test"\nmodel = "fake"\n'


def answers(notes: list[Note]) -> list[str]:
    return [str(item["text"]) for item in completed_items(notes, "agent_message")]


@pytest.mark.parametrize("wire", [CHAT, RESPONSES, ANTHROPIC])
async def test_turns_of_several_conversations_share_one_connection(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch, wire: str
) -> None:
    with FakeProvider(wire=wire) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        d = daemon_factory(fake.config_toml("fake") + AGENT)
        fake.enqueue(Reply().text("one"), Reply().text("two"), Reply().text("three"))
        client = await d.client()
        try:
            first = await new_conversation(client, str(d.workdir))
            assert answers(await run_turn(client, first, "hi")) == ["one"]
            assert answers(await run_turn(client, first, "again")) == ["two"]
            second = await new_conversation(client, str(d.workdir))
            assert answers(await run_turn(client, second, "hello")) == ["three"]
        finally:
            await client.close()
        # Three model calls, one TCP connection, still open for the next call.
        assert len(fake.requests) == 3
        assert [c.requests for c in fake.connections] == [3]
        assert not fake.connections[0].closed.is_set()


async def test_a_reload_closes_the_replaced_client_and_shutdown_closes_the_kept_one(
    daemon_factory: Callable[..., Daemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        d = daemon_factory(fake.config_toml("fake") + AGENT)
        fake.default_reply = Reply().text("fine")
        client = await d.client()
        try:
            cid = await new_conversation(client, str(d.workdir))
            await run_turn(client, cid, "hi")
            assert len(fake.connections) == 1
            old = fake.connections[0]

            # The user changes the model's settings: its provider (and client) is replaced, and
            # the old client's connection is closed at once, while the daemon keeps serving.
            d.config_path.write_text(fake.config_toml("fake", max_output_tokens=2_000) + AGENT)
            await collect_until(client, method_is("config/reloaded"))
            assert await old.wait_closed()
            assert d.process is not None and d.process.poll() is None

            await run_turn(client, cid, "again")
            assert fake.last_request.json["max_tokens"] == 2_000
            assert len(fake.connections) == 2
            kept = fake.connections[1]
            assert not kept.closed.is_set()
        finally:
            await client.close()
        assert d.stop() == 0
        assert await kept.wait_closed()
        assert "closed the connections of 1 model providers" in d.log()
