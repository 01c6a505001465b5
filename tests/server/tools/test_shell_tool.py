"""The shell tool against real processes: streaming, exit codes, timeouts, interrupts, caps.

Every test runs twice: under bubblewrap (what mode "off" uses where it is installed) and
without it (a machine without bubblewrap), since both must keep these promises.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.sandbox import BWRAP_ENV
from openvaala_server.tools.shell import ShellTool
from tests.server.tools.processes import processes_with, survivors, wait_for_processes
from tests.support.json import j


@pytest.fixture(autouse=True, params=["bwrap", "no bwrap"])
def bwrap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "no bwrap":
        monkeypatch.setenv(BWRAP_ENV, "")
    yield str(request.param)


class Recorder:
    """Collects streamed chunks with the time each arrived; `ready` is set once "ready" is seen."""

    def __init__(self) -> None:
        self.chunks: list[tuple[float, str]] = []
        self.ready = asyncio.Event()

    def __call__(self, chunk: str) -> None:
        self.chunks.append((time.monotonic(), chunk))
        if "ready" in self.text:
            self.ready.set()

    @property
    def text(self) -> str:
        return "".join(chunk for _, chunk in self.chunks)


def make_ctx(
    cwd: Path, recorder: Recorder | None = None, output_limit: int = 20_000
) -> ToolContext:
    return ToolContext(cwd=cwd, emit_output=recorder or Recorder(), output_limit=output_limit)


async def run(cwd: Path, arguments: dict[str, Any], **kwargs: Any) -> ToolResult:
    return await ShellTool().run(arguments, make_ctx(cwd, **kwargs))


# Far below the marked sleeps' 100 s (what waiting for them would take), far above what a loaded
# machine needs to kill and reap a process group (2 s and 3 s were close to it).
PROMPTLY_S = 30


def marker() -> str:
    """A sleep length no other process uses, to find this test's processes in /proc."""
    return f"100.{secrets.randbelow(10**6):06d}"


async def test_runs_in_cwd_and_reports_exit_code(tmp_path: Path) -> None:
    result = await run(tmp_path, {"command": "pwd"})
    assert result.output == f"{tmp_path}\nexit code: 0"
    assert not result.is_error
    assert not result.truncated


async def test_nonzero_exit_is_an_error_and_stderr_is_merged(tmp_path: Path) -> None:
    result = await run(tmp_path, {"command": "echo out; echo err >&2; exit 3"})
    assert result.output == "out\nerr\nexit code: 3"
    assert result.is_error


async def test_stdin_is_empty(tmp_path: Path) -> None:
    # `cat` would hang forever on an inherited terminal or pipe.
    result = await run(tmp_path, {"command": "cat; read line || echo no-input", "timeout_s": 5})
    assert result.output == "no-input\nexit code: 0"


async def test_output_streams_before_the_command_ends(tmp_path: Path) -> None:
    recorder = Recorder()
    result = await run(
        tmp_path, {"command": "echo first; sleep 0.5; echo second"}, recorder=recorder
    )
    finished = time.monotonic()
    assert result.output == "first\nsecond\nexit code: 0"
    assert recorder.text == "first\nsecond\n"
    first_time, first_chunk = recorder.chunks[0]
    assert first_chunk == "first\n"
    assert finished - first_time >= 0.4


async def test_split_multibyte_characters_decode_whole(tmp_path: Path) -> None:
    recorder = Recorder()
    # "é" is C3 A9; the sleep puts its two bytes in separate reads. FF is never valid UTF-8.
    command = r"printf '\303'; sleep 0.2; printf '\251 \377\n'"
    result = await run(tmp_path, {"command": command}, recorder=recorder)
    assert result.output == "é \ufffd\nexit code: 0"
    assert recorder.text == "é \ufffd\n"


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    mark = marker()
    # The shell ignores SIGTERM, so SIGKILL after the grace period is needed too.
    command = f"trap '' TERM; sleep {mark} & wait"
    started = time.monotonic()
    result = await run(tmp_path, {"command": command, "timeout_s": 0.5})
    assert time.monotonic() - started < PROMPTLY_S
    assert result.is_error
    assert "timed out after 0.5s" in result.output
    assert re.search(r"exit code: -\d+ \(killed by SIG(KILL|TERM)\)$", result.output)
    assert survivors(mark) == []


async def test_timeout_keeps_the_output_so_far(tmp_path: Path) -> None:
    result = await run(tmp_path, {"command": "echo started; sleep 60", "timeout_s": 0.5})
    assert result.output.startswith("started\n[timed out after 0.5s")


async def test_cancellation_kills_grandchildren_and_reraises(tmp_path: Path) -> None:
    mark = marker()
    command = (
        # The shell, its child, a nested shell and that one's child (a grandchild); the nested
        # shell says "ready" once both sleeps started.
        f"sleep {mark} & sh -c 'sleep {mark} & echo ready; wait' & wait"
    )
    recorder = Recorder()
    task = asyncio.create_task(run(tmp_path, {"command": command}, recorder=recorder))
    await asyncio.wait_for(recorder.ready.wait(), PROMPTLY_S)
    # "ready" can come before the second sleep has replaced its forked shell: wait for it.
    assert len(wait_for_processes(mark, "sleep", 2)) == 2
    assert len(processes_with(mark, "sh")) == 1
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < PROMPTLY_S
    # The shell was killed and reaped before the CancelledError came out; the rest of its group
    # got SIGKILL at the same moment.
    assert processes_with(mark, "bash") == []
    assert survivors(mark) == []


async def test_background_jobs_do_not_outlive_the_command(tmp_path: Path) -> None:
    mark = marker()
    started = time.monotonic()
    # One job keeps the output pipe open, one doesn't; neither may keep the call (or itself) alive.
    command = f"sleep {mark} & sleep {mark} >/dev/null &"
    result = await run(tmp_path, {"command": command})
    assert time.monotonic() - started < PROMPTLY_S
    assert result.output == "exit code: 0"
    assert survivors(mark) == []


async def test_long_output_is_truncated_with_a_notice(tmp_path: Path) -> None:
    recorder = Recorder()
    result = await run(tmp_path, {"command": "seq 1 300"}, recorder=recorder, output_limit=300)
    full = "".join(f"{n}\n" for n in range(1, 301))
    assert result.truncated
    assert not result.is_error
    body, exit_line = result.output.rsplit("\n", 1)
    assert exit_line == "exit code: 0"
    cut = len(full) - 300
    assert f"[… {cut} characters of output truncated …]" in body
    assert body.startswith("1\n2\n3\n")
    assert body.endswith("299\n300")
    assert recorder.text == full  # under the streaming cap, everything streams


async def test_runaway_output_is_capped_in_stream_and_memory(tmp_path: Path) -> None:
    recorder = Recorder()
    result = await run(tmp_path, {"command": "seq 1 200000"}, recorder=recorder, output_limit=1000)
    full_length = sum(len(f"{n}\n") for n in range(1, 200_001))
    assert result.truncated
    assert f"[… {full_length - 1000} characters of output truncated …]" in result.output
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.endswith("199999\n200000\nexit code: 0")
    streamed = recorder.text
    assert "no longer streamed" in streamed
    assert len(streamed) < 10 * 1000 + 200


async def test_emit_errors_propagate_and_kill_the_command(tmp_path: Path) -> None:
    mark = marker()

    def failing_emit(chunk: str) -> None:
        raise RuntimeError("client gone")

    command = f"sleep {mark} & echo hi; wait"
    ctx = ToolContext(cwd=tmp_path, emit_output=failing_emit)
    with pytest.raises(RuntimeError, match="client gone"):
        await asyncio.wait_for(ShellTool().run({"command": command}, ctx), 10)
    assert survivors(mark) == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'command'"),
        ({"command": 5}, "'command' must be a string, got integer"),
        ({"command": "  "}, "'command' is empty"),
        ({"command": "true", "timeout_s": "5"}, "'timeout_s' must be a number, got string"),
        ({"command": "true", "timeout_s": True}, "'timeout_s' must be a number, got boolean"),
        ({"command": "true", "timeout_s": 0}, "more than 0 and at most 3600"),
        ({"command": "true", "timeout_s": 4000}, "more than 0 and at most 3600"),
    ],
)
async def test_bad_arguments_are_error_results(
    tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    result = await run(tmp_path, arguments)
    assert result.is_error
    assert message in result.output


async def test_missing_cwd_is_an_error_result(tmp_path: Path) -> None:
    result = await run(tmp_path / "gone", {"command": "true"})
    assert result.is_error
    assert "does not exist" in result.output


def test_spec_schema() -> None:
    spec = ShellTool().spec
    assert spec.name == "shell"
    assert spec.parameters["required"] == ["command"]
    assert set(j(spec.parameters)["properties"]) == {
        "command",
        "timeout_s",
        "outside_sandbox",
        "justification",
    }
