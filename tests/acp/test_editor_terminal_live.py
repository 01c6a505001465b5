"""A command in the editor's terminal reaches the other clients while it runs (docs/editors.md,
"Terminals"): `openvaala acp` reads the terminal's output as it grows and passes it on
(`files/output`), and the daemon streams it as the tool result's output, as for a command it
runs itself. A second client on the real websocket sees the first line while the command still
waits; the editor keeps showing its terminal in the call meanwhile (no text update replaces
it). The SDK's client runs the command as a real process; the model is faked at the wire."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    WaitForTerminalExitResponse,
)

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import acp_agent, fake_config
from tests.acp.test_editor_terminal import Terminals
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon


class LiveTerminals(Terminals):
    """Terminals whose output can be read while the command runs, as an editor's can."""

    def __init__(self) -> None:
        super().__init__()
        self.printed: dict[str, bytearray] = {}
        self.processes: dict[str, asyncio.subprocess.Process] = {}
        self.readers: dict[str, asyncio.Task[None]] = {}

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> CreateTerminalResponse:
        terminal_id, process = await self.spawn([command, *(args or [])], env, cwd)
        self.processes[terminal_id] = process
        self.printed[terminal_id] = bytearray()
        self.readers[terminal_id] = asyncio.create_task(self._read(process, terminal_id))
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _read(self, process: asyncio.subprocess.Process, terminal_id: str) -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(4096):
            self.printed[terminal_id] += chunk

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        await self.readers[terminal_id]
        return WaitForTerminalExitResponse(exit_code=await self.processes[terminal_id].wait())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        code = self.processes[terminal_id].returncode
        return TerminalOutputResponse(
            output=self.printed[terminal_id].decode(errors="replace"),
            truncated=False,
            exit_status=TerminalExitStatus(exit_code=code) if code is not None else None,
        )


async def test_the_output_reaches_another_client_before_the_command_ends(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    gate = work / "gate"
    os.mkfifo(gate)  # the command waits on it after its first line, until the test writes
    command = "echo first-line; read go < gate; echo last-line"
    fake_openai.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("done"))
    editor, schema = LiveTerminals(), SchemaCheck()
    web = await daemon.client("web")
    try:
        async with acp_agent(
            daemon,
            tmp_path,
            rec=editor,
            capabilities=ClientCapabilities(terminal=True),
            schema=schema,
        ) as (conn, rec):
            sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
            await web.subscribe(sid)
            prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))

            # The other client sees the first line as the tool result's output, live.
            streamed = ""
            while "first-line" not in streamed:
                note = await web.next_notification(30)
                if note["method"] == "item/delta" and note["params"]["field"] == "output":
                    streamed += note["params"]["delta"]
                elif note["method"] == "item/completed":
                    item = note["params"]["item"]
                    assert item["type"] != "tool_result", "a result before any output streamed"
            assert "last-line" not in streamed and not prompt.done()

            await asyncio.to_thread(gate.write_text, "go\n")
            assert (await asyncio.wait_for(prompt, 30)).stop_reason == "end_turn"
            sent = fake_openai.last_request.body.decode()
            assert "first-line" in sent and "last-line" in sent

            # While it ran, the editor's call showed its terminal, never a text copy of the
            # output (ACP replaces a call's content with each update).
            call = rec.tool_calls(sid)[0].tool_call_id
            *running, result = rec.tool_updates(sid, call)
            assert result.status == "completed"
            contents = [c for u in running for c in u.content or []]
            assert contents and all(isinstance(c, TerminalToolCallContent) for c in contents)
    finally:
        await web.close()
    schema.check()
