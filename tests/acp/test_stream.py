"""The pure translation of daemon events into ACP session updates (no daemon, no subprocess)."""

from __future__ import annotations

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    FileEditToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from openvaala_acp import content, tools
from openvaala_acp.stream import SessionStream

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
-old line
+new line
*** Add File: docs/new.md
+hello
*** End Patch"""


def _stream() -> SessionStream:
    return SessionStream(conversation_id="c", root_session_id="root", cwd="/work")


def test_edits_show_kind_locations_and_diffs() -> None:
    s = _stream()
    [start] = s.on_note(
        "item/started",
        {
            "sessionId": "root",
            "item": {
                "itemId": "i1",
                "type": "tool_call",
                "callId": "call-1",
                "name": "apply_patch",
                "arguments": {"input": PATCH},
            },
        },
    )
    assert isinstance(start, ToolCallStart)
    assert (start.kind, start.title) == ("edit", "Patch src/app.py, docs/new.md")
    assert [loc.path for loc in start.locations or []] == ["/work/src/app.py", "/work/docs/new.md"]
    diffs = [c for c in start.content or [] if isinstance(c, FileEditToolCallContent)]
    assert [(d.path, d.old_text, d.new_text) for d in diffs] == [
        ("/work/src/app.py", "old line", "new line"),
        ("/work/docs/new.md", None, "hello\n"),
    ]
    edit = tools.diffs("edit_file", {"path": "a.py", "old_text": "x", "new_text": "y"}, "/w")
    assert [(d.path, d.old_text, d.new_text) for d in edit] == [("/w/a.py", "x", "y")]
    assert tools.locations("read_file", {"path": "a.py", "offset": 10}, "/w")[0].line == 10


def test_tool_output_streams_then_completes() -> None:
    s = _stream()
    s.on_note(
        "item/started",
        {
            "sessionId": "root",
            "item": {
                "itemId": "i1",
                "type": "tool_call",
                "callId": "k",
                "name": "shell",
                "arguments": {"command": "ls"},
            },
        },
    )
    s.on_note(
        "item/started",
        {"sessionId": "root", "item": {"itemId": "r1", "type": "tool_result", "callId": "k"}},
    )
    s.on_note(
        "item/delta", {"sessionId": "root", "itemId": "r1", "field": "output", "delta": "a\n"}
    )
    [update] = s.on_note(
        "item/delta", {"sessionId": "root", "itemId": "r1", "field": "output", "delta": "b\n"}
    )
    assert isinstance(update, ToolCallProgress) and update.tool_call_id == "k"
    assert update.content and update.content[0].content.text == "```\na\nb\n```"
    [done] = s.on_note(
        "item/completed",
        {
            "sessionId": "root",
            "item": {
                "itemId": "r1",
                "type": "tool_result",
                "callId": "k",
                "name": "shell",
                "output": "a\nb\nexit code: 0",
                "isError": False,
                "status": "completed",
            },
        },
    )
    assert isinstance(done, ToolCallProgress) and done.status == "completed"
    assert s.pending_call("shell", {"command": "ls"}) is None


def test_own_messages_are_not_echoed_and_subagents_stay_out() -> None:
    s = _stream()
    s.own_texts.append("mine")
    user = {"itemId": "u", "type": "user_message", "text": "mine", "origin": "user"}
    assert s.on_note("item/completed", {"sessionId": "root", "item": user}) == []
    other = {**user, "text": "theirs"}
    [echo] = s.on_note("item/completed", {"sessionId": "root", "item": other})
    assert isinstance(echo, UserMessageChunk) and echo.content.text == "theirs"
    child = {"itemId": "m", "type": "agent_message", "text": "hidden"}
    assert s.on_note("item/completed", {"sessionId": "child", "item": child}) == []
    [shown] = s.on_note("item/completed", {"sessionId": "root", "item": child})
    assert isinstance(shown, AgentMessageChunk) and shown.content.text == "hidden"


def test_prompt_blocks_become_one_message() -> None:
    from acp import embedded_text_resource, image_block, resource_block, text_block

    message = content.from_blocks(
        [
            text_block("fix "),
            resource_block(embedded_text_resource("file:///w/a.py", "x = 1")),
            image_block("AAAA", "image/png", uri="file:///w/shot.png"),
        ]
    )
    assert message.text == "fix \n<context file='/w/a.py'>\nx = 1\n</context>"
    assert message.images == [{"data": "AAAA", "mediaType": "image/png", "name": "shot.png"}]


def test_retries_and_compactions_show_as_thoughts_and_long_output_is_cut_while_running() -> None:

    from openvaala_acp.stream import STREAMED_OUTPUT_LIMIT

    s = _stream()
    [retry] = s.on_note(
        "retry/scheduled",
        {
            "sessionId": "root",
            "attempt": 1,
            "maxAttempts": 3,
            "delaySeconds": 0.5,
            "error": {"kind": "provider_unavailable", "message": "overloaded"},
        },
    )
    assert isinstance(retry, AgentThoughtChunk)
    assert "overloaded" in retry.content.text and "attempt 1 of 3" in retry.content.text
    [compacting] = s.on_note("compaction/started", {"sessionId": "root", "reason": "auto"})
    assert isinstance(compacting, AgentThoughtChunk)
    assert "Compacting" in compacting.content.text

    s.on_note(
        "item/started",
        {"sessionId": "root", "item": {"itemId": "r", "type": "tool_result", "callId": "k"}},
    )
    line = "x" * 99 + "\n"
    [update] = s.on_note(
        "item/delta",
        {"sessionId": "root", "itemId": "r", "field": "output", "delta": line * 1000},
    )
    assert isinstance(update, ToolCallProgress) and update.content
    shown = update.content[0].content.text
    assert shown.startswith("…\n") and len(shown) <= STREAMED_OUTPUT_LIMIT + 10
    assert shown.endswith(line)


def test_a_call_left_without_result_fails_when_its_turn_ends() -> None:
    s = _stream()
    call = {"itemId": "i", "type": "tool_call", "callId": "k", "name": "shell", "arguments": {}}
    s.on_note("item/started", {"sessionId": "root", "item": call})
    [failed] = s.on_note(
        "turn/ended", {"sessionId": "root", "turnId": "t", "status": "interrupted"}
    )
    assert isinstance(failed, ToolCallProgress)
    assert (failed.tool_call_id, failed.status) == ("k", "failed")
    assert (
        s.on_note("turn/ended", {"sessionId": "root", "turnId": "t2", "status": "completed"}) == []
    )
