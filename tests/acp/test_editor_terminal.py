"""Shell calls in the editor's terminal (docs/editors.md, ACP; docs/design.md, "Commands in the
editor's terminal"): with `terminal` offered, a shell call runs through `terminal/create` …
`terminal/output` … `terminal/release`, the command the editor runs being the daemon's sandboxed
command line (bubblewrap), shown in the tool call. The official SDK's client runs it as a real
process; `openvaala acp`, a real daemon, the model faked at the wire; every message checked
against the ACP schema."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    WaitForTerminalExitResponse,
)

from tests.acp.acp_schema import SchemaCheck
from tests.acp.harness import Recorder, acp_agent, fake_config
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon


class Terminals(Recorder):
    """An editor's terminals: each command a real process, its output kept."""

    def __init__(self, slow_create: bool = False) -> None:
        super().__init__()
        # A slow editor names a terminal only once the test lets it (after the interrupt).
        self.let_create = asyncio.Event()
        if not slow_create:
            self.let_create.set()
        self.commands: list[list[str]] = []
        self.released: list[str] = []
        self.killed: list[str] = []
        self._runs: dict[str, tuple[asyncio.subprocess.Process, asyncio.Task[bytes]]] = {}

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
        assert process.stdout is not None
        self._runs[terminal_id] = (process, asyncio.create_task(process.stdout.read()))
        await self.let_create.wait()
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def spawn(
        self, argv: list[str], env: list[EnvVariable] | None, cwd: str | None
    ) -> tuple[str, asyncio.subprocess.Process]:
        """The command as a real process, and its terminal's id."""
        self.commands.append(argv)
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env={**os.environ, **{v.name: v.value for v in env or []}},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # as a terminal's own session: killed as a whole
        )
        return f"t{len(self.commands)}", process

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        process, output = self._runs[terminal_id]
        await output
        return WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        process, output = self._runs[terminal_id]
        done = process.returncode is not None
        return TerminalOutputResponse(
            output=(await output).decode() if done else "",
            truncated=False,
            exit_status=TerminalExitStatus(exit_code=process.returncode) if done else None,
        )

    def ended(self, terminal_id: str) -> tuple[int | None, bytes | None]:
        """How a terminal's command ended, if it did: its exit status and output."""
        process, output = self._runs[terminal_id]
        return process.returncode, output.result() if output.done() else None

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.killed.append(terminal_id)
        os.killpg(self._runs[terminal_id][0].pid, signal.SIGKILL)
        self.changed.set()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> ReleaseTerminalResponse:
        self.released.append(terminal_id)
        return ReleaseTerminalResponse()


async def test_a_shell_call_runs_sandboxed_in_the_editors_terminal(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = Path(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    outside = Path(os.path.realpath(tmp_path)) / "outside.txt"  # noqa: ASYNC240
    command = f"echo from-the-terminal; echo x > {outside} || echo blocked"
    fake_openai.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("done"))
    editor, schema = Terminals(), SchemaCheck()
    async with acp_agent(
        daemon, tmp_path, rec=editor, capabilities=ClientCapabilities(terminal=True), schema=schema
    ) as (conn, rec):
        sid = (await conn.new_session(cwd=str(work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"

        # The editor ran the sandboxed command line, not a bare shell.
        assert len(editor.commands) == 1
        assert any(Path(arg).name == "bwrap" for arg in editor.commands[0])
        assert command in editor.commands[0]
        assert not outside.exists()  # the sandbox held in the editor's terminal
        # The model got the command's output and exit code.
        sent = fake_openai.last_request.body.decode()
        assert "from-the-terminal" in sent and "blocked" in sent and "exit code: 0" in sent
        # The editor showed its terminal in the call.
        call = rec.tool_calls(sid)[0]
        shown = [
            c.terminal_id
            for u in rec.tool_updates(sid, call.tool_call_id)
            for c in u.content or []
            if isinstance(c, TerminalToolCallContent)
        ]
        assert shown == ["t1"] and editor.released == ["t1"]

    asked = [m for m in schema.methods() if m.startswith("terminal/")]
    # Its output may be read while it runs too (passed on live: test_editor_terminal_live.py).
    assert asked[:2] == ["terminal/create", "terminal/wait_for_exit"]
    assert asked[-2:] == ["terminal/output", "terminal/release"]
    assert set(asked[2:-2]) <= {"terminal/output"}
    schema.check()


async def _interrupt_a_long_call(
    fake_openai: FakeProvider, daemon: Daemon, tmp_path: Path, editor: Terminals
) -> None:
    """A `sleep 600` in the editor's terminal, interrupted by `session/cancel` once the editor
    was asked for it: the turn ends cancelled, and the terminal is killed and released."""
    work = str(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    fake_openai.enqueue(Reply().tool_call("shell", {"command": "sleep 600"}))
    async with acp_agent(
        daemon, tmp_path, rec=editor, capabilities=ClientCapabilities(terminal=True)
    ) as (conn, _rec):
        sid = (await conn.new_session(cwd=work, mcp_servers=[])).session_id
        prompt = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await editor.until(lambda: editor.commands)
        await conn.cancel(session_id=sid)
        # The turn ended, so the daemon's cancel of the command reached the agent before this.
        assert (await asyncio.wait_for(prompt, 30)).stop_reason == "cancelled"
        editor.let_create.set()
        await editor.until(lambda: editor.released)
        assert editor.killed == ["t1"] and editor.released == ["t1"], editor.ended("t1")


async def test_an_interrupted_call_kills_its_terminal(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    await _interrupt_a_long_call(fake_openai, daemon, tmp_path, Terminals())


async def test_a_call_interrupted_while_its_terminal_is_created_kills_it_once_created(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    # The interrupt reaches the agent before the editor has named the terminal: the command
    # must still be stopped, not left running in the editor for its ten minutes.
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    await _interrupt_a_long_call(fake_openai, daemon, tmp_path, Terminals(slow_create=True))


async def test_a_command_failing_in_the_terminal_gets_the_sandbox_note(
    fake_openai: FakeProvider, daemon_factory: Any, tmp_path: Path
) -> None:
    # As when the daemon runs it: the model learns the sandbox may be why, and how to ask past it.
    daemon: Daemon = daemon_factory(fake_config(fake_openai))
    work = str(os.path.realpath(daemon.workdir))  # noqa: ASYNC240 - before the daemon is used
    outside = Path("/usr/openvaala-acp-sandbox-note")  # read-only in the sandbox
    fake_openai.enqueue(
        Reply().tool_call("shell", {"command": f"echo x > {outside}"}), Reply().text("done")
    )
    editor, schema = Terminals(), SchemaCheck()
    async with acp_agent(
        daemon, tmp_path, rec=editor, capabilities=ClientCapabilities(terminal=True), schema=schema
    ) as (conn, _rec):
        sid = (await conn.new_session(cwd=work, mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn"
    schema.check()
    assert len(editor.commands) == 1
    assert not await asyncio.to_thread(outside.exists)
    sent = fake_openai.last_request.body.decode()
    assert "This command ran in the sandbox" in sent
