"""A terminal is shown only in a tool call the editor knows (openvaala_acp/editor_files.py): a
subagent's shell call runs in the editor's terminal too, but its call was never shown to the
editor (ACP shows the root session), so no `tool_call_update` names it — an editor shows an
update for an unknown call as a failed "tool call not found"."""

from __future__ import annotations

from typing import Any, cast

from acp.interfaces import Client
from acp.schema import (
    CreateTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from openvaala_acp.editor_files import EditorFiles
from openvaala_acp.link import DaemonLink
from openvaala_acp.outbox import Outbox
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor


class Shown:
    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []

    def put(self, session_id: str, update: Any) -> None:
        self.updates.append((session_id, update))


class Editor:
    async def create_terminal(self, **kw: Any) -> CreateTerminalResponse:
        return CreateTerminalResponse(terminal_id="t1")

    async def wait_for_terminal_exit(self, **kw: Any) -> WaitForTerminalExitResponse:
        return WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(self, **kw: Any) -> TerminalOutputResponse:
        status = TerminalExitStatus(exit_code=0)
        return TerminalOutputResponse(output="ok\n", truncated=False, exit_status=status)

    async def release_terminal(self, **kw: Any) -> ReleaseTerminalResponse:
        return ReleaseTerminalResponse()


def _run(call_id: str) -> JsonObject:
    return {"requestId": "r1", "conversationId": "s", "op": "run", "argv": ["true"], "cwd": "/",
            "env": {}, "timeoutS": 10, "callId": call_id}  # fmt: skip


async def test_a_terminal_is_put_only_in_a_call_the_editor_was_shown() -> None:
    outbox = Shown()
    files = EditorFiles(
        cast(DaemonLink, None),
        cast(Supervisor, None),
        cast(Outbox, outbox),
        shown=lambda session, call: call == "root-call",
    )
    editor = cast(Client, Editor())
    child = await files._run(editor, _run("child-call"))  # a subagent's call
    assert child["output"] == "ok\n" and child["exitCode"] == 0
    assert outbox.updates == []
    await files._run(editor, _run("root-call"))
    [(session, update)] = outbox.updates
    assert session == "s" and update.tool_call_id == "root-call"
