"""A small MCP server written with the official SDK, run by the tests and bench/mcp.py.

`python mcp_test_server.py stdio` speaks over stdin/stdout; `... http PORT` serves streamable
HTTP on 127.0.0.1:PORT/mcp; `... hang` starts but never answers (a server that never starts);
`... gated PATH` answers over stdio once the file PATH exists (a slow start the test ends);
`... held PATH` answers over stdio, its prompt `review` writing PATH.started and answering once
PATH exists (a prompt kept in flight);
`... late` adds the tool `grown` while it answers its first resources/list (its client is still
starting: it listed the tools just before) and says its tool list changed; `... chatty PATH`
answers every tools/list with another `notifications/tools/list_changed`, writing a line to PATH
for each (a server that would be relisted forever).
"""

from __future__ import annotations

import base64
import os
import sys
import threading
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import Tool as McpTool
from mcp.types import ToolExecution

# A 1×1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


class _Server(MCPServer):
    async def list_tools(self) -> list[McpTool]:
        required = ToolExecution(task_support="required")
        return [
            t.model_copy(update={"execution": required}) if t.name == "task_only" else t
            for t in await super().list_tools()
        ]

    async def _handle_list_tools(self, ctx: Any, params: Any) -> Any:
        if CHATTY is not None:
            _count_listing(CHATTY)
            await ctx.session.send_tool_list_changed()
        return await super()._handle_list_tools(ctx, params)

    async def _handle_list_resources(self, ctx: Any, params: Any) -> Any:
        if LATE and self._tool_manager.get_tool("grown") is None:
            self.add_tool(grown)
            await ctx.session.send_tool_list_changed()
        return await super()._handle_list_resources(ctx, params)


def _count_listing(path: str) -> None:
    with open(path, "a") as counted:
        counted.write("listed\n")


LATE = len(sys.argv) > 1 and sys.argv[1] == "late"
CHATTY = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "chatty" else None
HELD = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "held" else None
server = _Server("openvaala-test")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def env(name: str) -> str:
    """One environment variable of the server, or <unset>."""
    return os.environ.get(name, "<unset>")


@server.tool(structured_output=False)
def picture() -> list[object]:
    """A caption and a one-pixel PNG."""
    return ["a pixel", Image(data=PIXEL, format="png")]


@server.tool()
def crash() -> str:
    """Exit the server's process in the middle of the call."""
    os._exit(3)


@server.tool()
def header(name: str, ctx: Context) -> str:
    """One header of the HTTP request that carried the call, or <unset>."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return str(headers.get(name, "<unset>")) if headers is not None else "<no request>"


@server.tool(name="files.read")
def files_read() -> str:
    """A tool whose name holds a dot, which model providers refuse in tool names."""
    return "read"


@server.tool()
def exit_soon() -> str:
    """Answer, then exit the server's process while it is idle."""
    threading.Timer(0.2, os._exit, (4,)).start()
    return "exiting"


@server.tool()
def write_text(path: str, text: str) -> str:
    """Write `text` to the file at the absolute `path` (a server that changes files)."""
    with open(path, "w") as f:
        f.write(text)
    return "written"


@server.tool()
def sleep(seconds: float) -> str:
    """Answer after `seconds`."""
    time.sleep(seconds)
    return "slept"


@server.tool()
def big(size: int) -> str:
    """`size` characters: a line numbered 0, then filler, ending in a line numbered 1."""
    return "start\n" + "x" * max(0, size - 10) + "\nend"


@server.tool()
def wait_file(path: str) -> str:
    """Write `path`.started, then answer once `path` exists (a call kept in flight)."""
    started_then_until(path)
    return "waited"


def started_then_until(path: str) -> None:
    with open(path + ".started", "w"):
        pass
    until_exists(path)


def until_exists(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.02)


@server.tool()
async def steps(count: int, seconds: float, ctx: Context) -> str:
    """Take `count` steps of `seconds` each, reporting progress after each."""
    for step in range(1, count + 1):
        await anyio.sleep(seconds)
        await ctx.report_progress(step, count, f"step {step} of {count}")
    return f"{count} steps"


@server.tool()
async def gated_steps(count: int, gate: str, ctx: Context) -> str:
    """Report step 1, wait until the file `gate` exists, then take the other steps."""
    await ctx.report_progress(1, count, f"step 1 of {count}")
    await anyio.to_thread.run_sync(until_exists, gate)
    for step in range(2, count + 1):
        await ctx.report_progress(step, count, f"step {step} of {count}")
    return f"{count} steps"


@server.tool()
async def roots(ctx: Context) -> str:
    """The client's roots, one URI a line."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots)


@server.tool()
def task_only() -> str:
    """A tool the server lists as requiring task augmentation (see list_tools below)."""
    return "never offered"


def grown() -> str:
    """A tool added while the server runs (by grow)."""
    return "grown here"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and the resource notes://later; tell the client its lists changed."""
    server.add_tool(grown)
    server.add_resource(TextResource(uri="notes://later", name="later", text="Later: repot it."))
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_list_changed()
    return "grown"


@server.resource("notes://today", name="today", mime_type="text/plain")
def today() -> str:
    """Today's notes."""
    return "Water the ficus at noon."


@server.prompt()
async def review(file: str) -> str:
    """Ask for a review of one file."""
    if HELD is not None:
        await anyio.to_thread.run_sync(started_then_until, HELD)
    return f"Review {file} for bugs, briefly."


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode in ("late", "chatty", "held"):
        server.run("stdio")
    elif mode == "gated":
        until_exists(sys.argv[2])
        server.run("stdio")
    elif mode == "hang":
        time.sleep(3600)
    else:
        sys.exit(f"unknown mode {mode!r}")
