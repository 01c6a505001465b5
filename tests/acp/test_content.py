"""Stop reasons from the provider (max_tokens, refusal) and embedded context in prompts, with a
provider faked at the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import (
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import AgentPlanUpdate, FileEditToolCallContent

from tests.acp.harness import acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon


async def test_stop_reasons_and_embedded_context(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon = daemon_factory(fake_config(fake_openai))
    fake_openai.enqueue(
        Reply().text("a long answer that got ").stop_reason("max_tokens"),
        Reply().text("I can't help with that.").stop_reason("content_filter"),
        Reply().text("ok"),
    )
    notes = daemon.workdir / "notes.md"
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        # The provider's own stop reason decides ACP's.
        cut = await conn.prompt(session_id=sid, prompt=[text_block("write a lot")])
        refused = await conn.prompt(session_id=sid, prompt=[text_block("something bad")])
        # An @-mentioned file with its text, and a link to one, reach the model in the message.
        normal = await conn.prompt(
            session_id=sid,
            prompt=[
                text_block("summarize "),
                resource_block(embedded_text_resource(f"file://{notes}", "line one\nline two")),
                text_block(" and look at "),
                resource_link_block(name="main.py", uri=f"file://{daemon.workdir}/main.py"),
            ],
        )
        assert (cut.stop_reason, refused.stop_reason, normal.stop_reason) == (
            "max_tokens",
            "refusal",
            "end_turn",
        )
        assert "a long answer that got" in rec.text(sid)
    sent = json.dumps(fake_openai.requests[-1].json["messages"][-1])
    assert "line one\\nline two" in sent
    assert f"<context file='{notes}'>" in sent
    assert f"[main.py]({daemon.workdir}/main.py)" in sent


DOT_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgYAAAAAMAAWgmWQ0AAAAASUVORK5CYII="
)


async def test_images_in_a_prompt(shared_daemon: Daemon, workdir: Path, tmp_path: Path) -> None:
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(workdir), mcp_servers=[])).session_id
        response = await conn.prompt(
            session_id=sid,
            prompt=[text_block("what is this?"), image_block(DOT_PNG, "image/png")],
        )
        assert response.stop_reason == "end_turn"
        # The demo model (vision) says what reached it: the image's kind, size, and its data.
        assert "I received 1 image(s): image/png of 68 bytes." in rec.text(sid)

        # An image alone is a message too.
        await conn.prompt(session_id=sid, prompt=[image_block(DOT_PNG, "image/png")])
        assert rec.text(sid).count("I received 1 image(s)") == 2

    # A session loaded elsewhere names the images of the history.
    async with acp_agent(shared_daemon, tmp_path) as (conn, rec):
        await conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        assert rec.user_texts(sid)[0] == "what is this? [image: image/png]"


async def test_plan_and_patch_diffs(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon = daemon_factory(fake_config(fake_openai))
    (daemon.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    steps = [
        {"step": "Read the code", "status": "completed"},
        {"step": "Fix it", "status": "in_progress"},
    ]
    patch = "*** Begin Patch\n*** Update File: keep.py\n@@\n a = 1\n-b = 2\n+b = 3\n*** End Patch"
    fake_openai.enqueue(
        Reply().tool_call("update_plan", {"plan": steps}),
        Reply().tool_call("apply_patch", {"input": patch}, call_id="patch-1"),
        Reply().text("fixed"),
    )
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(daemon.workdir), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("fix keep.py")])
        [plan] = rec.of(sid, AgentPlanUpdate)
        assert [(e.content, e.status) for e in plan.entries] == [
            ("Read the code", "completed"),
            ("Fix it", "in_progress"),
        ]
        [start] = [c for c in rec.tool_calls(sid) if c.tool_call_id == "patch-1"]
        assert (start.kind, start.title) == ("edit", "Patch keep.py")
        assert start.locations and start.locations[0].path == str(daemon.workdir / "keep.py")
        final = rec.tool_updates(sid, "patch-1")[-1]
        [diff] = [c for c in final.content or [] if isinstance(c, FileEditToolCallContent)]
        # The applied change, whole file on both sides (the result's `changes`).
        assert (diff.old_text, diff.new_text) == ("a = 1\nb = 2\n", "a = 1\nb = 3\n")

    # Loading the conversation shows its current plan.
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        await conn.load_session(cwd=str(daemon.workdir), session_id=sid, mcp_servers=[])
        assert rec.of(sid, AgentPlanUpdate)[-1].entries[1].content == "Fix it"
