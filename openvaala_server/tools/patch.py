"""The `apply_patch` tool: add, update, move and delete files with one `*** Begin Patch` text.

All files or none: every path is checked against the call's confinement (like `write_file`,
symlinks resolved, the `Move to` target included) and every new content is computed before the
first write; should a write still fail (a full disk), the files already written get their old
content back. The result is a summary line per file and a git-style diff of each change, so the
model sees what it did and clients can render the diff (domain/patch.py has the format).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openvaala_server.domain.patch import (
    AddFile,
    DeleteFile,
    FileChange,
    PatchError,
    UpdateFile,
    apply_chunks,
    parse_patch,
    unified_diff,
)
from openvaala_server.domain.permissions import Access
from openvaala_server.models.base import ToolSpec
from openvaala_server.tools import guard
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output
from openvaala_server.tools.files import (
    MAX_EDIT_BYTES,
    ToolArgumentError,
    ToolFailure,
    _read_text_for_edit,
    _write_atomically,
    string_arg,
)
from openvaala_server.tools.threads import run_in_own_thread

_SPEC = ToolSpec(
    name="apply_patch",
    description=(
        "Change files with a patch: add, update (with context chunks), move and delete files in "
        "one call. All files change or none. The input is:\n"
        "*** Begin Patch\n"
        "*** Add File: path/new.py\n"
        "+every line of the new file, prefixed with +\n"
        "*** Update File: path/old.py\n"
        "*** Move to: path/renamed.py   (optional)\n"
        "@@ def some_function():   (a line to find first; optional)\n"
        " an unchanged line (3 lines before and after each change)\n"
        "-a removed line\n"
        "+an added line\n"
        "*** Delete File: path/gone.py\n"
        "*** End Patch\n"
        "Paths are relative to the working directory. The result shows the diff of each file."
    ),
    parameters={
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'.",
            }
        },
        "required": ["input"],
        "additionalProperties": False,
    },
)


class ApplyPatchTool:
    @property
    def spec(self) -> ToolSpec:
        return _SPEC

    def access(self, arguments: dict[str, Any], cwd: Path) -> Access:
        try:
            changes = parse_patch(string_arg(arguments, "input"))
        except (ToolArgumentError, PatchError):
            # The call will fail on its input without touching anything.
            return Access(summary="apply_patch")
        writes: list[Path] = []
        words: list[str] = []
        for change in changes:
            writes.append(guard.real(cwd / change.path))
            if isinstance(change, UpdateFile) and change.move_to is not None:
                writes.append(guard.real(cwd / change.move_to))
            words.append(_describe(change))
        return Access(summary="apply_patch: " + ", ".join(words), writes=tuple(writes))

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            text = await run_in_own_thread(lambda: _apply(arguments, ctx), name="openvaala-patch")
        except (ToolArgumentError, ToolFailure, PatchError, guard.Refused) as exc:
            return ToolResult(f"apply_patch: {exc}\nNothing was changed.", is_error=True)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            detail = exc.strerror or str(exc)
            return ToolResult(f"apply_patch: {detail}{where}\nNothing was changed.", is_error=True)
        text, truncated = truncate_output(text, ctx.output_limit)
        return ToolResult(text, truncated=truncated)


def _describe(change: FileChange) -> str:
    if isinstance(change, AddFile):
        return f"add {change.path}"
    if isinstance(change, DeleteFile):
        return f"delete {change.path}"
    if change.move_to is not None:
        return f"move {change.path} to {change.move_to}"
    return f"update {change.path}"


@dataclass
class _Plan:
    """What the patch does to each real path: its content before and after (None: absent)."""

    before: dict[Path, str | None]
    after: dict[Path, str | None]
    lines: list[str]  # the summary, one line per file change
    diffs: list[str]

    def current(self, path: Path, shown: str, ctx: ToolContext) -> str | None:
        """The content of `path` as earlier changes of this patch left it."""
        if path in self.after:
            return self.after[path]
        if not path.exists():
            self.before[path] = None
            return None
        if path.is_dir():
            raise ToolFailure(f"{shown} is a directory, not a file.")
        text = _read_text_for_edit(Path(shown), path, ctx.confinement)
        self.before[path] = text
        return text


def _apply(arguments: dict[str, Any], ctx: ToolContext) -> str:
    changes = parse_patch(string_arg(arguments, "input"))
    plan = _Plan(before={}, after={}, lines=[], diffs=[])
    for change in changes:
        _plan_change(change, plan, ctx)
    _write_all(plan, ctx)
    count = len(changes)
    header = f"Applied the patch: {count} file change{'s' if count != 1 else ''}."
    return "\n".join([header, *plan.lines, "", *plan.diffs]).rstrip("\n")


def _target(raw: str, ctx: ToolContext) -> Path:
    path = Path(raw).expanduser()
    return guard.check_write(
        path if path.is_absolute() else ctx.cwd / path, ctx.cwd, ctx.confinement
    )


def _plan_change(change: FileChange, plan: _Plan, ctx: ToolContext) -> None:
    source = _target(change.path, ctx)
    if isinstance(change, AddFile):
        old = plan.current(source, change.path, ctx)
        if len(change.contents.encode()) > MAX_EDIT_BYTES:
            raise ToolFailure(f"Add File: {change.path} is too large to write with a patch.")
        plan.after[source] = change.contents
        plan.lines.append(f"{'M' if old is not None else 'A'} {change.path}")
        plan.diffs.append(unified_diff(old, change.contents, change.path, change.path))
        return
    old = plan.current(source, change.path, ctx)
    if old is None:
        verb = "Delete" if isinstance(change, DeleteFile) else "Update"
        raise ToolFailure(f"{verb} File: {change.path} does not exist.")
    if isinstance(change, DeleteFile):
        plan.after[source] = None
        plan.lines.append(f"D {change.path}")
        plan.diffs.append(unified_diff(old, None, change.path, change.path))
        return
    new = apply_chunks(old, change.chunks, change.path)
    if change.move_to is None:
        plan.after[source] = new
        plan.lines.append(f"M {change.path}")
        plan.diffs.append(unified_diff(old, new, change.path, change.path))
        return
    destination = _target(change.move_to, ctx)
    if destination != source:
        existing = plan.current(destination, change.move_to, ctx)
        if existing is not None:
            raise ToolFailure(
                f"Move to: {change.move_to} already exists; delete it first or pick another path."
            )
        plan.after[source] = None
    plan.after[destination] = new
    plan.lines.append(f"R {change.path} -> {change.move_to}")
    plan.diffs.append(unified_diff(old, new, change.path, change.move_to))


def _write_all(plan: _Plan, ctx: ToolContext) -> None:
    done: list[Path] = []
    try:
        for path, content in plan.after.items():
            if content != plan.before.get(path):
                _put(path, content, ctx)
            done.append(path)
    except BaseException:
        # Put back what was already written, newest first; the error still reaches the model.
        for path in reversed(done):
            with contextlib.suppress(OSError, guard.Refused, ToolFailure):
                _put(path, plan.before.get(path), ctx)
        raise


def _put(path: Path, content: str | None, ctx: ToolContext) -> None:
    if content is not None:
        _write_atomically(path, content.encode("utf-8"), ctx)
        return
    folder = guard.checked_dir(path.parent, ctx.cwd, ctx.confinement)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=folder)
    finally:
        os.close(folder)
