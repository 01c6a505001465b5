"""A compaction whose model call fails temporarily is retried, and the retry is announced like a
turn's (docs/protocol.md, Compaction): `retry/scheduled` between `compaction/started` and
`compaction/completed`, for the compacted session."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.fakes import FakeProvider, Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, new_conversation, run_turn


async def test_a_compaction_retry_is_announced(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    config = (
        fake_openai.config_toml("fake", context_window=100_000, max_output_tokens=1000)
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
        + "\n[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\nmax_retries = 3\n"
    )
    d: Daemon = daemon_factory(config=config)
    client: Client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        fake_openai.enqueue(
            Reply().text("one"), Reply.server_error(503), Reply().text("THE SUMMARY")
        )
        await run_turn(client, cid, "first")
        root = (await client.request("sessions/list", {"conversationId": cid}))["sessions"][0]
        result = await client.request("conversation/compact", {"conversationId": cid})
        assert result["compacted"] is True
        notes = await collect_until(client, method_is("compaction/completed"))
        methods = [n["method"] for n in notes if n["method"].startswith(("compaction/", "retry/"))]
        assert methods == ["compaction/started", "retry/scheduled", "compaction/completed"]
        [retry] = [n["params"] for n in notes if n["method"] == "retry/scheduled"]
        assert retry["sessionId"] == root["sessionId"]
        assert retry["attempt"] == 1
    finally:
        await client.close()
