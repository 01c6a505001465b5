"""The `shell` tool: run a command with bash in the conversation's directory, streaming its output.

The command runs under the call's confinement (tools/sandbox.py): inside bubblewrap, in a PID
namespace of its own, with the daemon's private paths hidden and its secrets out of the
environment. It also runs in its own session (so its own process group): a timeout, an interrupt
or the command's end kills the whole group, and with it the namespace, so nothing the agent starts
outlives the call. Output (stdout and stderr merged) is decoded incrementally and streamed
through `ctx.emit_output` as it arrives; the result holds the head and tail of it plus the exit
code. Memory stays bounded however much a command prints.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import math
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import anyio

from openvaala_server.domain.permissions import Access, Confinement
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import limits, sandbox
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output, truncation_notice

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 3600.0
# After SIGTERM on timeout, how long the group gets to exit before SIGKILL.
TERM_GRACE_S = 1.0
# After the shell exits, how long background jobs still holding the output pipe get to finish
# writing before they are killed (a normal command closes the pipe as it exits, so no wait).
DRAIN_GRACE_S = 0.5
# Bound on waiting for a SIGKILLed process to be reaped (it can only linger in uninterruptible I/O).
REAP_TIMEOUT_S = 5.0
# Streaming stops after this many times the result limit, so a runaway command can't flood clients.
STREAM_LIMIT_FACTOR = 10
# Reading from the pipe pauses while this many bytes wait to be decoded.
_PAUSE_READING_AT = 1 << 20
_STREAM_CUT_NOTICE = "[output too long: no longer streamed; the result keeps its head and tail]\n"

_DESCRIPTION = (
    "Run a shell command with bash -c in the working directory and return its combined "
    "stdout and stderr followed by its exit code. Stdin is empty (/dev/null), so interactive "
    "prompts fail instead of waiting. The call ends when the command exits; background jobs "
    "it started are killed then, so don't leave servers running across calls. Long outputs "
    "are cut in the middle. "
)
_BASE_PROPERTIES: JsonObject = {
    "command": {"type": "string", "description": "The command line to run."},
    "timeout_s": {
        "type": "number",
        "description": (
            f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_S:g}, "
            f"max {MAX_TIMEOUT_S:g})."
        ),
        "exclusiveMinimum": 0,
        "maximum": MAX_TIMEOUT_S,
    },
}
_SPEC = ToolSpec(
    name="shell",
    description=(
        _DESCRIPTION + "Commands usually run in a sandbox (files outside the working "
        "directory read-only, a private /tmp emptied after each call, often no network); if "
        "one fails because of the sandbox, call again with outside_sandbox=true and a "
        "justification: the user may allow it."
    ),
    parameters={
        "type": "object",
        "properties": {
            **_BASE_PROPERTIES,
            "outside_sandbox": {
                "type": "boolean",
                "description": (
                    "Ask to run this command outside the sandbox (default false). Only when it "
                    "needs what the sandbox blocks: writing outside the working directory, the "
                    "network. Give a justification."
                ),
            },
            "justification": {
                "type": "string",
                "description": "Why the command must run outside the sandbox, shown to the user.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
)
# What the model reads when no call may leave the sandbox (plan mode, an approval setting of
# "never"): the way out is not offered at all (docs/security.md, "Permission modes").
_CONFINED_SPEC = ToolSpec(
    name="shell",
    description=(
        _DESCRIPTION + "Commands run in a sandbox (files outside the working directory "
        "read-only, a private /tmp emptied after each call, often no network), and in this "
        "conversation none may run outside it."
    ),
    parameters={
        "type": "object",
        "properties": dict(_BASE_PROPERTIES),
        "required": ["command"],
        "additionalProperties": False,
    },
)


@dataclass(frozen=True)
class _Call:
    command: str
    timeout_s: float
    outside_sandbox: bool
    justification: str | None


class ShellTool:
    def __init__(self, *, offers_escape: bool = True) -> None:
        # False: the spec does not offer `outside_sandbox` (`confined`).
        self.offers_escape = offers_escape

    @property
    def spec(self) -> ToolSpec:
        return _SPEC if self.offers_escape else _CONFINED_SPEC

    def confined(self) -> Self:
        """This tool, its spec without the way out of the sandbox (`_CONFINED_SPEC`)."""
        return type(self)(offers_escape=False)

    def access(self, arguments: dict[str, Any], cwd: Path) -> Access:
        try:
            call = _parse_arguments(arguments)
        except ValueError:
            # The call will fail on its arguments without running anything.
            return Access(summary=str(arguments.get("command") or "shell"))
        # "" when the model gave no reason: the prompt then says so.
        reason = (call.justification or "") if call.outside_sandbox else None
        return Access(summary=call.command, command=call.command, outside_sandbox=reason)

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prepared = await prepare(arguments, ctx)
        if isinstance(prepared, ToolResult):
            return prepared
        bounds = limits.CallLimits(ctx.confinement.limits)
        try:
            return await run_here(prepared, bounds, ctx)
        finally:
            bounds.close()


@dataclass(frozen=True)
class Prepared:
    """A call ready to run: its arguments, and its command line with the sandbox around it."""

    call: _Call
    argv: list[str]
    env: dict[str, str]


async def prepare(arguments: dict[str, Any], ctx: ToolContext) -> Prepared | ToolResult:
    """The command line a call runs (bubblewrap included), or the error result it ends with."""
    try:
        call = _parse_arguments(arguments)
    except ValueError as exc:
        return ToolResult(str(exc), is_error=True)
    if not ctx.cwd.is_dir():
        return ToolResult(f"Working directory does not exist: {ctx.cwd}", is_error=True)
    confinement = ctx.confinement
    if problem := sandbox.working_dir_problem(ctx.cwd, confinement):
        return ToolResult(problem, is_error=True)
    try:
        bwrap = await sandbox.usable_bwrap(confinement.mode)
    except sandbox.SandboxUnavailable as exc:
        return ToolResult(str(exc), is_error=True)
    argv = _shell_argv(call.command)
    if bwrap is not None:
        argv = sandbox.bwrap_argv(bwrap, argv, ctx.cwd, confinement)
    env = sandbox.sandboxed_env(sandbox.scrubbed_env(confinement.hidden_env), confinement)
    return Prepared(call, argv, env)


async def run_here(prepared: Prepared, bounds: limits.CallLimits, ctx: ToolContext) -> ToolResult:
    """Run a prepared call as the daemon's own child process."""
    call = prepared.call
    output = _Output(ctx)
    try:
        run = await _start(bounds.wrap(prepared.argv), ctx.cwd, prepared.env)
    except OSError as exc:
        return ToolResult(f"Could not start the shell: {exc}", is_error=True)
    timed_out = await run.finish(output, call.timeout_s)
    result = _result(output, run.returncode, timed_out, call.timeout_s, ctx.output_limit)
    return noted(result, prepared, bounds, ctx)


def noted(
    result: ToolResult, prepared: Prepared, bounds: limits.CallLimits, ctx: ToolContext
) -> ToolResult:
    """A finished command's result with the limit it hit and, on failure, the sandbox's note
    (wherever it ran: here or in an editor's terminal)."""
    return _with_sandbox_note(_with_limits_hit(result, bounds), prepared.call, ctx.confinement)


def _parse_arguments(arguments: dict[str, Any]) -> _Call:
    command = arguments.get("command")
    if command is None:
        raise ValueError("Missing required argument 'command' (string).")
    if not isinstance(command, str):
        raise ValueError(f"Argument 'command' must be a string, got {_type_name(command)}.")
    if not command.strip():
        raise ValueError("Argument 'command' is empty.")
    outside = arguments.get("outside_sandbox", False)
    if not isinstance(outside, bool):
        raise ValueError(
            f"Argument 'outside_sandbox' must be a boolean, got {_type_name(outside)}."
        )
    justification = arguments.get("justification")
    if justification is not None and not isinstance(justification, str):
        raise ValueError(
            f"Argument 'justification' must be a string, got {_type_name(justification)}."
        )
    return _Call(command, _timeout_arg(arguments), outside, justification)


def _timeout_arg(arguments: dict[str, Any]) -> float:
    timeout = arguments.get("timeout_s")
    if timeout is None:
        return DEFAULT_TIMEOUT_S
    # bool is an int subclass, but `true` as a timeout is a mistake worth reporting.
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ValueError(f"Argument 'timeout_s' must be a number, got {_type_name(timeout)}.")
    if not 0 < timeout <= MAX_TIMEOUT_S:
        raise ValueError(
            f"Argument 'timeout_s' must be more than 0 and at most {MAX_TIMEOUT_S:g}, "
            f"got {timeout}."
        )
    return float(timeout)


def _type_name(value: object) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _shell_argv(command: str) -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c", command] if bash else ["/bin/sh", "-c", command]


async def _start(argv: list[str], cwd: Path, env: dict[str, str]) -> _Run:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        _PipeProtocol,
        *argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # Its own session and process group, so the whole tree can be signalled at once.
        start_new_session=True,
    )
    return _Run(transport, protocol)


class _PipeProtocol(asyncio.SubprocessProtocol):
    """Queues the output bytes for the reading task; notes EOF and the process's exit.

    An asyncio protocol, not `anyio.open_process`: only the transport can pause reading the pipe
    (flow control) — one of the exceptions named in docs/design.md, "Structured concurrency"."""

    def __init__(self) -> None:
        # Unbounded: `_queued` bounds it by pausing the pipe.
        self._chunks_in, self._chunks = anyio.create_memory_object_stream[bytes | None](math.inf)
        self.exited = anyio.Event()
        self._transport: asyncio.SubprocessTransport | None = None
        self._queued = 0
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._transport = transport

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self._put(bytes(data))
        self._queued += len(data)
        # Flow control: a consumer slower than the command must not let the queue grow unbounded.
        if self._queued > _PAUSE_READING_AT and not self._paused:
            self._set_reading(paused=True)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._put(None)

    def process_exited(self) -> None:
        self.exited.set()

    def _put(self, data: bytes | None) -> None:
        # The pipe may report after the call closed the queue (the transport closes last).
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._chunks_in.send_nowait(data)

    def close(self) -> None:
        self._chunks_in.close()
        self._chunks.close()

    async def next_chunk(self) -> bytes | None:
        """The next bytes of output, or None at EOF (every holder of the pipe closed it)."""
        data = await self._chunks.receive()
        if data is not None:
            self._queued -= len(data)
            if self._paused and self._queued <= _PAUSE_READING_AT // 2:
                self._set_reading(paused=False)
        return data

    def _set_reading(self, *, paused: bool) -> None:
        pipe = self._transport.get_pipe_transport(1) if self._transport else None
        if isinstance(pipe, asyncio.ReadTransport):
            if paused:
                pipe.pause_reading()
            else:
                pipe.resume_reading()
            self._paused = paused


class _Run:
    """One running command: its transport, its process group and the task reading its output."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _PipeProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        # With start_new_session the shell leads its own group, so the group id is its pid.
        self._pgid = transport.get_pid()

    @property
    def returncode(self) -> int | None:
        return self._transport.get_returncode()

    async def finish(self, output: _Output, timeout_s: float) -> bool:
        """Wait for the command (killing it on timeout); return whether it timed out.

        Whatever way this ends — normally, by timeout, by cancellation or by an error in
        `emit_output` — the whole process group is dead and reaped and the pipe closed after it.
        The reader is a task of this call's own task group, so it cannot outlive the call.
        """
        read_done = anyio.Event()
        failure: list[Exception] = []

        async def read() -> None:
            try:
                await self._read(output)
            except Exception as exc:
                # An error in emit_output ends the call now rather than when the command exits.
                failure.append(exc)
                group.cancel_scope.cancel()
            finally:
                read_done.set()

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(read, name="shell-output")
                timed_out = await self._wait_exit(timeout_s)
                await self._drain(read_done)
                group.cancel_scope.cancel()  # a reader still blocked on a pipe left open
            if failure:
                raise failure[0]
            return timed_out
        finally:
            with anyio.CancelScope(shield=True):
                self._kill_group(signal.SIGKILL)
                await self._reap()
                self._transport.close()
                self._protocol.close()

    async def _read(self, output: _Output) -> None:
        while (data := await self._protocol.next_chunk()) is not None:
            output.feed(data)
        output.feed(b"", final=True)

    async def _wait_exit(self, timeout_s: float) -> bool:
        # Reading may end first (the command closed its output early): the exit is still awaited.
        with anyio.move_on_after(timeout_s):
            await self._protocol.exited.wait()
            return False
        await self._terminate()
        return True

    async def _terminate(self) -> None:
        # SIGTERM first so well-behaved programs can clean up (temp files, locks), then SIGKILL.
        self._kill_group(signal.SIGTERM)
        with anyio.move_on_after(TERM_GRACE_S):
            await self._protocol.exited.wait()
        self._kill_group(signal.SIGKILL)

    async def _drain(self, read_done: anyio.Event) -> None:
        # The shell has exited; background jobs it left may still hold the pipe open. Let them
        # finish writing briefly, then kill the group so they can't outlive the call.
        with anyio.move_on_after(DRAIN_GRACE_S):
            await read_done.wait()
        if not read_done.is_set():
            self._kill_group(signal.SIGKILL)
            # A process that left the group (setsid) may hold the pipe forever: stop waiting then.
            with anyio.move_on_after(DRAIN_GRACE_S):
                await read_done.wait()

    def _kill_group(self, sig: signal.Signals) -> None:
        # ProcessLookupError: the group is already empty. PermissionError: on some systems
        # (macOS) killpg fails that way when only zombies remain.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._pgid, sig)

    async def _reap(self) -> None:
        with anyio.move_on_after(REAP_TIMEOUT_S):
            await self._protocol.exited.wait()


def output_stream(ctx: ToolContext) -> Callable[[str], None]:
    """Where the output of a command run elsewhere (an editor's terminal) goes as it comes:
    streamed to the clients within the same budget as a command run here."""
    out = _Output(ctx)
    return lambda text: out.feed(text.encode())


class _Output:
    """Decodes, streams and keeps (head and tail only) the output of one command."""

    def __init__(self, ctx: ToolContext) -> None:
        self._emit = ctx.emit_output
        self._keep = max(ctx.output_limit, 0)
        self._stream_budget = max(ctx.output_limit, 1) * STREAM_LIMIT_FACTOR
        self._streamed = 0
        self._streaming = True
        # Incremental, so a multibyte character split across two reads decodes whole.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = ""
        self._tail = ""
        self.total = 0

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if text:
            self._keep_text(text)
            self._stream(text)

    def _keep_text(self, text: str) -> None:
        self.total += len(text)
        if len(self._head) < self._keep:
            room = self._keep - len(self._head)
            self._head += text[:room]
            text = text[room:]
        if text:
            self._tail = (self._tail + text)[-self._keep :] if self._keep else ""

    def _stream(self, text: str) -> None:
        if not self._streaming:
            return
        room = self._stream_budget - self._streamed
        if len(text) <= room:
            self._emit(text)
            self._streamed += len(text)
            return
        if room:
            self._emit(text[:room])
        self._emit(("\n" if not text[:room].endswith("\n") else "") + _STREAM_CUT_NOTICE)
        self._streaming = False

    def result_text(self, limit: int) -> tuple[str, bool]:
        dropped = self.total - len(self._head) - len(self._tail)
        if dropped == 0:
            return truncate_output(self._head + self._tail, limit)
        # The middle was never stored; head and tail each hold `limit` characters, enough for the
        # same head/tail split truncate_output makes.
        head = limit * 2 // 3
        tail = limit - head
        cut = self.total - head - tail
        kept_tail = self._tail[len(self._tail) - tail :]
        return self._head[:head] + truncation_notice(cut) + kept_tail, True


def _result(
    output: _Output, returncode: int | None, timed_out: bool, timeout_s: float, limit: int
) -> ToolResult:
    text, truncated = output.result_text(limit)
    return ended(text, truncated, returncode, timed_out, timeout_s)


def ended(
    text: str, truncated: bool, returncode: int | None, timed_out: bool, timeout_s: float
) -> ToolResult:
    """A command's result: its output, a line if it timed out, and its exit code."""
    if text and not text.endswith("\n"):
        text += "\n"
    if timed_out:
        text += f"[timed out after {timeout_s:g}s; the command and its children were killed]\n"
    text += _exit_line(returncode)
    return ToolResult(text, is_error=timed_out or returncode != 0, truncated=truncated)


def _exit_line(returncode: int | None) -> str:
    if returncode is None:
        return "exit code: unknown (the process could not be reaped)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"exit code: {returncode} (killed by {name})"
    return f"exit code: {returncode}"


def _with_limits_hit(result: ToolResult, bounds: limits.CallLimits) -> ToolResult:
    """Name the limit a failed command ran into, and the setting that raises it."""
    if not result.is_error and not bounds.counted():
        return result
    hits = bounds.hit(result.output)
    if not hits:
        return result
    text = result.output + "\n" + "\n".join(hits)
    return ToolResult(text, is_error=True, truncated=result.truncated)


def _with_sandbox_note(result: ToolResult, call: _Call, confinement: Confinement) -> ToolResult:
    """Tell the model when a failure may be the sandbox's doing, and how to ask past it."""
    if confinement.mode == "off" or not result.is_error:
        return result
    limits = {
        "workspace": (
            "files outside the working directory and /tmp are read-only, and so are .git, "
            ".hg, .svn and .jj inside it"
        ),
        "read-only": "every file except /tmp is read-only",
    }[confinement.mode]
    if not confinement.network:
        limits += "; there is no network"
    note = f"\n[This command ran in the sandbox ({limits}). "
    if call.outside_sandbox:
        note += "Running it outside the sandbox was not granted.]"
    elif confinement.no_way_out is not None:  # plan mode would refuse the request
        note += f"{confinement.no_way_out}.]"
    else:
        note += (
            "If it failed because of the sandbox, you may call shell again with "
            "outside_sandbox=true and a justification; the user decides.]"
        )
    return ToolResult(result.output + note, is_error=True, truncated=result.truncated)
