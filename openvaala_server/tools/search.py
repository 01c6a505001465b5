"""The search tools: `grep` (lines matching a regular expression) and `glob` (paths by pattern).

`grep` runs ripgrep when it is installed, as a subprocess with the tool environment (the
daemon's secrets removed, no user ripgrep config), and otherwise searches in Python in a thread
of its own; both give the same output, `path:line:text` for a match and `path-line-text` for a
context line, paths relative to the working directory. Both tools walk the tree as ripgrep does
(tools/walk.py): .gitignore respected, .git skipped, links not followed. The daemon's protected
paths are never searched: a search inside one is refused, and one inside the searched tree is
excluded. Output is bounded by a number of matches and by the result limit, with a notice
saying what was left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from openvaala_server.domain.permissions import Access, Confinement
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools import guard, sandbox
from openvaala_server.tools.base import ToolContext, ToolResult
from openvaala_server.tools.files import (
    ToolArgumentError,
    ToolFailure,
    bool_arg,
    int_arg,
    string_arg,
)
from openvaala_server.tools.threads import run_in_own_thread
from openvaala_server.tools.walk import glob_filter, walk_files

if TYPE_CHECKING:
    import pathspec

DEFAULT_MATCHES = 100
MAX_MATCHES = 2000
MAX_CONTEXT = 20
DEFAULT_PATHS = 100
MAX_PATHS = 5000
# Longer lines (minified files) are cut to this many characters.
MAX_LINE_CHARS = 500
# The fallback reads each file whole; larger ones are left out (and named in the result).
MAX_FALLBACK_BYTES = 64 * 1024 * 1024
# ripgrep's output lines are read whole; a line cut by --max-columns stays far below this.
_READ_LIMIT = 1 << 22


def find_ripgrep() -> str | None:
    return shutil.which("rg")


# --- arguments and places ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Place:
    """Where a search runs: the real directory (or file) and how its paths are shown."""

    root: Path  # real path of the directory searched, or of the file's directory
    file: str | None  # the one file searched, by name in `root`, if the path is a file
    prefix: str  # put before a path relative to `root` to show it (relative to the cwd)
    protected: frozenset[str]  # real paths of the protected files and directories


def _place(arguments: JsonObject, ctx: ToolContext) -> _Place:
    raw = string_arg(arguments, "path", default=".")
    if not raw.strip():
        raise ToolArgumentError("Argument 'path' is empty.")
    given = Path(raw).expanduser()
    path = given if given.is_absolute() else ctx.cwd / given
    real = guard.check_read(path, ctx.confinement)
    if not real.exists():
        raise ToolFailure(f"Path not found: {raw}")
    file = None
    if not real.is_dir():
        # A FIFO or a device would block the search (ripgrep's too) until something wrote.
        guard.refuse_special(path, real.stat().st_mode)
        real, file = real.parent, real.name
    cwd = guard.real(ctx.cwd)
    if real == cwd:
        prefix = ""
    elif real.is_relative_to(cwd):
        prefix = str(real.relative_to(cwd)) + "/"
    else:
        prefix = str(real).rstrip("/") + "/"
    return _Place(real, file, prefix, _protected(ctx.confinement))


def _protected(confinement: Confinement) -> frozenset[str]:
    return frozenset(str(guard.real(path)) for path in confinement.protected)


def _summary(verb: str, arguments: JsonObject) -> Access:
    pattern = arguments.get("pattern")
    path = arguments.get("path") or "."
    return Access(summary=f"{verb} {pattern!r} in {path}" if isinstance(pattern, str) else verb)


def _schema(properties: JsonObject, required: list[str]) -> JsonObject:
    return {
        "type": "object",
        "properties": properties,
        "required": [*required],
        "additionalProperties": False,
    }


_PATH_PROPERTY: JsonObject = {
    "type": "string",
    "description": "Directory or file to search, absolute or relative to the working directory "
    "(default: the working directory).",
}
_GLOB_HELP = (
    "gitignore syntax: '*.py' matches at any depth, 'src/**/*.ts' under src, '*.{ts,tsx}' either"
)


# --- grep --------------------------------------------------------------------------------------

_GREP_SPEC = ToolSpec(
    name="grep",
    description=(
        "Search file contents for a regular expression (ripgrep syntax), respecting .gitignore. "
        "Prints matching lines as path:line:text (context lines as path-line-text), paths "
        f"relative to the working directory; at most {DEFAULT_MATCHES} matches unless "
        "max_results says otherwise. Prefer this over running grep or rg with the shell tool."
    ),
    parameters=_schema(
        {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": _PATH_PROPERTY,
            "glob": {
                "type": "string",
                "description": f"Only search files whose path matches this glob ({_GLOB_HELP}).",
            },
            "case_insensitive": {
                "type": "boolean",
                "description": "Ignore case (default false).",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "description": "Lines of context to show before and after each match (default 0).",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_MATCHES,
                "description": f"Most matching lines to show (default {DEFAULT_MATCHES}).",
            },
        },
        ["pattern"],
    ),
)


@dataclass(frozen=True)
class _Query:
    pattern: str
    glob: str | None
    case_insensitive: bool
    context: int
    max_results: int


def _query(arguments: JsonObject) -> _Query:
    pattern = string_arg(arguments, "pattern")
    if not pattern:
        raise ToolArgumentError("Argument 'pattern' is empty.")
    glob = arguments.get("glob")
    if glob is not None and (not isinstance(glob, str) or not glob.strip()):
        raise ToolArgumentError("Argument 'glob' must be a non-empty string.")
    context = int_arg(arguments, "context", default=0, minimum=0)
    max_results = int_arg(arguments, "max_results", default=DEFAULT_MATCHES, minimum=1)
    if context > MAX_CONTEXT:
        raise ToolArgumentError(f"Argument 'context' must be at most {MAX_CONTEXT}.")
    if max_results > MAX_MATCHES:
        raise ToolArgumentError(f"Argument 'max_results' must be at most {MAX_MATCHES}.")
    return _Query(
        pattern=pattern,
        glob=glob,
        case_insensitive=bool_arg(arguments, "case_insensitive", default=False),
        context=context,
        max_results=max_results,
    )


@dataclass
class _Hits:
    """Lines found, grouped by file (path relative to the searched root), in the order found."""

    limit: int
    context: int
    files: dict[str, list[tuple[int, bool, str]]] = field(default_factory=dict)
    matches: int = 0
    more: bool = False  # matches past the limit exist and were not collected
    too_large: list[str] = field(default_factory=list)  # files the fallback did not read

    def add(self, path: str, number: int, is_match: bool, text: str) -> bool:
        """Record one line; False once the limit is passed (the caller stops searching)."""
        lines = self.files.setdefault(path, [])
        if is_match:
            if self.matches == self.limit:
                self.more = True
                self._drop_after_last_match(path)
                return False
            self.matches += 1
        lines.append((number, is_match, text))
        return True

    def _drop_after_last_match(self, path: str) -> None:
        # Context lines read after the last kept match belong to it only if close enough.
        lines = self.files[path]
        last = max((number for number, is_match, _ in lines if is_match), default=None)
        if last is None:
            del self.files[path]
        else:
            self.files[path] = [line for line in lines if line[0] <= last + self.context]


class GrepTool:
    def __init__(self, ripgrep: Callable[[], str | None] = find_ripgrep) -> None:
        # Looked up at each call, so installing ripgrep needs no restart (and tests can choose).
        self._ripgrep = ripgrep

    @property
    def spec(self) -> ToolSpec:
        return _GREP_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _summary("grep", arguments)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        try:
            query = _query(arguments)
            place = _place(arguments, ctx)
            rg = self._ripgrep()
            if rg is not None:
                hits = await _ripgrep(rg, query, place, ctx.confinement)
            else:
                hits = await _in_thread(query, place)
        except (ToolArgumentError, ToolFailure, guard.Refused) as exc:
            return ToolResult(str(exc), is_error=True)
        return _grep_result(hits, query, place, ctx.output_limit)


async def _in_thread(query: _Query, place: _Place) -> _Hits:
    stop = threading.Event()
    try:
        return await run_in_own_thread(lambda: _python_grep(query, place, stop), "openvaala-grep")
    except asyncio.CancelledError:
        stop.set()  # an interrupted search stops at the next file instead of running on
        raise


def _grep_result(hits: _Hits, query: _Query, place: _Place, limit: int) -> ToolResult:
    out: list[str] = []
    size = shown = 0
    cut = False
    for line, is_match in _grep_lines_shown(hits, query.context, place.prefix):
        size += len(line) + 1
        if size > limit:
            cut = True
            break
        out.append(line)
        shown += is_match
    if not out:
        out.append(f"No matches for {query.pattern!r}.")
    if cut:
        out.append(
            f"[… output cut at {limit} characters: {hits.matches - shown} more matching lines "
            "not shown; narrow the pattern, path or glob …]"
        )
    elif hits.more:
        out.append(
            f"[… stopped at {hits.matches} matching lines; there are more: narrow the pattern, "
            "path or glob, or raise max_results …]"
        )
    if hits.too_large:
        names = ", ".join(place.prefix + name for name in hits.too_large[:5])
        more = f" and {len(hits.too_large) - 5} more" if len(hits.too_large) > 5 else ""
        out.append(
            f"[{len(hits.too_large)} files over {MAX_FALLBACK_BYTES // (1024 * 1024)} MiB were "
            f"not searched ({names}{more}): without ripgrep, grep reads each file whole]"
        )
    return ToolResult("\n".join(out), truncated=cut or hits.more or bool(hits.too_large))


def _grep_lines_shown(hits: _Hits, context: int, prefix: str) -> Iterator[tuple[str, bool]]:
    """Each output line like ripgrep's (with "--" between groups of context), and if a match."""
    first = True
    for path in sorted(hits.files):
        previous: int | None = None
        for number, is_match, text in hits.files[path]:
            if context and not first and (previous is None or number > previous + 1):
                yield "--", False
            first = False
            previous = number
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + f"… [{len(text) - MAX_LINE_CHARS} more characters]"
            mark = ":" if is_match else "-"
            yield f"{prefix}{path}{mark}{number}{mark}{text}", is_match


# --- grep with ripgrep -------------------------------------------------------------------------

_RG_LINE = re.compile(rb"(\d+)([:-])(.*)", re.DOTALL)


def _ripgrep_argv(rg: str, query: _Query, place: _Place) -> list[str]:
    argv = [
        rg,
        "--no-config",  # the user's RIPGREP_CONFIG_PATH would change the output format
        "--no-require-git",  # .gitignore counts outside a git repository too, as in walk.py
        "--hidden",
        "--null",
        "--line-number",
        "--with-filename",
        "--color=never",
        "--no-messages",
        f"--max-columns={MAX_LINE_CHARS * 4}",
        "--max-columns-preview",
        "--glob=!.git",
    ]
    if query.case_insensitive:
        argv.append("--ignore-case")
    if query.context:
        argv.append(f"--context={query.context}")
    if query.glob is not None:
        argv.append(f"--glob={query.glob}")  # ripgrep reads braces itself
    # Last, so they win over the model's glob: the protected paths inside the tree.
    root = str(place.root)
    for protected in place.protected:
        if protected.startswith(root + "/"):
            argv.append("--glob=!/" + _escape_glob(protected[len(root) + 1 :]))
    argv += ["--regexp", query.pattern]
    if place.file is not None:
        argv += ["--", place.file]
    return argv


def _escape_glob(path: str) -> str:
    return re.sub(r"([\\*?\[\]{}!])", r"\\\1", path)


async def _ripgrep(rg: str, query: _Query, place: _Place, confinement: Confinement) -> _Hits:
    env = sandbox.scrubbed_env(confinement.hidden_env)
    process = await asyncio.create_subprocess_exec(
        *_ripgrep_argv(rg, query, place),
        cwd=place.root,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_READ_LIMIT,
        start_new_session=True,
    )
    hits = _Hits(query.max_results, query.context)
    assert process.stdout is not None and process.stderr is not None
    stderr_read: list[bytes] = []
    errors = process.stderr

    async def read_errors() -> None:
        stderr_read.append(await errors.read())

    read_all = False
    # The stderr reader is a task of this call's own group: it cannot outlive the search.
    async with anyio.create_task_group() as group:
        group.start_soon(read_errors, name="rg-stderr")
        try:
            async for raw in process.stdout:
                if raw.startswith(b"--") and b"\0" not in raw:
                    continue
                name, _, rest = raw.rstrip(b"\n").partition(b"\0")
                parsed = _RG_LINE.fullmatch(rest)
                if parsed is None:
                    continue  # "binary file matches" and such
                path = os.fsdecode(name)
                text = parsed[3].decode("utf-8", errors="replace").removesuffix("\r")
                if not hits.add(path, int(parsed[1]), parsed[2] == b":", text):
                    break
            else:
                read_all = True
        finally:
            # Only a search stopped early (or interrupted) is killed: killing one that has exited
            # would reap it behind asyncio's back, and its exit status would be lost. Shielded:
            # an interrupted turn's scope stays cancelled, and the process must still be reaped.
            with anyio.CancelScope(shield=True):
                if not read_all and process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                code = await process.wait()
    stderr = b"".join(stderr_read)
    if code == 2 and not hits.files and not hits.more:
        message = stderr.decode("utf-8", errors="replace").strip()
        if "regex parse error" in message:
            raise ToolFailure(f"Invalid regular expression {query.pattern!r}: {message}")
        raise ToolFailure(f"grep failed: {message or 'ripgrep exited with status 2'}")
    return hits


# --- grep in Python ----------------------------------------------------------------------------


def _python_grep(query: _Query, place: _Place, stop: threading.Event) -> _Hits:
    flags = re.IGNORECASE if query.case_insensitive else 0
    try:
        line_regex = re.compile(query.pattern, flags)
        file_regex = re.compile(query.pattern, flags | re.MULTILINE)
    except re.error as exc:
        raise ToolFailure(f"Invalid regular expression {query.pattern!r}: {exc}.") from exc
    hits = _Hits(query.max_results, query.context)
    for relative, path in _python_files(query, place):
        if stop.is_set():
            break
        try:
            with open(path, "rb") as file:
                if os.fstat(file.fileno()).st_size > MAX_FALLBACK_BYTES:
                    hits.too_large.append(relative)
                    continue
                data = file.read()
        except OSError:
            continue
        if b"\0" in data:
            continue  # binary, as ripgrep decides
        text = data.decode("utf-8", errors="replace")
        # Most files do not match at all: one search of the whole text tells, without splitting.
        if file_regex.search(text) is None:
            continue
        if not _grep_lines(relative, text, line_regex, hits):
            break
    return hits


def _python_files(query: _Query, place: _Place) -> Iterable[tuple[str, str]]:
    if place.file is not None:
        yield place.file, str(place.root / place.file)
        return
    wanted: pathspec.PathSpec[pathspec.Pattern] | None = (
        None if query.glob is None else glob_filter(query.glob)
    )
    for relative, entry in walk_files(place.root, place.protected):
        if wanted is None or wanted.match_file(relative):
            yield relative, entry.path


def _grep_lines(path: str, text: str, regex: re.Pattern[str], hits: _Hits) -> bool:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    context = hits.context
    last_shown = -1  # index of the last line recorded, so context lines are not repeated
    for index, line in enumerate(lines):
        if regex.search(line) is None:
            continue
        for before in range(max(index - context, last_shown + 1), index):
            hits.add(path, before + 1, False, lines[before].removesuffix("\r"))
        if not hits.add(path, index + 1, True, line.removesuffix("\r")):
            return False
        last_shown = index
        after_end = min(index + context, len(lines) - 1)
        for after in range(index + 1, after_end + 1):
            if regex.search(lines[after]) is not None:
                break  # the next match shows it, as a match
            hits.add(path, after + 1, False, lines[after].removesuffix("\r"))
            last_shown = after
    return True


# --- glob --------------------------------------------------------------------------------------

_GLOB_SPEC = ToolSpec(
    name="glob",
    description=(
        "Find files whose path matches a glob pattern, respecting .gitignore; newest first "
        f"(by modification time), paths relative to the working directory, at most "
        f"{DEFAULT_PATHS} unless max_results says otherwise."
    ),
    parameters=_schema(
        {
            "pattern": {"type": "string", "description": f"The glob ({_GLOB_HELP})."},
            "path": {
                "type": "string",
                "description": "Directory to search in, absolute or relative to the working "
                "directory (default: the working directory).",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_PATHS,
                "description": f"Most paths to show (default {DEFAULT_PATHS}).",
            },
        },
        ["pattern"],
    ),
)


class GlobTool:
    @property
    def spec(self) -> ToolSpec:
        return _GLOB_SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        return _summary("glob", arguments)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        try:
            text, truncated = await run_in_own_thread(
                lambda: _glob(arguments, ctx), "openvaala-glob"
            )
        except (ToolArgumentError, ToolFailure, guard.Refused) as exc:
            return ToolResult(str(exc), is_error=True)
        return ToolResult(text, truncated=truncated)


def _glob(arguments: JsonObject, ctx: ToolContext) -> tuple[str, bool]:
    pattern = string_arg(arguments, "pattern")
    if not pattern.strip():
        raise ToolArgumentError("Argument 'pattern' is empty.")
    limit = int_arg(arguments, "max_results", default=DEFAULT_PATHS, minimum=1)
    if limit > MAX_PATHS:
        raise ToolArgumentError(f"Argument 'max_results' must be at most {MAX_PATHS}.")
    place = _place(arguments, ctx)
    if place.file is not None:
        raise ToolFailure(f"{arguments['path']} is a file, not a directory to search in.")
    wanted = glob_filter(pattern)
    found: list[tuple[float, str]] = []
    for relative, entry in walk_files(place.root, place.protected):
        if wanted.match_file(relative):
            with contextlib.suppress(OSError):
                found.append((-entry.stat(follow_symlinks=False).st_mtime, relative))
    if not found:
        return f"No files match {pattern!r}.", False
    found.sort()
    lines: list[str] = []
    size = 0
    for _, relative in found[:limit]:
        size += len(place.prefix) + len(relative) + 1
        if size > ctx.output_limit:
            break
        lines.append(place.prefix + relative)
    if len(found) > len(lines):
        lines.append(
            f"[… {len(found) - len(lines)} more files match; narrow the pattern or path"
            + (", or raise max_results …]" if len(lines) == limit else " …]")
        )
    return "\n".join(lines), len(found) > len(lines)
