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
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import ClassVar, cast

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
    Tool,
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


async def current_text(files: FileHost, target: Path) -> str | None:
    """The text the editor has for the path; None when there is no such file. An editor that
    answers a missing file with an error is taken at its word only if the disk agrees."""
    try:
        return await files.read(target)
    except HostFailed:
        if await run_in_own_thread(lambda: os.path.lexists(target), name="openvaala-file-tool"):
            raise
        return None


class _HeldByEditor:
    """The frame the hosted file tools share: with an editor holding the conversation's files
    the call goes through `_run_held`; a path the editor does not hold (None), or no editor, runs
    the disk tool this class is mixed into (the next `run` in the MRO). The model's mistakes and
    the editor's failures are error results, as the disk tools' are."""

    # What an error result says before the editor's reason.
    _editor_failed: ClassVar[str]

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        files = ctx.files
        if files is not None:
            try:
                result = await self._run_held(arguments, ctx, files)
            except (ToolArgumentError, ToolFailure, guard.Refused) as exc:
                return ToolResult(str(exc), is_error=True)
            except HostFailed as exc:
                return ToolResult(f"{self._editor_failed}: {exc}", is_error=True)
            if result is not None:
                return result
        disk = cast("Tool", super())
        return await disk.run(arguments, ctx)

    async def _run_held(
        self, arguments: JsonObject, ctx: ToolContext, files: FileHost
    ) -> ToolResult | None:
        """The call through the editor; None when the editor does not hold the file."""
        raise NotImplementedError


class HostedReadFile(_HeldByEditor, ReadFileTool):
    _editor_failed = "Could not read it from the editor"

    async def _run_held(
        self, arguments: JsonObject, ctx: ToolContext, files: FileHost
    ) -> ToolResult | None:
        path, offset, limit = read_args(arguments, ctx)
        target = await _checked(files, lambda: guard.check_read(path, ctx.confinement))
        if target is None:
            return None
        text = await current_text(files, target)
        if text is None:
            raise ToolFailure(f"File not found: {path}")
        # newline="\n": the buffer's lines as they are, numbered as on disk.
        shown = numbered(io.StringIO(text, newline="\n"), path, offset, limit)
        out, truncated = truncate_output(shown, ctx.output_limit)
        return ToolResult(out, truncated=truncated)


class _WrittenInEditor(_HeldByEditor):
    """`write_file` and `edit_file` through the editor: one file's new text, computed from the
    editor's current text, written there; the approval prompt's preview computes it alike."""

    def _check_arguments(self, arguments: JsonObject) -> None:
        """Raise `ToolArgumentError` for arguments the call cannot use (before any path check)."""

    def _new_text(self, arguments: JsonObject, path: Path, old: str | None) -> tuple[str, str]:
        """The file's new text and what the result says, from its current text (None: no such
        file); raises `ToolFailure` (or `ToolArgumentError`) for a call that cannot be made."""
        raise NotImplementedError

    async def _run_held(
        self, arguments: JsonObject, ctx: ToolContext, files: FileHost
    ) -> ToolResult | None:
        path = path_arg(arguments, ctx)
        self._check_arguments(arguments)
        target = await _checked(files, lambda: _writable(path, ctx))
        if target is None:
            return None
        old = await current_text(files, target)
        new, said = self._new_text(arguments, path, old)
        await files.write(target, new)
        return ToolResult(
            said,
            changes=(file_diff(old, new, str(arguments["path"])),),
            held=(HeldChange(target, old, new),),
        )

    async def held_preview(
        self, arguments: JsonObject, cwd: Path, confinement: Confinement, files: FileHost
    ) -> list[ProposedDiff] | None:
        """What the call would change in the editor's text of the file, for its approval prompt
        (tools/previews.py reads the disk); None when the editor does not hold the file (the
        disk's preview stands). A call that would fail proposes nothing."""
        # As previews.py: what the call would write, whatever the sandbox says (the user
        # decides), the daemon's private paths still refused.
        reading = replace(confinement, mode="off", approved=None)
        ctx = ToolContext(cwd=cwd, emit_output=lambda _: None, confinement=reading)
        try:
            path = path_arg(arguments, ctx)
            target = await _checked(files, lambda: _writable(path, ctx))
            if target is None:
                return None
            old = await current_text(files, target)
            new, _ = self._new_text(arguments, path, old)
        except (ToolArgumentError, ToolFailure, guard.Refused, HostFailed):
            return []
        shown = await run_in_own_thread(lambda: shown_path(target, cwd), name="openvaala-preview")
        return bounded_proposed([proposed_diff(str(target), shown, old, new)])


class HostedWriteFile(_WrittenInEditor, WriteFileTool):
    _editor_failed = "Could not write it in the editor; nothing was written"

    def _check_arguments(self, arguments: JsonObject) -> None:
        string_arg(arguments, "content")

    def _new_text(self, arguments: JsonObject, path: Path, old: str | None) -> tuple[str, str]:
        content = string_arg(arguments, "content")
        verb = "Overwrote" if old is not None else "Created"
        size = len(content.encode("utf-8"))
        return content, f"{verb} {path} in the editor ({size} bytes)."


class HostedEditFile(_WrittenInEditor, EditFileTool):
    _editor_failed = "Could not edit it in the editor; nothing was changed"

    def _check_arguments(self, arguments: JsonObject) -> None:
        edit_args(arguments)

    def _new_text(self, arguments: JsonObject, path: Path, old: str | None) -> tuple[str, str]:
        if old is None:
            raise ToolFailure(f"File not found: {path}")
        if len(old) > MAX_EDIT_BYTES:
            raise ToolFailure(f"{path} is too large to edit here (use the shell tool).")
        changed, count = replaced_in(old, arguments, path)
        plural = "occurrence" if count == 1 else "occurrences"
        return changed, f"Replaced {count} {plural} in {path} (in the editor)."


def _writable(path: Path, ctx: ToolContext) -> Path:
    target = guard.check_write(path, ctx.cwd, ctx.confinement)
    if target.is_dir():
        raise ToolFailure(f"{path} is a directory; cannot write a file there.")
    return target
