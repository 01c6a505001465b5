"""The file tools when an editor holds the conversation's files (docs/design.md, "Files held by
an editor"): `read_file`, `write_file` and `edit_file` read and write a text file inside the
working directory through the editor (`ToolContext.files`), so the model sees unsaved buffers and
its edits land in them. Everything else is as on disk: the same arguments, messages, confinement
checks (made before the editor is asked) and diffs. An image or binary file, a path outside the
working directory, or a conversation no editor holds: the disk tools of tools/files.py.
"""

from __future__ import annotations

import io
import os
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from openvaala_server.domain import images
from openvaala_server.domain.diffs import file_diff
from openvaala_server.domain.permissions import Confinement
from openvaala_server.domain.proposed import ProposedDiff, bounded_proposed, proposed_diff
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard
from openvaala_server.tools.base import (
    FileHost,
    HeldChange,
    HostFailed,
    ToolContext,
    ToolResult,
    truncate_output,
)
from openvaala_server.tools.files import (
    MAX_EDIT_BYTES,
    EditFileTool,
    ReadFileTool,
    ToolArgumentError,
    ToolFailure,
    WriteFileTool,
    edit_args,
    numbered,
    path_arg,
    read_args,
    replaced_in,
    shown_path,
    string_arg,
)
from openvaala_server.tools.threads import run_in_own_thread

_SNIFF_BYTES = 8192


def held(files: FileHost, target: Path) -> bool:
    """Whether the editor serves this path: inside its directory, and not an image or binary
    file on disk (the editor's text API cannot carry those)."""
    if not files.holds(target):
        return False
    try:
        with open(target, "rb") as file:
            head = file.read(_SNIFF_BYTES)
    except OSError:  # not on disk (yet): the editor may have it unsaved
        return True
    return images.sniff(head) is None and b"\0" not in head


async def _checked(files: FileHost, check: Callable[[], Path]) -> Path | None:
    """The real path a call may touch (`check` raises if it may not), or None when the editor
    does not hold it. Off the loop: resolving reads the disk."""

    def both() -> Path | None:
        target = check()
        return target if held(files, target) else None

    return await run_in_own_thread(both, name="openvaala-file-tool")


async def _reported(work: Awaitable[ToolResult], what: str) -> ToolResult:
    """The model's mistakes and the editor's failures as error results, as the disk tools do."""
    try:
        return await work
    except (ToolArgumentError, ToolFailure, guard.Refused) as exc:
        return ToolResult(str(exc), is_error=True)
    except HostFailed as exc:
        return ToolResult(f"{what}: {exc}", is_error=True)


async def current_text(files: FileHost, target: Path) -> str | None:
    """The text the editor has for the path; None when there is no such file. An editor that
    answers a missing file with an error is taken at its word only if the disk agrees."""
    try:
        return await files.read(target)
    except HostFailed:
        if await run_in_own_thread(lambda: os.path.lexists(target), name="openvaala-file-tool"):
            raise
        return None


class HostedReadFile(ReadFileTool):
    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        files = ctx.files
        if files is None:
            return await super().run(arguments, ctx)

        async def hosted() -> ToolResult:
            path, offset, limit = read_args(arguments, ctx)
            target = await _checked(files, lambda: guard.check_read(path, ctx.confinement))
            if target is None:
                return await ReadFileTool.run(self, arguments, ctx)
            text = await current_text(files, target)
            if text is None:
                raise ToolFailure(f"File not found: {path}")
            # newline="\n": the buffer's lines as they are, numbered as on disk.
            shown = numbered(io.StringIO(text, newline="\n"), path, offset, limit)
            out, truncated = truncate_output(shown, ctx.output_limit)
            return ToolResult(out, truncated=truncated)

        return await _reported(hosted(), "Could not read it from the editor")


class HostedWriteFile(WriteFileTool):
    async def held_preview(
        self, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
    ) -> list[ProposedDiff] | None:
        return await held_preview(self, arguments, cwd, confinement, files)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        files = ctx.files
        if files is None:
            return await super().run(arguments, ctx)

        async def hosted() -> ToolResult:
            path = path_arg(arguments, ctx)
            content = string_arg(arguments, "content")
            target = await _checked(files, lambda: _writable(path, ctx))
            if target is None:
                return await WriteFileTool.run(self, arguments, ctx)
            old = await current_text(files, target)
            await files.write(target, content)
            verb = "Overwrote" if old is not None else "Created"
            size = len(content.encode("utf-8"))
            change = file_diff(old, content, str(arguments["path"]))
            return ToolResult(
                f"{verb} {path} in the editor ({size} bytes).",
                changes=(change,),
                held=(HeldChange(target, old, content),),
            )

        return await _reported(hosted(), "Could not write it in the editor; nothing was written")


class HostedEditFile(EditFileTool):
    async def held_preview(
        self, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
    ) -> list[ProposedDiff] | None:
        return await held_preview(self, arguments, cwd, confinement, files)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        files = ctx.files
        if files is None:
            return await super().run(arguments, ctx)

        async def hosted() -> ToolResult:
            path = path_arg(arguments, ctx)
            edit_args(arguments)
            target = await _checked(files, lambda: _writable(path, ctx))
            if target is None:
                return await EditFileTool.run(self, arguments, ctx)
            content = await current_text(files, target)
            if content is None:
                raise ToolFailure(f"File not found: {path}")
            if len(content) > MAX_EDIT_BYTES:
                raise ToolFailure(f"{path} is too large to edit here (use the shell tool).")
            changed, count = replaced_in(content, arguments, path)
            await files.write(target, changed)
            plural = "occurrence" if count == 1 else "occurrences"
            change = file_diff(content, changed, str(arguments["path"]))
            return ToolResult(
                f"Replaced {count} {plural} in {path} (in the editor).",
                changes=(change,),
                held=(HeldChange(target, content, changed),),
            )

        return await _reported(hosted(), "Could not edit it in the editor; nothing was changed")


def _writable(path: Path, ctx: ToolContext) -> Path:
    target = guard.check_write(path, ctx.cwd, ctx.confinement)
    if target.is_dir():
        raise ToolFailure(f"{path} is a directory; cannot write a file there.")
    return target


async def held_preview(
    tool: object, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
) -> list[ProposedDiff] | None:
    """What a `write_file` or `edit_file` call would change in the editor's text of the file,
    for its approval prompt (tools/previews.py reads the disk); None when the editor does not
    hold the file (the disk's preview stands). A call that would fail proposes nothing."""
    if not isinstance(tool, HostedWriteFile | HostedEditFile):
        return None
    # As previews.py: what the call would write, whatever the sandbox says (the user decides),
    # the daemon's private paths still refused.
    reading = replace(confinement, mode="off", approved=None)
    ctx = ToolContext(cwd=cwd, emit_output=lambda _: None, confinement=reading)
    try:
        path = path_arg(arguments, ctx)
        target = await _checked(files, lambda: _writable(path, ctx))
        if target is None:
            return None
        old = await current_text(files, target)
        if isinstance(tool, HostedWriteFile):
            new = string_arg(arguments, "content")
        elif old is None:
            return []
        else:
            new, _ = replaced_in(old, arguments, path)
    except (ToolArgumentError, ToolFailure, guard.Refused, HostFailed):
        return []
    shown = await run_in_own_thread(lambda: shown_path(target, cwd), name="openvaala-preview")
    return bounded_proposed([proposed_diff(str(target), shown, old, new)])
