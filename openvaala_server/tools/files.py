"""The file tools: `read_file`, `write_file`, `edit_file` and `list_dir`.

Relative paths resolve against the conversation's working directory. Mistakes the model makes (a
missing file, a wrong argument type, an ambiguous edit) come back as error results with a message
it can act on; they are never raised. The file system work runs in a thread of its own so a large
file or a stuck read stalls neither the daemon's event loop nor other calls (tools/threads.py).

Every path is checked against the call's confinement after resolving symlinks (tools/guard.py):
the daemon's private paths are out of reach, "read-only" writes nothing, "workspace" writes only
inside the working directory; FIFOs, sockets and devices are refused before anything opens them.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO

from openvaala_server.domain import images
from openvaala_server.domain.diffs import FileDiff, binary_diff, file_diff
from openvaala_server.domain.permissions import Access, Confinement
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output
from openvaala_server.tools.threads import run_in_own_thread

DEFAULT_READ_LINES = 2000
MAX_LIST_ENTRIES = 1000
# edit_file holds the whole file in memory, twice: past this it refuses rather than risk the daemon.
MAX_EDIT_BYTES = 16 * 1024 * 1024
# A NUL byte in the first block is how `grep` and `git` tell binary files apart too.
_BINARY_SNIFF_BYTES = 8192
# One line is read at most this much at a time: a file of one huge line (minified JS, a
# database dump) is cut, not loaded whole into the daemon's memory.
MAX_LINE_CHARS = 10_000


class ToolArgumentError(Exception):
    """An argument the model passed is missing, of the wrong type or out of range."""


class ToolFailure(Exception):
    """The operation failed for a reason the model should hear about (missing file, …)."""


# --- arguments ---------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}
    return names.get(type(value), "object" if isinstance(value, dict) else type(value).__name__)


def string_arg(arguments: JsonObject, name: str, *, default: str | None = None) -> str:
    value = arguments.get(name)
    if value is None:
        if default is None:
            raise ToolArgumentError(f"Missing required argument '{name}' (string).")
        return default
    if not isinstance(value, str):
        raise ToolArgumentError(f"Argument '{name}' must be a string, got {_type_name(value)}.")
    return value


def int_arg(arguments: JsonObject, name: str, *, default: int, minimum: int) -> int:
    value = arguments.get(name)
    if value is None:
        return default
    # JSON has one number type, so 10.0 is accepted as 10; bool (an int subclass) is not a number.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"Argument '{name}' must be an integer, got {_type_name(value)}.")
    if value < minimum:
        raise ToolArgumentError(f"Argument '{name}' must be at least {minimum}, got {value}.")
    return value


def bool_arg(arguments: JsonObject, name: str, *, default: bool) -> bool:
    value = arguments.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolArgumentError(f"Argument '{name}' must be a boolean, got {_type_name(value)}.")
    return value


def path_arg(arguments: JsonObject, ctx: ToolContext, *, default: str | None = None) -> Path:
    return _path_in(arguments, ctx.cwd, default=default)


def _path_in(arguments: JsonObject, cwd: Path, *, default: str | None = None) -> Path:
    raw = string_arg(arguments, "path", default=default)
    if not raw.strip():
        raise ToolArgumentError("Argument 'path' is empty.")
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def shown_path(path: Path, cwd: Path) -> str:
    """A path as a user reads it in an approval prompt: relative when inside the directory."""
    root = guard.real(cwd)
    return str(path.relative_to(root)) if path.is_relative_to(root) and path != root else str(path)


def _access(verb: str, arguments: JsonObject, cwd: Path, *, writes: bool) -> Access:
    try:
        path = _path_in(arguments, cwd, default="." if verb == "list" else None)
    except ToolArgumentError:
        # The call will fail on its arguments without touching anything.
        return Access(summary=verb)
    target = guard.real(path)
    summary = f"{verb} {shown_path(target, cwd)}"
    return Access(summary=summary, writes=(target,)) if writes else Access(summary=summary)


async def _run_in_thread(
    work: Callable[[], str | tuple[str, FileDiff] | ToolResult], ctx: ToolContext
) -> ToolResult:
    """Run blocking file work; turn the model's mistakes and OS errors into error results.

    Work that changed a file returns its `FileDiff` with the text, for clients to render."""
    changes: tuple[FileDiff, ...] = ()
    try:
        done = await run_in_own_thread(work, name="openvaala-file-tool")
    except (ToolArgumentError, ToolFailure, guard.Refused) as exc:
        return ToolResult(str(exc), is_error=True)
    except OSError as exc:
        detail = exc.strerror or str(exc)
        where = f": {exc.filename}" if exc.filename else ""
        return ToolResult(f"{detail}{where}", is_error=True)
    if isinstance(done, ToolResult):
        return done
    if isinstance(done, tuple):
        done, change = done
        changes = (change,)
    text, truncated = truncate_output(done, ctx.output_limit)
    return ToolResult(text, truncated=truncated, changes=changes)


def _object_schema(properties: JsonObject, required: list[str]) -> JsonObject:
    return {
        "type": "object",
        "properties": properties,
        "required": [*required],
        "additionalProperties": False,
    }


_PATH_PROPERTY: JsonObject = {
    "type": "string",
    "description": "File path, absolute or relative to the working directory.",
}


# --- shared file helpers -----------------------------------------------------------------------


def _check_regular_file(path: Path, real: Path) -> None:
    if not real.exists():
        raise ToolFailure(f"File not found: {path}")
    if real.is_dir():
        raise ToolFailure(f"{path} is a directory, not a file; use list_dir to see its entries.")


def _looks_binary(head: bytes) -> bool:
    return b"\0" in head


def _write_atomically(target: Path, data: bytes, ctx: ToolContext) -> None:
    """Write via a temporary file in the same directory and rename it over the target.

    Readers then see the old or the new content, never a half-written file. An existing file's
    permissions are kept; a new one gets the usual umask-derived mode (mkstemp's 0600 would not).
    `target` is a real path the confinement allows; the directory is checked again once open and
    used by descriptor, so a directory swapped for a symlink meanwhile cannot redirect the write.
    """
    if ctx.confinement.approved is None:  # else made link-free by checked_dir (tools/pinned.py)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError as exc:
            raise ToolFailure(
                f"Cannot create directory {target.parent}: it exists as a file."
            ) from exc
    folder = guard.checked_dir(target.parent, ctx.cwd, ctx.confinement)
    try:
        _write_in(folder, target, data)
    finally:
        os.close(folder)


def _write_in(folder: int, target: Path, data: bytes) -> None:
    name = target.name
    try:
        old = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISLNK(old.st_mode):
        raise ToolFailure(f"{target} changed into a symlink while being written; not written.")
    if old is not None:
        guard.refuse_special(target, old.st_mode)
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            if old is not None:
                os.fchmod(file.fileno(), stat.S_IMODE(old.st_mode))
            os.fsync(file.fileno())
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


# --- read_file ---------------------------------------------------------------------------------

_READ_SPEC = ToolSpec(
    name="read_file",
    description=(
        "Read a text file. Lines come numbered like `cat -n`. Reads up to "
        f"{DEFAULT_READ_LINES} lines by default; use offset and limit for other parts of long "
        "files. A PNG, JPEG, GIF or WebP image is returned as the image itself."
    ),
    parameters=_object_schema(
        {
            "path": _PATH_PROPERTY,
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start at (1-based, default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Number of lines to read (default {DEFAULT_READ_LINES}).",
            },
        },
        ["path"],
    ),
)


class ReadFileTool:
    @property
    def spec(self) -> ToolSpec:
        return _READ_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _access("read", arguments, cwd, writes=False)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        return await _run_in_thread(lambda: _read_file(arguments, ctx), ctx)


def read_args(arguments: JsonObject, ctx: ToolContext) -> tuple[Path, int, int]:
    path = path_arg(arguments, ctx)
    offset = int_arg(arguments, "offset", default=1, minimum=1)
    limit = int_arg(arguments, "limit", default=DEFAULT_READ_LINES, minimum=1)
    return path, offset, limit


def _read_file(arguments: JsonObject, ctx: ToolContext) -> str | ToolResult:
    path, offset, limit = read_args(arguments, ctx)
    real = guard.check_read(path, ctx.confinement)
    _check_regular_file(path, real)
    with os.fdopen(guard.open_for_reading(real, ctx.confinement), "rb") as raw:
        head = raw.read(_BINARY_SNIFF_BYTES)
        if images.sniff(head) is not None:
            size = os.fstat(raw.fileno()).st_size
            if size > images.MAX_IMAGE_BYTES:
                raise ToolFailure(
                    f"{path} is an image of {size} bytes; images may be at most "
                    f"{images.MAX_IMAGE_BYTES} bytes (5 MiB): not shown."
                )
            return _read_image(path, head + raw.read(images.MAX_IMAGE_BYTES + 1 - len(head)))
        if _looks_binary(head):
            size = os.fstat(raw.fileno()).st_size
            raise ToolFailure(f"{path} looks like a binary file ({size} bytes); not shown.")
        raw.seek(0)
        # newline="\n": only LF ends a line, so numbering matches `cat -n`, grep and editors.
        file = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="\n")
        return numbered(file, path, offset, limit)


def numbered(file: IO[str], path: Path, offset: int, limit: int) -> str:
    """The lines `offset`… of a text (at most `limit`), numbered like `cat -n`."""
    read = _bounded_lines(file)
    shown = list(islice(read, offset - 1, offset - 1 + limit))
    total = offset - 1 + len(shown) + sum(1 for _ in read)
    if not shown:
        if total == 0 and offset == 1:
            return f"({path} is empty)"
        raise ToolFailure(f"offset {offset} is past the end of {path} ({total} lines).")
    lines = [f"{number:6}\t{_strip_eol(line)}" for number, line in enumerate(shown, start=offset)]
    last = offset + len(shown) - 1
    if last < total:
        lines.append(f"[… lines {last + 1}-{total} not shown; pass offset={last + 1} to read on …]")
    return "\n".join(lines)


def _read_image(path: Path, data: bytes) -> ToolResult:
    """An image file: its bytes go to the model as an image (a model without vision gets the
    text, with a notice that the image is not shown: models/image_parts.py)."""
    try:
        image = images.check(data, what=str(path), name=path.name)
    except images.ImageError as exc:
        raise ToolFailure(f"{exc}; not shown.") from None
    text = f"{path} is an image: {images.placeholder(image.ref())}"
    return ToolResult(text, attachments=(image,))


def _bounded_lines(file: IO[str]) -> Iterator[str]:
    """The file's lines, each cut at MAX_LINE_CHARS with a note of how much was left out."""
    while line := file.readline(MAX_LINE_CHARS):
        if len(line) == MAX_LINE_CHARS and not line.endswith("\n"):
            rest = 0
            while more := file.readline(MAX_LINE_CHARS):
                if more.endswith("\n"):
                    rest += len(more) - 1
                    break
                rest += len(more)
            if rest:
                line += f" [… {rest} more characters of this line not shown …]\n"
        yield line


def _strip_eol(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


# --- write_file --------------------------------------------------------------------------------

_WRITE_SPEC = ToolSpec(
    name="write_file",
    description=(
        "Create or overwrite a file with the given content (UTF-8), creating parent directories "
        "as needed. Prefer edit_file for changing part of an existing file."
    ),
    parameters=_object_schema(
        {
            "path": _PATH_PROPERTY,
            "content": {"type": "string", "description": "The complete new content."},
        },
        ["path", "content"],
    ),
)


class WriteFileTool:
    @property
    def spec(self) -> ToolSpec:
        return _WRITE_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _access("write", arguments, cwd, writes=True)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        return await _run_in_thread(lambda: _write_file(arguments, ctx), ctx)


def _write_file(arguments: JsonObject, ctx: ToolContext) -> tuple[str, FileDiff]:
    path = path_arg(arguments, ctx)
    content = string_arg(arguments, "content")
    target = guard.check_write(path, ctx.cwd, ctx.confinement)
    if target.is_dir():
        raise ToolFailure(f"{path} is a directory; cannot write a file there.")
    existed = target.exists()
    shown = str(arguments["path"])
    # What it replaces, for the result's diff (clients show the real old text).
    change = _replaced(target, content, shown, ctx.confinement) if existed else None
    data = content.encode("utf-8")
    _write_atomically(target, data, ctx)
    verb = "Overwrote" if existed else "Created"
    return f"{verb} {path} ({len(data)} bytes written).", change or file_diff(None, content, shown)


def _replaced(target: Path, content: str, shown: str, confinement: Confinement) -> FileDiff:
    """The change of a write over an existing file: a text diff, or named only when the old
    file is not text, too large to hold, or not a regular file (the write replaces it all the
    same)."""
    try:
        with os.fdopen(guard.open_for_reading(target, confinement), "rb") as file:
            data = file.read(MAX_EDIT_BYTES + 1)
    except (OSError, guard.Refused):
        return binary_diff(shown, "update")
    if len(data) > MAX_EDIT_BYTES or _looks_binary(data[:_BINARY_SNIFF_BYTES]):
        return binary_diff(shown, "update")
    try:
        old = data.decode("utf-8")
    except UnicodeDecodeError:
        return binary_diff(shown, "update")
    return file_diff(old, content, shown)


# --- edit_file ---------------------------------------------------------------------------------

_EDIT_SPEC = ToolSpec(
    name="edit_file",
    description=(
        "Replace exact text in a file. old_text must match the file exactly (whitespace "
        "included) and, unless replace_all is true, occur exactly once; include surrounding "
        "lines to make it unique."
    ),
    parameters=_object_schema(
        {
            "path": _PATH_PROPERTY,
            "old_text": {"type": "string", "description": "The exact text to replace."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence instead of requiring one (default false).",
            },
        },
        ["path", "old_text", "new_text"],
    ),
)


class EditFileTool:
    @property
    def spec(self) -> ToolSpec:
        return _EDIT_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _access("edit", arguments, cwd, writes=True)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        return await _run_in_thread(lambda: _edit_file(arguments, ctx), ctx)


def _edit_file(arguments: JsonObject, ctx: ToolContext) -> tuple[str, FileDiff]:
    path, target, content, changed, count = edited(arguments, ctx.cwd, ctx.confinement)
    _write_atomically(target, changed.encode("utf-8"), ctx)
    plural = "occurrence" if count == 1 else "occurrences"
    shown = str(arguments["path"])
    return f"Replaced {count} {plural} in {path}.", file_diff(content, changed, shown)


def edited(
    arguments: JsonObject, cwd: Path, confinement: Confinement
) -> tuple[Path, Path, str, str, int]:
    """What an `edit_file` call would make of its file, written or not: the path as given, the
    real path, the text before and after, and how many occurrences were replaced."""
    path = _path_in(arguments, cwd)
    edit_args(arguments)
    target = guard.check_write(path, cwd, confinement)
    content = _read_text_for_edit(path, target, confinement)
    changed, count = replaced_in(content, arguments, path)
    return path, target, content, changed, count


def edit_args(arguments: JsonObject) -> tuple[str, str, bool]:
    """An `edit_file` call's old_text, new_text and replace_all, checked."""
    old_text = string_arg(arguments, "old_text")
    new_text = string_arg(arguments, "new_text")
    replace_all = bool_arg(arguments, "replace_all", default=False)
    if not old_text:
        raise ToolArgumentError("Argument 'old_text' is empty; use write_file to create files.")
    if old_text == new_text:
        raise ToolArgumentError("old_text and new_text are identical; nothing to change.")
    return old_text, new_text, replace_all


def replaced_in(content: str, arguments: JsonObject, path: Path) -> tuple[str, int]:
    """The text after an `edit_file` call's replacement, and how many places it replaced."""
    old_text, new_text, replace_all = edit_args(arguments)
    old_text, new_text = _match_line_endings(content, old_text, new_text)
    count = content.count(old_text)
    if count == 0:
        raise ToolFailure(
            f"old_text was not found in {path}. It must match exactly, whitespace and "
            "indentation included; read the file again to copy it."
        )
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"old_text occurs {count} times in {path}. Include more surrounding text to make "
            "it unique, or pass replace_all=true to replace every occurrence."
        )
    return content.replace(old_text, new_text), count


def _read_text_for_edit(path: Path, real: Path, confinement: Confinement) -> str:
    _check_regular_file(path, real)
    with os.fdopen(guard.open_for_reading(real, confinement), "rb") as file:
        data = file.read(MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise ToolFailure(
            f"{path} is larger than {MAX_EDIT_BYTES // (1024 * 1024)} MiB; too large to edit "
            "here (use the shell tool)."
        )
    if _looks_binary(data[:_BINARY_SNIFF_BYTES]):
        raise ToolFailure(f"{path} looks like a binary file; cannot edit it as text.")
    try:
        # Strict, and no newline translation: rewriting must not alter bytes outside the edit.
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolFailure(f"{path} is not valid UTF-8 ({exc.reason}); cannot edit it.") from exc


def _match_line_endings(content: str, old_text: str, new_text: str) -> tuple[str, str]:
    # Models write "\n"; a CRLF file would then never match. Use the file's endings instead.
    if "\r\n" in content and "\r\n" not in old_text and old_text not in content:
        return old_text.replace("\n", "\r\n"), new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    return old_text, new_text


# --- list_dir ----------------------------------------------------------------------------------

_LIST_SPEC = ToolSpec(
    name="list_dir",
    description=(
        "List a directory's entries, sorted by name; directories end with '/'. At most "
        f"{MAX_LIST_ENTRIES} entries are shown."
    ),
    parameters=_object_schema(
        {
            "path": {
                "type": "string",
                "description": "Directory, absolute or relative to the working directory "
                "(default: the working directory).",
            }
        },
        [],
    ),
)


class ListDirTool:
    @property
    def spec(self) -> ToolSpec:
        return _LIST_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _access("list", arguments, cwd, writes=False)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        return await _run_in_thread(lambda: _list_dir(arguments, ctx), ctx)


def _list_dir(arguments: JsonObject, ctx: ToolContext) -> str:
    path = path_arg(arguments, ctx, default=".")
    real = guard.check_read(path, ctx.confinement)
    if not real.exists():
        raise ToolFailure(f"Directory not found: {path}")
    if not real.is_dir():
        raise ToolFailure(f"{path} is a file, not a directory; use read_file to read it.")
    with os.scandir(real) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
        names = [_entry_name(entry) for entry in entries]
    if not names:
        return f"({path} is empty)"
    shown = names[:MAX_LIST_ENTRIES]
    if len(names) > MAX_LIST_ENTRIES:
        shown.append(f"[… {len(names) - MAX_LIST_ENTRIES} more entries not shown …]")
    return "\n".join(shown)


def _entry_name(entry: os.DirEntry[str]) -> str:
    try:
        is_dir = entry.is_dir()  # follows symlinks: a link to a directory lists like one
    except OSError:
        is_dir = False
    return entry.name + "/" if is_dir else entry.name
