"""What a tool is: a spec the model sees and an async `run` the agent loop awaits.

Tools run in the conversation's working directory and stream their output through
`ToolContext.emit_output` as it comes, so every client sees it live. Cancelling the task that
awaits `run` is how an interrupt reaches a tool: a tool must then stop at once and release what it
holds (the shell tool kills its whole process group).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from openvaala_server.domain.diffs import FileDiff
from openvaala_server.domain.images import Image
from openvaala_server.domain.permissions import Access, Confinement
from openvaala_server.domain.proposed import ProposedDiff
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject


class FileHost(Protocol):
    """An editor that holds the conversation's files (docs/design.md, "Files held by an
    editor"): the file tools read and write through it, so unsaved buffers are seen and edits
    land in them. Paths are absolute and already checked against the call's confinement."""

    def holds(self, path: Path) -> bool:
        """Whether the host serves this path (inside the conversation's directory)."""
        ...

    async def read(self, path: Path) -> str | None:
        """The text the editor has for the path (its buffer when open); None: no such file.
        Raises `HostFailed` when the editor cannot answer."""
        ...

    async def write(self, path: Path, text: str) -> None:
        """Put `text` into the editor's buffer for the path. Raises `HostFailed`."""
        ...


@dataclass(frozen=True)
class TerminalRun:
    """How a command run in the editor's terminal ended."""

    output: str
    exit_code: int | None
    signal: str | None = None
    timed_out: bool = False
    truncated: bool = False


class TerminalHost(Protocol):
    """An editor that runs commands in its own terminals (docs/design.md, "Commands in the
    editor's terminal"): the shell tool hands it the command line it would run itself, sandbox
    included."""

    async def run(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout_s: float,
        call_id: str,
        on_output: Callable[[str], None],
    ) -> TerminalRun:
        """Run `argv` to its end or `timeout_s` (then killed); `on_output` gets what it prints
        while it runs, as the editor reports it. Raises `HostFailed`."""
        ...


@runtime_checkable
class PreviewsHeld(Protocol):
    """A file tool that can tell what a call would change in the editor's text of its files
    (the approval's diff); None when the editor holds none of them (the disk's preview)."""

    async def held_preview(
        self, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
    ) -> list[ProposedDiff] | None: ...


class HostFailed(Exception):
    """The editor holding the files refused, went away or did not answer in time."""


@dataclass
class ToolContext:
    cwd: Path
    # Called with each chunk of output as it is produced (already decoded text).
    emit_output: Callable[[str], None]
    # Cap on the text of one result; past it the result is cut with a visible notice.
    output_limit: int = 20_000
    # What the call may touch: the sandbox mode, the network, the hidden paths and variables.
    confinement: Confinement = field(default_factory=Confinement)
    # The editor that holds the files, when a client registered as one (None: the disk).
    files: FileHost | None = None
    # The editor that runs commands in its terminals, when its client offered to (None: here).
    terminal: TerminalHost | None = None
    call_id: str = ""  # the call being run (an editor shows its terminal in that call)


@dataclass(frozen=True)
class HeldChange:
    """A file changed in the editor that holds it (not on disk): its real path and texts, for
    the call's checkpoint (docs/storage.md)."""

    path: Path
    old: str | None  # None: the file did not exist
    new: str


@dataclass(frozen=True)
class ToolResult:
    output: str
    is_error: bool = False
    truncated: bool = False
    # The files the call changed, for clients to render (the result's `changes`).
    changes: tuple[FileDiff, ...] = ()
    # Images the call returned (read_file on an image, an MCP tool's image content): stored in
    # the conversation's attachments and referred to by the result's `images` (docs/storage.md).
    attachments: tuple[Image, ...] = ()
    # What the call changed through the editor holding the files (ToolContext.files).
    held: tuple[HeldChange, ...] = ()


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult: ...


@runtime_checkable
class StatesAccess(Protocol):
    """A tool that can tell what a call would do before it runs (every built-in tool)."""

    def access(self, arguments: JsonObject, cwd: Path) -> Access: ...


def access_of(tool: Tool, arguments: JsonObject, cwd: Path) -> Access:
    """What a call of `tool` would do; just its name for tools that don't say (collaboration)."""
    if isinstance(tool, StatesAccess):
        return tool.access(arguments, cwd)
    return Access(summary=tool.spec.name)


def truncate_output(text: str, limit: int) -> tuple[str, bool]:
    """Keep the head and tail of an over-long result, with a notice of what was cut."""
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return text[:head] + truncation_notice(cut) + text[len(text) - tail :], True


def truncation_notice(cut: int) -> str:
    """The marker put where `cut` characters were dropped from the middle of an output."""
    return f"\n\n[… {cut} characters of output truncated …]\n\n"
