"""What an editor shows of a tool call: its kind (the icon), a one-line title, the files it
touches (follow-along) and, for edits, the diff — all derived from the call's name and arguments.

Pure: no I/O. Paths are made absolute against the conversation's working directory, as ACP wants
absolute paths in `locations` and diffs."""

from __future__ import annotations

import os
from collections.abc import Mapping

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolKind,
)

from openvaala_server.domain.patch import AddFile, DeleteFile, PatchError, UpdateFile, parse_patch

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, ToolKind] = {
    "shell": "execute",
    "read_file": "read",
    "list_dir": "read",
    "view_image": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "apply_patch": "edit",
    "grep": "search",
    "glob": "search",
    "web_fetch": "fetch",
    "fetch": "fetch",
    "update_plan": "think",
}
_VERBS = {
    "read_file": "Read",
    "list_dir": "List",
    "view_image": "View",
    "write_file": "Write",
    "edit_file": "Edit",
}
TITLE_LIMIT = 200


def kind(name: str) -> ToolKind:
    return _KINDS.get(name, "other")


def _text(arguments: Mapping[str, object], key: str) -> str | None:
    value = arguments.get(key)
    return value if isinstance(value, str) and value else None


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _patch_changes(
    arguments: Mapping[str, object],
) -> tuple[AddFile | DeleteFile | UpdateFile, ...]:
    text = _text(arguments, "input")
    if text is None:
        return ()
    try:
        return parse_patch(text)
    except PatchError:  # the tool's own result says what is wrong
        return ()


def title(name: str, arguments: Mapping[str, object]) -> str:
    if name == "shell" and (command := _text(arguments, "command")):
        shown = command.strip().splitlines()[0] if command.strip() else command
        return shown[:TITLE_LIMIT]
    if name in _VERBS:
        return f"{_VERBS[name]} {_text(arguments, 'path') or '.'}"[:TITLE_LIMIT]
    if name in ("grep", "glob") and (pattern := _text(arguments, "pattern")):
        where = _text(arguments, "path")
        return (f"{name} {pattern}" + (f" in {where}" if where else ""))[:TITLE_LIMIT]
    if name == "apply_patch" and (changes := _patch_changes(arguments)):
        return ("Patch " + ", ".join(change.path for change in changes))[:TITLE_LIMIT]
    if name.startswith("mcp__"):
        return name.removeprefix("mcp__").replace("__", ": ", 1)
    return name


def locations(name: str, arguments: Mapping[str, object], cwd: str) -> list[ToolCallLocation]:
    if name == "apply_patch":
        found: list[ToolCallLocation] = []
        for change in _patch_changes(arguments):
            target = change.move_to if isinstance(change, UpdateFile) and change.move_to else None
            found.append(ToolCallLocation(path=_absolute(target or change.path, cwd)))
        return found
    if name in ("shell",):
        return []
    path = _text(arguments, "path")
    if path is None or name not in (*_VERBS, "grep", "glob"):
        return []
    line = arguments.get("offset") if name == "read_file" else None
    return [
        ToolCallLocation(
            path=_absolute(path, cwd), line=line if isinstance(line, int) and line > 0 else None
        )
    ]


def diffs(name: str, arguments: Mapping[str, object], cwd: str) -> list[FileEditToolCallContent]:
    """The edit a call proposes, from its arguments alone (shown as it starts, before the
    daemon read any file): only what the arguments tell truly. An `edit_file` shows the
    replaced snippet, a patch its chunks and added files. A `write_file` and a patch's delete
    show nothing here: what they replace is the file's text, which the approval's `diffs` and
    the result's `changes` carry (`proposed`, `changes`)."""
    if name == "edit_file" and (path := _text(arguments, "path")):
        old = arguments.get("old_text")
        new = arguments.get("new_text")
        if isinstance(old, str) and isinstance(new, str):
            return [_diff(_absolute(path, cwd), old, new)]
    if name == "apply_patch":
        return [
            _patch_diff(change, cwd)
            for change in _patch_changes(arguments)
            if not isinstance(change, DeleteFile)
        ]
    return []


def _patch_diff(change: AddFile | UpdateFile, cwd: str) -> FileEditToolCallContent:
    if isinstance(change, AddFile):
        return _diff(_absolute(change.path, cwd), None, change.contents)
    old = "\n...\n".join("\n".join(chunk.old_lines) for chunk in change.chunks)
    new = "\n...\n".join("\n".join(chunk.new_lines) for chunk in change.chunks)
    return _diff(_absolute(change.move_to or change.path, cwd), old, new)


def _objects(value: object) -> list[Mapping[str, object]]:
    # Read from the wire, defensively: an entry that is not an object is skipped.
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def proposed(params: Mapping[str, object]) -> list[ToolContent]:
    """What an `approval/requested` says the call would change (its `diffs`, docs/protocol.md):
    the whole text before and after when the daemon sent them, else its unified diff as text
    (a file too large or not text)."""
    found: list[ToolContent] = []
    for diff in _objects(params.get("diffs")):
        path, kind = diff.get("path"), diff.get("kind")
        if not isinstance(path, str):
            continue
        old, new, unified = diff.get("oldText"), diff.get("newText"), diff.get("unified")
        if kind == "add" and isinstance(new, str):
            found.append(_diff(path, None, new))
        elif kind == "delete" and isinstance(old, str):
            found.append(_diff(path, old, ""))
        elif isinstance(old, str) and isinstance(new, str):
            found.append(_diff(path, old, new))
        elif isinstance(unified, str):
            found.append(_content(f"```diff\n{unified.rstrip()}\n```"))
    return found


def _diff(path: str, old: str | None, new: str) -> FileEditToolCallContent:
    return FileEditToolCallContent(type="diff", path=path, old_text=old, new_text=new)


def changes(item: Mapping[str, object], cwd: str) -> list[ToolContent]:
    """The files a tool result changed, as applied (its `changes`, docs/protocol.md
    "FileChange"): a diff of the whole text when the daemon sent both sides, else its unified
    diff as text (a big or binary file)."""
    found: list[ToolContent] = []
    for change in _objects(item.get("changes")):
        if not isinstance(change.get("path"), str):
            continue
        path = _absolute(str(change.get("movePath") or change["path"]), cwd)
        old, new, diff = change.get("oldText"), change.get("newText"), change.get("diff")
        kind = change.get("kind")
        if isinstance(new, str) or (kind == "delete" and isinstance(old, str)):
            found.append(
                _diff(
                    path, old if isinstance(old, str) else None, new if isinstance(new, str) else ""
                )
            )
        elif isinstance(diff, str):
            found.append(_content(f"```diff\n{diff.rstrip()}\n```"))
    return found


def _content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def output(name: str, text: str) -> ContentToolCallContent:
    """A tool's output as content: a shell's in a code block, so it keeps its layout."""
    return _content(f"```\n{text.rstrip()}\n```" if name == "shell" and text.strip() else text)
