"""Stop reasons from the provider (max_tokens, refusal) and embedded context in prompts, with a
provider faked at the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import embedded_text_resource, resource_block, resource_link_block, text_block

from tests.acp.harness import acp_agent
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply


def _config(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + '\n[agents.default]\ndescription = "d"\nmodel = "fake"\n'


async def test_stop_reasons_follow_the_provider(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon = daemon_factory(_config(fake_openai))
    fake_openai.enqueue(
        Reply().text("a long answer that got ").stop_reason("max_tokens"),
        Reply().text("I can't help with that.").stop_reason("content_filter"),
        Reply().text("done"),
    )
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        cut = await conn.prompt(session_id=sid, prompt=[text_block("write a lot")])
        refused = await conn.prompt(session_id=sid, prompt=[text_block("something bad")])
        normal = await conn.prompt(session_id=sid, prompt=[text_block("fine")])
        assert (cut.stop_reason, refused.stop_reason, normal.stop_reason) == (
            "max_tokens",
            "refusal",
            "end_turn",
        )
        assert "a long answer that got" in rec.text(sid)


async def test_embedded_context_and_links_reach_the_model(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon = daemon_factory(_config(fake_openai))
    fake_openai.enqueue(Reply().text("ok"))
    notes = daemon.workdir / "notes.md"
    async with acp_agent(daemon, tmp_path) as (conn, _rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        await conn.prompt(
            session_id=sid,
            prompt=[
                text_block("summarize "),
                resource_block(embedded_text_resource(f"file://{notes}", "line one\nline two")),
                text_block(" and look at "),
                resource_link_block(name="main.py", uri=f"file://{daemon.workdir}/main.py"),
            ],
        )
    sent = json.dumps(fake_openai.requests[-1].json["messages"])
    assert "line one\\nline two" in sent
    assert f"<context file='{notes}'>" in sent
    assert f"[main.py]({daemon.workdir}/main.py)" in sent
