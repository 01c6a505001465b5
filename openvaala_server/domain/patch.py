"""The `*** Begin Patch` format of the `apply_patch` tool: parsing it and applying its hunks.

This is the format OpenAI's models are trained to write (Codex's apply_patch grammar):

    *** Begin Patch
    *** Add File: path            then every line of the new file, each prefixed with "+"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path         (optional, right after Update File)
    @@ def some_function():       a chunk; the text after "@@ " is one line to find first
     context line                 " " keeps, "-" removes, "+" adds a line
    -old line
    +new line
    *** End of File               (optional: the chunk ends at the end of the file)
    *** End Patch

Pure: text in, values or errors out, no file system. The tool (tools/patch.py) reads the files,
asks `apply_chunks` for every new content before writing any, then writes them all or none.
Lines are matched tolerantly like Codex: exactly, then ignoring trailing whitespace, then ignoring
whitespace on both sides, because models often get indentation or trailing spaces slightly wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openvaala_server.domain.line_diff import unified_lines

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"


class PatchError(ValueError):
    """The patch cannot be used; the message says what is wrong, for the model to fix."""


class PatchSyntaxError(PatchError):
    """The patch text does not follow the grammar (names the line)."""


class HunkMismatch(PatchError):
    """A chunk's lines are not in the file (names the file, the chunk and the expected lines)."""


@dataclass(frozen=True)
class Chunk:
    """One `@@` section of an Update File: `old_lines` become `new_lines`."""

    context: str | None  # a line to find first (a class or function header), if given
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    end_of_file: bool  # the old lines must be the last lines of the file
    line: int  # where the chunk starts in the patch (1-based), for error messages
    # The kind of each line in order (" ", "-" or "+"): context lines keep the file's own text.
    ops: str


@dataclass(frozen=True)
class AddFile:
    path: str
    contents: str


@dataclass(frozen=True)
class DeleteFile:
    path: str


@dataclass(frozen=True)
class UpdateFile:
    path: str
    move_to: str | None
    chunks: tuple[Chunk, ...]


FileChange = AddFile | DeleteFile | UpdateFile


# --- parsing -------------------------------------------------------------------------------------


def parse_patch(text: str) -> tuple[FileChange, ...]:
    """The file changes of a patch, in order; `PatchSyntaxError` names the first bad line."""
    lines = _strip_heredoc(text.strip().splitlines())
    if not lines or lines[0].strip() != BEGIN:
        raise PatchSyntaxError(f"The first line of the patch must be '{BEGIN}'.")
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchSyntaxError(f"The last line of the patch must be '{END}'.")
    body = lines[1:-1]
    changes: list[FileChange] = []
    index = 0
    while index < len(body):
        if not body[index].strip():  # blank lines between file sections
            index += 1
            continue
        change, used = _parse_file_section(body, index)
        changes.append(change)
        index += used
    if not changes:
        raise PatchSyntaxError("The patch changes no file: it has no Add, Update or Delete File.")
    return tuple(changes)


def _strip_heredoc(lines: list[str]) -> list[str]:
    # Models trained on the shell form sometimes keep its heredoc: <<'EOF' … EOF.
    if (
        len(lines) >= 4
        and lines[0].strip() in ("<<EOF", "<<'EOF'", '<<"EOF"')
        and lines[-1].strip().endswith("EOF")
    ):
        return lines[1:-1]
    return lines


def _parse_file_section(body: list[str], start: int) -> tuple[FileChange, int]:
    header = body[start].strip()
    number = start + 2  # 1-based, after the Begin Patch line
    if _is(header, ADD):
        path = _path(header, ADD, number)
        added: list[str] = []
        for line in body[start + 1 :]:
            if not line.startswith("+"):
                break
            added.append(line[1:] + "\n")
        return AddFile(path, "".join(added)), 1 + len(added)
    if _is(header, DELETE):
        return DeleteFile(_path(header, DELETE, number)), 1
    if _is(header, UPDATE):
        return _parse_update(body, start, _path(header, UPDATE, number))
    raise PatchSyntaxError(
        f"Line {number}: '{header}' is not a file header. Each file starts with "
        f"'{ADD}PATH', '{UPDATE}PATH' or '{DELETE}PATH'."
    )


def _is(header: str, marker: str) -> bool:
    return header.startswith(marker) or header == marker.strip()


def _path(header: str, marker: str, number: int) -> str:
    path = header.removeprefix(marker.strip()).strip()
    if not path:
        raise PatchSyntaxError(f"Line {number}: '{marker.strip()}' has no path.")
    return path


def _parse_update(body: list[str], start: int, path: str) -> tuple[UpdateFile, int]:
    index = start + 1
    move_to = None
    if index < len(body) and _is(body[index].strip(), MOVE):
        move_to = _path(body[index].strip(), MOVE, index + 2)
        index += 1
    chunks: list[Chunk] = []
    while index < len(body):
        line = body[index]
        if not line.strip():
            index += 1
            continue
        if line.startswith("***"):
            break
        chunk, used = _parse_chunk(body, index, first=not chunks)
        chunks.append(chunk)
        index += used
    if not chunks:
        raise PatchSyntaxError(
            f"Line {start + 2}: '{UPDATE}{path}' has no changes (expected '@@' chunks with "
            "' ', '-' and '+' lines)."
        )
    return UpdateFile(path, move_to, tuple(chunks)), index - start


def _parse_chunk(body: list[str], start: int, *, first: bool) -> tuple[Chunk, int]:
    header = body[start]
    number = start + 2
    context: str | None = None
    index = start
    if header.strip() == "@@":
        index += 1
    elif header.startswith("@@ "):
        context = header[3:]
        index += 1
    elif not first:
        # The first chunk may omit its "@@"; later ones must start with one.
        raise PatchSyntaxError(
            f"Line {number}: expected a chunk starting with '@@', got '{header}'."
        )
    old: list[str] = []
    new: list[str] = []
    ops: list[str] = []
    end_of_file = False
    while index < len(body):
        line = body[index]
        if line.strip() == END_OF_FILE:
            end_of_file = True
            index += 1
            break
        if line == "":  # an empty context line whose leading space got lost
            old.append("")
            new.append("")
            ops.append(" ")
        elif line[0] in " -+":
            ops.append(line[0])
            if line[0] != "+":
                old.append(line[1:])
            if line[0] != "-":
                new.append(line[1:])
        elif line.startswith(("@@", "***")):
            break
        else:
            raise PatchSyntaxError(
                f"Line {index + 2}: '{line}' in the chunk of '{_chunk_name(context)}' must start "
                "with ' ' (context), '-' (removed) or '+' (added)."
            )
        index += 1
    if not old and not new:
        raise PatchSyntaxError(f"Line {number}: the chunk has no lines.")
    chunk = Chunk(context, tuple(old), tuple(new), end_of_file, number, "".join(ops))
    return chunk, index - start


def _chunk_name(context: str | None) -> str:
    return f"@@ {context}" if context else "@@"


# --- applying ------------------------------------------------------------------------------------


def apply_chunks(original: str, chunks: Sequence[Chunk], path: str) -> str:
    """`original` with every chunk applied, or `HunkMismatch` naming the first that does not."""
    newline = "\r\n" if "\r\n" in original else "\n"
    lines = original.split(newline)
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it is not an empty line
    replacements: list[tuple[int, int, tuple[str, ...]]] = []
    cursor = 0
    for number, chunk in enumerate(chunks, start=1):
        if chunk.context is not None:
            found = seek(lines, (chunk.context,), cursor, end_of_file=False)
            if found is None:
                raise _mismatch(path, number, chunk, (chunk.context,), "context line")
            cursor = found + 1
        if not chunk.old_lines:
            # Pure addition: at the end of the file (or right after the context line).
            at = cursor if chunk.context is not None else len(lines)
            replacements.append((at, 0, chunk.new_lines))
            continue
        old, ops = chunk.old_lines, chunk.ops
        found = seek(lines, old, cursor, end_of_file=chunk.end_of_file)
        if found is None and old[-1] == "":
            # A trailing empty line in the chunk often stands for the file's final newline.
            old, ops = old[:-1], _drop_last_old(ops)
            found = seek(lines, old, cursor, end_of_file=chunk.end_of_file) if old else None
        if found is None:
            raise _mismatch(path, number, chunk, chunk.old_lines, "lines")
        replacements.append((found, len(old), _replacement(lines[found:], ops, chunk.new_lines)))
        cursor = found + len(old)
    for at, count, new in sorted(replacements, reverse=True):
        lines[at : at + count] = new
    return newline.join([*lines, ""]) if lines else ""


def _drop_last_old(ops: str) -> str:
    at = max(ops.rfind(" "), ops.rfind("-"))
    return ops[:at] + ops[at + 1 :]


def _replacement(matched: Sequence[str], ops: str, new_lines: Sequence[str]) -> tuple[str, ...]:
    """The new lines, with each context line as the file has it (its own whitespace kept)."""
    result: list[str] = []
    old_at = new_at = 0
    for op in ops:
        if op == " ":
            result.append(matched[old_at])
        elif op == "+":
            result.append(new_lines[new_at])
        old_at += op != "+"
        new_at += op != "-"
    return tuple(result)


def _mismatch(
    path: str, number: int, chunk: Chunk, expected: Sequence[str], what: str
) -> HunkMismatch:
    shown = "\n".join(f"  {line}" for line in expected)
    return HunkMismatch(
        f"Chunk {number} ({_chunk_name(chunk.context)}, patch line {chunk.line}) of {path} does "
        f"not apply: these expected {what} are not in the file"
        f"{' at its end' if chunk.end_of_file and what == 'lines' else ''}:\n{shown}\n"
        "Read the file again and copy its current lines into the chunk."
    )


_LOOSENESS: tuple[Callable[[str], str], ...] = (
    lambda line: line,
    str.rstrip,
    str.strip,
)


def seek(
    lines: Sequence[str], pattern: Sequence[str], start: int, *, end_of_file: bool
) -> int | None:
    """Where `pattern` occurs in `lines` from `start`, matching ever more loosely; or None.

    With `end_of_file` the pattern is tried at the end of the file first.
    """
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    last = len(lines) - len(pattern)
    starts = [last] if end_of_file and last >= start else []
    starts += range(start, last + 1)
    for loosen in _LOOSENESS:
        wanted = [loosen(line) for line in pattern]
        for at in starts:
            if all(loosen(lines[at + k]) == wanted[k] for k in range(len(pattern))):
                return at
    return None


# --- showing -------------------------------------------------------------------------------------


def unified_diff(old: str | None, new: str | None, old_path: str, new_path: str) -> str:
    """A git-style diff of one file (None: the file does not exist on that side)."""
    header = [f"diff --git a/{old_path} b/{new_path}"]
    if old is None:
        header.append("new file")
    elif new is None:
        header.append("deleted file")
    elif old_path != new_path:
        header += [f"rename from {old_path}", f"rename to {new_path}"]
    body = unified_lines(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        "/dev/null" if old is None else f"a/{old_path}",
        "/dev/null" if new is None else f"b/{new_path}",
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body
    )
    return "\n".join(header) + "\n" + text
