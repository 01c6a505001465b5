"""The `apply_patch` tool: add, update, move and delete files with one `*** Begin Patch` text.

All files or none: every path is checked against the call's confinement (like `write_file`,
symlinks resolved, the `Move to` target included) and every new content is computed before the
first write; should a write still fail (a full disk), the files already written get their old
content back. The result is a summary line per file and a git-style diff of each change, so the
model sees what it did; the same changes go to clients as the result's `changes`
(domain/diffs.py), which they render as diffs.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from openvaala_server.domain.diffs import ChangeKind, FileDiff, binary_diff, bounded, file_diff
from openvaala_server.domain.patch import (
    AddFile,
    DeleteFile,
    FileChange,
    PatchError,
    UpdateFile,
    apply_chunks,
    parse_patch,
)
from openvaala_server.domain.permissions import Access
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output
from openvaala_server.tools.files import (
    MAX_EDIT_BYTES,
    ToolArgumentError,
    ToolFailure,
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

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        try:
            changes = parse_patch(string_arg(arguments, "input"))
        except (ToolArgumentError, PatchError):
            # The call will fail on its input without touching anything.
            return Access(summary="apply_patch")
        writes: list[Path] = []
        words: list[str] = []
        for change in changes:
            writes.append(guard.real(cwd / Path(change.path).expanduser()))
            if isinstance(change, UpdateFile) and change.move_to is not None:
                writes.append(guard.real(cwd / Path(change.move_to).expanduser()))
            words.append(_describe(change))
        return Access(summary="apply_patch: " + ", ".join(words), writes=tuple(writes))

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        try:
            text, changes = await run_in_own_thread(
                lambda: _apply(arguments, ctx), name="openvaala-patch"
            )
        except (ToolArgumentError, ToolFailure, PatchError, guard.Refused) as exc:
            return ToolResult(f"apply_patch: {exc}\nNothing was changed.", is_error=True)
        except OSError as exc:
            where = f": {exc.filename}" if exc.filename else ""
            detail = exc.strerror or str(exc)
            return ToolResult(f"apply_patch: {detail}{where}\nNothing was changed.", is_error=True)
        text, truncated = truncate_output(text, ctx.output_limit)
        return ToolResult(text, truncated=truncated, changes=tuple(bounded(changes)))


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
    """What the patch does to each real path: its bytes before and after (None: absent)."""

    ctx: ToolContext
    before: dict[Path, bytes | None] = field(default_factory=dict)
    after: dict[Path, bytes | None] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # the summary, one line per file change
    changes: list[FileDiff] = field(default_factory=list)

    def raw(self, path: Path, shown: str) -> bytes | None:
        """The bytes of `path` as earlier changes of this patch left it."""
        if path in self.after:
            return self.after[path]
        if path not in self.before:
            self.before[path] = _read(path, shown, self.ctx)
        return self.before[path]

    def text(self, path: Path, shown: str) -> str | None:
        data = self.raw(path, shown)
        return None if data is None else _decode(data, shown)

    def change(self, path: Path, content: str | None) -> None:
        self.after[path] = None if content is None else content.encode("utf-8")


def _read(path: Path, shown: str, ctx: ToolContext) -> bytes | None:
    if not path.exists():
        return None
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory, not a file.")
    with os.fdopen(guard.open_for_reading(path, ctx.confinement), "rb") as file:
        data = file.read(MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise ToolFailure(
            f"{shown} is larger than {MAX_EDIT_BYTES // (1024 * 1024)} MiB; too large to change "
            "with a patch (use the shell tool)."
        )
    return data


def _decode(data: bytes, shown: str) -> str:
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{shown} looks like a binary file; a patch cannot change it as text.")
    try:
        # Strict, and no newline translation: bytes outside the chunks must stay as they are.
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolFailure(f"{shown} is not valid UTF-8 ({exc.reason}); cannot patch it.") from exc


def _diff(old: bytes | None, new: str | None, path: str) -> FileDiff:
    try:
        old_text = None if old is None else _decode(old, path)
    except ToolFailure:
        kind: ChangeKind = "delete" if new is None else "update"
        return binary_diff(path, kind)
    return file_diff(old_text, new, path)


def _apply(arguments: JsonObject, ctx: ToolContext) -> tuple[str, list[FileDiff]]:
    plan = plan_patch(arguments, ctx)
    _write_all(plan, ctx)
    return summary(plan)


def plan_patch(
    arguments: JsonObject, ctx: ToolContext, known: dict[Path, bytes | None] | None = None
) -> _Plan:
    """What the patch would make of each file, written or not; `known`: contents to take
    instead of the disk's (an editor's buffers: tools/hosted_patch.py)."""
    plan = _Plan(ctx, before=dict(known or {}))
    for change in parse_patch(string_arg(arguments, "input")):
        _plan_change(change, plan, ctx)
    return plan


def summary(plan: _Plan) -> tuple[str, list[FileDiff]]:
    """The result's text (a line per file change, then the diffs) and its `changes`."""
    count = len(plan.lines)
    header = f"Applied the patch: {count} file change{'s' if count != 1 else ''}."
    diffs = [change["diff"] for change in plan.changes]
    return "\n".join([header, *plan.lines, "", *diffs]).rstrip("\n"), plan.changes


def targets(arguments: JsonObject, ctx: ToolContext) -> list[Path]:
    """The real paths a patch names (each checked as a write), in order."""
    paths: list[Path] = []
    for change in parse_patch(string_arg(arguments, "input")):
        paths.append(_target(change.path, ctx))
        if isinstance(change, UpdateFile) and change.move_to is not None:
            paths.append(_target(change.move_to, ctx))
    return list(dict.fromkeys(paths))


def put(path: Path, content: bytes | None, ctx: ToolContext) -> None:
    """Write or delete one file of a patch on disk."""
    _put(path, content, ctx)


def _target(raw: str, ctx: ToolContext) -> Path:
    path = Path(raw).expanduser()
    return guard.check_write(
        path if path.is_absolute() else ctx.cwd / path, ctx.cwd, ctx.confinement
    )


def _plan_change(change: FileChange, plan: _Plan, ctx: ToolContext) -> None:
    source = _target(change.path, ctx)
    if isinstance(change, AddFile):
        existing = plan.raw(source, change.path)
        if len(change.contents.encode()) > MAX_EDIT_BYTES:
            raise ToolFailure(f"Add File: {change.path} is too large to write with a patch.")
        plan.change(source, change.contents)
        plan.lines.append(f"{'M' if existing is not None else 'A'} {change.path}")
        plan.changes.append(_diff(existing, change.contents, change.path))
        return
    if isinstance(change, DeleteFile):
        data = plan.raw(source, change.path)
        if data is None:
            raise ToolFailure(f"Delete File: {change.path} does not exist.")
        plan.change(source, None)
        plan.lines.append(f"D {change.path}")
        plan.changes.append(_diff(data, None, change.path))
        return
    old = plan.text(source, change.path)
    if old is None:
        raise ToolFailure(f"Update File: {change.path} does not exist.")
    new = apply_chunks(old, change.chunks, change.path)
    if change.move_to is None:
        plan.change(source, new)
        plan.lines.append(f"M {change.path}")
        plan.changes.append(file_diff(old, new, change.path))
        return
    destination = _target(change.move_to, ctx)
    if destination != source:
        if plan.raw(destination, change.move_to) is not None:
            raise ToolFailure(
                f"Move to: {change.move_to} already exists; delete it first or pick another path."
            )
        plan.change(source, None)
    plan.change(destination, new)
    plan.lines.append(f"R {change.path} -> {change.move_to}")
    plan.changes.append(file_diff(old, new, change.path, change.move_to))


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


def _put(path: Path, content: bytes | None, ctx: ToolContext) -> None:
    if content is not None:
        _write_atomically(path, content, ctx)
        return
    folder = guard.checked_dir(path.parent, ctx.cwd, ctx.confinement)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path.name, dir_fd=folder)
    finally:
        os.close(folder)
