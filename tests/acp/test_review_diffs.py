"""Edits reviewed in the editor (docs/editors.md, ACP): the permission question about a
write_file, an apply_patch delete or a failing edit carries the change the daemon read — the
real old text, never a placeholder — and a call that failed keeps no proposed diff. Real daemon,
`openvaala acp`, the official SDK's client; the model faked at the wire."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.acp.harness import Recorder, acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon

PATCH = "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch"


def _edits(content: list[Any] | None) -> list[tuple[str, str | None, str]]:
    return [
        (Path(c.path).name, c.old_text, c.new_text)
        for c in content or []
        if isinstance(c, FileEditToolCallContent)
    ]


async def _allow(rec: Recorder, index: int) -> ToolCallUpdate:
    await rec.until(lambda: len(rec.questions) > index)
    _, tool_call, answer = rec.questions[index]
    answer.set_result(
        RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
    )
    return tool_call


async def test_questions_carry_the_real_old_text_and_failed_calls_no_diff(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(
        fake_config(fake_openai).replace('model = "fake"', 'model = "fake"\napproval = "always"')
    )
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "notes.txt").write_text("old line\n")
    (work / "gone.txt").write_text("to delete\n")
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": "notes.txt", "content": "new line\n"}),
        Reply().tool_call("apply_patch", {"input": PATCH}),
        Reply().tool_call("edit_file", {"path": "notes.txt", "old_text": "gone", "new_text": "x"}),
        Reply().text("done"),
    )
    async with acp_agent(daemon, tmp_path) as (conn, rec):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))

        write = await _allow(rec, 0)
        assert _edits(write.content) == [("notes.txt", "old line\n", "new line\n")]
        delete = await _allow(rec, 1)
        assert _edits(delete.content) == [("gone.txt", "to delete\n", "")]
        failing = await _allow(rec, 2)
        assert _edits(failing.content) == []  # it would change nothing
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"

        calls = rec.tool_calls(sid)
        assert len(calls) == 3
        # Before the question, the call showed the daemon's diff of the file as it is.
        first = rec.tool_updates(sid, calls[0].tool_call_id)
        assert ("notes.txt", "old line\n", "new line\n") in _edits(first[0].content)
        # Done, the write shows the change it made, with what it replaced.
        assert first[-1].status == "completed"
        assert _edits(first[-1].content) == [("notes.txt", "old line\n", "new line\n")]
        # The failed edit ends with its error and no diff (its start proposed the snippet).
        assert _edits(calls[2].content) == [("notes.txt", "gone", "x")]
        last = rec.tool_updates(sid, calls[2].tool_call_id)[-1]
        assert last.status == "failed" and _edits(last.content) == []
        assert last.content and "not found" in last.content[-1].content.text
