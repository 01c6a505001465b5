"""The file changes a file tool's call proposes, before it runs (while it waits for an approval):
what a Codex client shows in its approval (docs/codex.md "Approvals").

Codex's `item/fileChange/requestApproval` carries no changes: the client renders those of the
`fileChange` item with the same id, so that item must carry them from its start. The tool's
result replaces them with the changes made. `apply_patch`'s update hunks are applied to the file
as it is now (`Reader`, given by the caller: this module reads nothing itself), so the diff has
the file's real line numbers, as the result's will."""

from __future__ import annotations

from collections.abc import Callable

from openvaala_server.codex import wire
from openvaala_server.domain import tool_names
from openvaala_server.domain.patch import (
    AddFile,
    DeleteFile,
    PatchError,
    apply_chunks,
    parse_patch,
    unified_diff,
)
from openvaala_server.protocol.json_types import JsonObject

Reader = Callable[[str], str | None]  # a path as the call names it → the file's text, or None
_UPDATE: wire.PatchChangeKind = {"type": "update", "move_path": None}


def no_files(path: str) -> str | None:
    """A reader that knows no file: update hunks are shown as they are in the patch."""
    return None


def changes(name: str, args: JsonObject, read: Reader) -> list[wire.FileUpdateChange]:
    """The changes call `name` proposes; [] when its arguments name none (a bad patch too: its
    result says what is wrong)."""
    if name == tool_names.APPLY_PATCH:
        patch = args.get("input")
        return _patch_changes(patch, read) if isinstance(patch, str) else []
    if "path" not in args:
        return []
    path = str(args["path"])
    old, new = args.get("old_text"), args.get("new_text")
    if name == tool_names.WRITE_FILE:
        old, new = "", args.get("content")  # what it overwrites is not read
    diff = ""
    if isinstance(old, str) and isinstance(new, str):
        diff = unified_diff(old, new, path, path)
    return [{"path": path, "kind": _UPDATE, "diff": diff}]


def _patch_changes(patch: str, read: Reader) -> list[wire.FileUpdateChange]:
    try:
        parsed = parse_patch(patch)
    except PatchError:
        return []
    out: list[wire.FileUpdateChange] = []
    for change in parsed:
        if isinstance(change, AddFile):
            diff = unified_diff(None, change.contents, change.path, change.path)
            out.append({"path": change.path, "kind": {"type": "add"}, "diff": diff})
        elif isinstance(change, DeleteFile):
            old = read(change.path)
            diff = unified_diff(old, None, change.path, change.path) if old is not None else ""
            out.append({"path": change.path, "kind": {"type": "delete"}, "diff": diff})
        else:
            target = change.move_to or change.path
            old = read(change.path)
            new: str | None = None
            if old is not None:
                try:
                    new = apply_chunks(old, change.chunks, change.path)
                except PatchError:
                    new = None  # the hunks do not apply: shown as written; the result fails
            if old is None or new is None:
                old = "".join(line + "\n" for c in change.chunks for line in c.old_lines)
                new = "".join(line + "\n" for c in change.chunks for line in c.new_lines)
            kind: wire.PatchChangeKind = {"type": "update", "move_path": change.move_to}
            out.append(
                {
                    "path": change.path,
                    "kind": kind,
                    "diff": unified_diff(old, new, change.path, target),
                }
            )
    return out
