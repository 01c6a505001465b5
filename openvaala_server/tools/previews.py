"""What a `write_file`, `edit_file` or `apply_patch` call would change, read before it runs.

The approval prompt shows these diffs (docs/protocol.md, Approvals). A preview reads the files as
the call would, with the daemon's private paths still refused (a prompt must not show the token
file), but whatever the sandbox would block: a call that asks is often one the sandbox would
block, and the user decides on what it would write. A call that would fail on its arguments or
its files proposes nothing: it will not change anything.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from openvaala_server.domain.patch import PatchError
from openvaala_server.domain.permissions import Confinement
from openvaala_server.domain.proposed import (
    ProposedDiff,
    ProposedKind,
    binary_proposed,
    bounded_proposed,
    proposed_diff,
)
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard
from openvaala_server.tools.base import Tool, ToolContext
from openvaala_server.tools.files import (
    MAX_EDIT_BYTES,
    EditFileTool,
    ToolArgumentError,
    ToolFailure,
    WriteFileTool,
    _path_in,
    edited,
    shown_path,
    string_arg,
)
from openvaala_server.tools.patch import ApplyPatchTool, plan_patch


def previews(tool: Tool) -> bool:
    """Whether calls of `tool` propose diffs."""
    return isinstance(tool, WriteFileTool | EditFileTool | ApplyPatchTool)


def proposed_changes(
    tool: Tool, arguments: JsonObject, cwd: Path, confinement: Confinement
) -> list[ProposedDiff]:
    """The diffs a call of `tool` would make; empty for other tools and for calls that fail."""
    reading = replace(confinement, mode="off", approved=None)
    try:
        if isinstance(tool, WriteFileTool):
            diffs = _write(arguments, cwd, reading)
        elif isinstance(tool, EditFileTool):
            _, target, old, new, _ = edited(arguments, cwd, reading)
            diffs = [proposed_diff(str(target), shown_path(target, cwd), old, new)]
        elif isinstance(tool, ApplyPatchTool):
            diffs = _patch(arguments, cwd, reading)
        else:
            return []
    except (ToolArgumentError, ToolFailure, PatchError, guard.Refused, OSError):
        return []
    return bounded_proposed(diffs)


def _write(arguments: JsonObject, cwd: Path, confinement: Confinement) -> list[ProposedDiff]:
    path = _path_in(arguments, cwd)
    content = string_arg(arguments, "content")
    target = guard.check_write(path, cwd, confinement)
    if target.is_dir():
        return []
    shown = shown_path(target, cwd)
    if not target.exists():
        return [proposed_diff(str(target), shown, None, content)]
    with os.fdopen(guard.open_for_reading(target, confinement), "rb") as file:
        data = file.read(MAX_EDIT_BYTES + 1)
    old = _text(data)
    if old is None:
        return [binary_proposed(str(target), shown, "update")]
    return [proposed_diff(str(target), shown, old, content)]


def _patch(
    arguments: JsonObject,
    cwd: Path,
    confinement: Confinement,
    known: dict[Path, bytes | None] | None = None,
) -> list[ProposedDiff]:
    ctx = ToolContext(cwd=cwd, emit_output=lambda _: None, confinement=confinement)
    plan = plan_patch(arguments, ctx, known)
    diffs: list[ProposedDiff] = []
    # One entry per real path, in the patch's order: a move is its source deleted and its
    # target added.
    for path, after in plan.after.items():
        before = plan.before.get(path)
        if after == before:
            continue
        shown = shown_path(path, cwd)
        old = None if before is None else _text(before)
        new = None if after is None else after.decode("utf-8")
        kind: ProposedKind = "add" if before is None else "delete" if after is None else "update"
        if before is not None and old is None:
            diffs.append(binary_proposed(str(path), shown, kind))
        else:
            diffs.append(proposed_diff(str(path), shown, old, new))
    return diffs


def _text(data: bytes) -> str | None:
    """`data` as text; None when it is binary, not UTF-8 or too large to show."""
    if len(data) > MAX_EDIT_BYTES or b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def patch_changes(
    arguments: JsonObject,
    cwd: Path,
    confinement: Confinement,
    known: dict[Path, bytes | None],
) -> list[ProposedDiff]:
    """What a patch would change, the `known` files read as given (an editor's buffers)."""
    try:
        reading = replace(confinement, mode="off", approved=None)
        return bounded_proposed(_patch(arguments, cwd, reading, known))
    except (ToolArgumentError, ToolFailure, PatchError, guard.Refused, OSError):
        return []
