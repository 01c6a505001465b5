"""The file tools under each sandbox mode: symlinks resolved first, private paths out of reach,
writes where the mode allows them, and FIFOs, sockets and devices refused at once."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.domain.permissions import Access, SandboxMode
from openvaala_server.tools.base import Tool, ToolContext, ToolResult, access_of
from openvaala_server.tools.files import (
    MAX_LINE_CHARS,
    EditFileTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from openvaala_server.tools.registry import BUILTIN_TOOLS
from openvaala_server.tools.shell import ShellTool
from tests.server.tools.sandbox_places import TOKEN, Places

MODES: list[SandboxMode] = ["workspace", "read-only", "off"]
TOOLS: dict[str, Tool] = {
    "read_file": ReadFileTool(),
    "write_file": WriteFileTool(),
    "edit_file": EditFileTool(),
    "list_dir": ListDirTool(),
}


async def call(places: Places, mode: SandboxMode, tool: str, **arguments: Any) -> ToolResult:
    ctx = ToolContext(
        cwd=places.work, emit_output=lambda _: None, confinement=places.confinement(mode)
    )
    # Answers at once, or the test fails rather than hanging on a blocked thread.
    return await asyncio.wait_for(TOOLS[tool].run(arguments, ctx), 10)


@pytest.mark.parametrize("mode", MODES)
async def test_write_outside_the_workspace(places: Places, mode: SandboxMode) -> None:
    target = places.outside / "new.txt"
    result = await call(places, mode, "write_file", path=str(target), content="x")
    if mode == "off":
        assert not result.is_error and target.read_text() == "x"
        return
    assert result.is_error
    assert f"blocked by the sandbox: {mode}" in result.output
    assert not target.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_write_through_a_symlink_pointing_outside(
    places: Places, mode: SandboxMode, tool: str
) -> None:
    arguments = (
        {"content": "changed\n"}
        if tool == "write_file"
        else {"old_text": "original", "new_text": "changed"}
    )
    result = await call(places, mode, tool, path="link.txt", **arguments)
    outside = places.outside / "file.txt"
    if mode == "off":
        assert not result.is_error
        assert outside.read_text() == "changed\n"
        assert (places.work / "link.txt").is_symlink()  # written through, not replaced
        return
    assert result.is_error
    assert f"blocked by the sandbox: {mode}" in result.output
    if mode == "workspace":
        assert f"really {outside}" in result.output
    assert outside.read_text() == "original\n"


@pytest.mark.parametrize("mode", MODES)
async def test_write_inside_the_workspace(places: Places, mode: SandboxMode) -> None:
    result = await call(places, mode, "write_file", path="sub/new.txt", content="x")
    if mode == "read-only":
        assert result.is_error and "blocked by the sandbox: read-only" in result.output
        assert not (places.work / "sub").exists()
    else:
        assert not result.is_error
        assert (places.work / "sub" / "new.txt").read_text() == "x"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "{token}"}),
        ("read_file", {"path": "token-link"}),
        ("read_file", {"path": "{config}"}),
        ("list_dir", {"path": "{data}"}),
        ("write_file", {"path": "{data}/planted", "content": "x"}),
        ("edit_file", {"path": "{token}", "old_text": "token", "new_text": "mine"}),
    ],
)
async def test_the_daemons_private_paths_are_out_of_reach(
    places: Places, mode: SandboxMode, tool: str, arguments: dict[str, str]
) -> None:
    filled = {
        key: value.format(token=places.token, config=places.config, data=places.data)
        for key, value in arguments.items()
    }
    result = await call(places, mode, tool, **filled)
    assert result.is_error
    assert "keeps private" in result.output
    assert TOKEN not in result.output and "token" not in result.output.split("private")[1]
    assert places.token.read_text() == TOKEN
    assert not (places.data / "planted").exists()


@pytest.mark.parametrize("mode", MODES)
async def test_a_fifo_is_refused_at_once(places: Places, mode: SandboxMode) -> None:
    os.mkfifo(places.work / "pipe")
    calls: list[tuple[str, dict[str, str]]] = [("read_file", {})]
    if mode != "read-only":  # where an edit is refused before the file is looked at
        calls.append(("edit_file", {"old_text": "a", "new_text": "b"}))
    for tool, extra in calls:
        result = await call(places, mode, tool, path="pipe", **extra)
        assert result.is_error
        assert "is a FIFO (named pipe), not a regular file" in result.output


async def test_a_fifo_does_not_block_writes_either(places: Places) -> None:
    os.mkfifo(places.work / "pipe")
    result = await call(places, "workspace", "write_file", path="pipe", content="x")
    assert result.is_error and "FIFO" in result.output
    assert (places.work / "pipe").is_fifo()


async def test_sockets_and_devices_are_refused(places: Places) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(places.work / "sock"))
        result = await call(places, "off", "read_file", path="sock")
    assert result.is_error and "is a socket" in result.output
    result = await call(places, "off", "read_file", path="/dev/zero")
    assert result.is_error and "is a character device" in result.output


async def test_many_stuck_reads_leave_other_calls_served(places: Places) -> None:
    # More FIFO reads than the default thread pool has threads; a plain read after them answers.
    for index in range(40):
        os.mkfifo(places.work / f"pipe{index}")
    results = await asyncio.gather(
        *(call(places, "workspace", "read_file", path=f"pipe{i}") for i in range(40))
    )
    assert all(r.is_error for r in results)
    (places.work / "plain.txt").write_text("hello\n")
    result = await call(places, "workspace", "read_file", path="plain.txt")
    assert result.output == "     1\thello"


def test_access_of_each_builtin_tool(places: Places) -> None:
    cwd = places.work
    shell = ShellTool()
    assert shell.access({"command": "ls -la"}, cwd) == Access(summary="ls -la", command="ls -la")
    assert shell.access(
        {"command": "curl x", "outside_sandbox": True, "justification": "fetch the docs"}, cwd
    ) == Access(summary="curl x", command="curl x", outside_sandbox="fetch the docs")
    asked = shell.access({"command": "curl x", "outside_sandbox": True}, cwd)
    assert asked.outside_sandbox == ""  # asked, without a reason: still a request
    real_work = Path(os.path.realpath(cwd))
    assert WriteFileTool().access({"path": "a/b.txt", "content": ""}, cwd) == Access(
        summary="write a/b.txt", writes=(real_work / "a" / "b.txt",)
    )
    # A symlink is judged by where it leads.
    outside = Path(os.path.realpath(places.outside / "file.txt"))
    assert EditFileTool().access({"path": "link.txt"}, cwd) == Access(
        summary=f"edit {outside}", writes=(outside,)
    )
    assert ReadFileTool().access({"path": "x.txt"}, cwd) == Access(summary="read x.txt")
    assert ListDirTool().access({}, cwd) == Access(summary=f"list {real_work}")
    assert all(access_of(tool, {}, cwd).summary for tool in BUILTIN_TOOLS.values())


def test_access_of_a_tool_without_the_method_is_its_name(places: Places) -> None:
    class Collaboration:
        spec = ReadFileTool().spec.__class__(name="send_message", description="", parameters={})

        async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return ToolResult("")

    assert access_of(Collaboration(), {"to": "x"}, places.work) == Access(summary="send_message")


async def test_a_huge_line_is_cut_not_loaded_whole(places: Places) -> None:
    (places.work / "minified.js").write_text("x" * 5_000_000 + "\nsecond\n")
    result = await call(places, "workspace", "read_file", path="minified.js")
    first, second = result.output.split("\n")
    assert first == "     1\t" + "x" * MAX_LINE_CHARS + (
        f" [… {5_000_000 - MAX_LINE_CHARS} more characters of this line not shown …]"
    )
    assert second == "     2\tsecond"
