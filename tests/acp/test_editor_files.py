"""ACP that uses the editor's files (docs/editors.md, ACP; docs/design.md, "Files held by an
editor"): with `fs.readTextFile` and `fs.writeTextFile` offered, the file tools read the editor's
unsaved buffers and their edits land in the buffers, not on disk — approvals see the buffer's
text and the checkpoint keeps what the edit replaced. The official SDK's client with in-memory
buffers, `openvaala acp`, a real daemon, the model faked at the wire; every message checked
against the ACP schema."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileEditToolCallContent,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import Recorder, acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.waits import WAIT_S

EDITOR = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


class Buffers(Recorder):
    """An editor's open buffers, in memory: what `fs/*` reads and writes."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kw: Any,
    ) -> ReadTextFileResponse:
        if path not in self.buffers:
            raise RequestError(-32002, "Resource not found", {"uri": path})
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.buffers[path] = content
        return WriteTextFileResponse()


PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-written\n+patched\n*** End Patch"


async def _allow(rec: Recorder, index: int) -> list[tuple[str | None, str]]:
    """The old and new texts question `index` shows, once it is answered "allow"."""
    await rec.until(lambda: len(rec.questions) > index)
    _, question, answer = rec.questions[index]
    answer.set_result(
        RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))
    )
    return [
        (c.old_text, c.new_text)
        for c in question.content or []
        if isinstance(c, FileEditToolCallContent)
    ]


def _outputs(fake: FakeProvider) -> str:
    """Every tool output the model was sent, as one text."""
    return "\n".join(r.body.decode() for r in fake.requests)


async def test_file_tools_read_and_edit_the_editors_buffers_not_the_disk(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    notes, fresh = work / "notes.txt", work / "fresh.txt"
    notes.write_text("saved text\n")
    editor = Buffers({str(notes): "unsaved text\n"})
    fake_openai.enqueue(
        Reply().tool_call("read_file", {"path": "notes.txt"}),
        Reply().tool_call(
            "edit_file", {"path": "notes.txt", "old_text": "unsaved", "new_text": "edited"}
        ),
        Reply().tool_call("write_file", {"path": "fresh.txt", "content": "new file\n"}),
        Reply().text("done"),
    )
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR, schema=schema) as (
        conn,
        rec,
    ):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"

        # The read saw the unsaved buffer; the edit matched text only the buffer has.
        assert "unsaved text" in _outputs(fake_openai)
        assert editor.buffers == {str(notes): "edited text\n", str(fresh): "new file\n"}
        assert notes.read_text() == "saved text\n"
        assert not fresh.exists()
        # The editor shows each change with the buffer's old text.
        edits = [
            (Path(c.path).name, c.old_text, c.new_text)
            for call in rec.tool_calls(sid)
            for u in rec.tool_updates(sid, call.tool_call_id)
            for c in u.content or []
            if isinstance(c, FileEditToolCallContent) and u.status == "completed"
        ]
        assert ("notes.txt", "unsaved text\n", "edited text\n") in edits
        assert ("fresh.txt", None, "new file\n") in edits

    # The checkpoint kept what the edit replaced (the buffer's text): undo puts it back.
    client = await daemon.client()
    try:
        undone = await client.request("conversation/undo", {"conversationId": sid, "force": True})
    finally:
        await client.close()
    assert "notes.txt" in undone["restored"]
    assert notes.read_text() == "unsaved text\n"

    assert {"fs/read_text_file", "fs/write_text_file"} <= set(schema.methods())
    schema.check()


async def test_an_edit_asks_with_the_buffers_text(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    config = fake_config(fake_openai).replace(
        'model = "fake"', 'model = "fake"\napproval = "always"'
    )
    daemon: Daemon = daemon_factory(config)
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "a.txt").write_text("disk\n")
    editor = Buffers({str(work / "a.txt"): "buffer\n"})
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": "a.txt", "content": "written\n"}),
        Reply().tool_call("apply_patch", {"input": PATCH}),
        Reply().text("done"),
    )
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR, schema=schema) as (
        conn,
        rec,
    ):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        assert await _allow(rec, 0) == [("buffer\n", "written\n")]
        # The patch is reviewed against what the write left in the buffer, not the disk.
        assert await _allow(rec, 1) == [("written\n", "patched\n")]
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"
        assert editor.buffers[str(work / "a.txt")] == "patched\n"
    schema.check()


async def test_a_patch_changes_the_editors_buffers(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "app.py").write_text("x = 1\n")
    editor = Buffers({str(work / "app.py"): "x = 1\ny = 2\n"})  # an unsaved line
    patch = (
        "*** Begin Patch\n*** Update File: app.py\n@@\n x = 1\n-y = 2\n+y = 3\n"
        "*** Add File: added.py\n+z = 4\n*** End Patch"
    )
    fake_openai.enqueue(Reply().tool_call("apply_patch", {"input": patch}), Reply().text("done"))
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR, schema=schema) as (
        conn,
        _rec,
    ):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
    assert editor.buffers == {
        str(work / "app.py"): "x = 1\ny = 3\n",
        str(work / "added.py"): "z = 4\n",
    }
    assert (work / "app.py").read_text() == "x = 1\n"
    assert not (work / "added.py").exists()
    assert "Applied the patch: 2 file changes" in fake_openai.last_request.body.decode()
    schema.check()


async def test_after_a_daemon_crash_the_files_are_the_editors_again(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "notes.txt").write_text("saved text\n")
    editor = Buffers({str(work / "notes.txt"): "unsaved text\n"})
    fake_openai.enqueue(
        Reply().text("crashing").hang(),
        Reply().tool_call("read_file", {"path": "notes.txt"}),
        Reply().text("done"),
    )
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR) as (conn, rec):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        crashing = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("a")]))
        await rec.until(lambda: "crashing" in rec.text(sid))
        await asyncio.to_thread(daemon.stop, signal.SIGKILL)
        with pytest.raises(RequestError):
            await asyncio.wait_for(crashing, WAIT_S)
        # `openvaala acp` starts a daemon, which must ask the editor for the files again.
        again = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("b")]), 30)
        assert again.stop_reason == "end_turn"
        assert "unsaved text" in fake_openai.last_request.body.decode()


async def test_undo_of_a_patch_brings_back_the_file_it_deleted_on_disk(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    # One call changes a buffer (in the editor) and deletes a file (on disk): the checkpoint
    # keeps both, so an undo restores the deleted file too.
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "app.py").write_text("x = 1\n")
    (work / "old.py").write_text("gone = True\n")
    # The editor has old.py open too, unchanged (ACP has no delete: it goes on disk).
    editor = Buffers(
        {str(work / "app.py"): "x = 1\ny = 2\n", str(work / "old.py"): "gone = True\n"}
    )
    patch = (
        "*** Begin Patch\n*** Update File: app.py\n@@\n x = 1\n-y = 2\n+y = 3\n"
        "*** Delete File: old.py\n*** End Patch"
    )
    fake_openai.enqueue(Reply().tool_call("apply_patch", {"input": patch}), Reply().text("done"))
    schema = SchemaCheck()
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR, schema=schema) as (
        conn,
        _rec,
    ):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
    schema.check()
    assert editor.buffers[str(work / "app.py")] == "x = 1\ny = 3\n"
    assert not (work / "old.py").exists()

    client = await daemon.client()
    try:
        undone = await client.request("conversation/undo", {"conversationId": sid, "force": True})
    finally:
        await client.close()
    assert {"app.py", "old.py"} <= set(undone["restored"])
    assert (work / "old.py").read_text() == "gone = True\n"
    assert (work / "app.py").read_text() == "x = 1\ny = 2\n"


class Failing(Buffers):
    """An editor whose reads fail with a long reason (a stack, a long path...)."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kw: Any,
    ) -> ReadTextFileResponse:
        raise RequestError(-32603, "the buffer is locked: " + "x" * 5000)


async def test_an_editor_failing_with_a_long_reason_fails_the_call_at_once(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    (work / "notes.txt").write_text("saved text\n")
    fake_openai.enqueue(Reply().tool_call("read_file", {"path": "notes.txt"}), Reply().text("done"))
    schema = SchemaCheck()
    editor = Failing({})
    async with acp_agent(daemon, tmp_path, rec=editor, capabilities=EDITOR, schema=schema) as (
        conn,
        _rec,
    ):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
    schema.check()
    # The editor's reason reached the model, not a time-out after waiting for nothing.
    sent = fake_openai.last_request.body.decode()
    assert "the buffer is locked" in sent and "did not answer" not in sent
