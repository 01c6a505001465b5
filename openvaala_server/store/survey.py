"""The survey of a working directory: is it small enough for whole-tree snapshots?

Before a conversation's first whole-tree snapshot (store/checkpoints.py) the files the snapshot
would take are counted, as `git add -A` with the private repository would see them: the
`.gitignore` files of the tree and git's own global ignore file apply (not those of the
directories above it, which git does not read either); `.git` is never entered and a nested
repository counts as one entry, as git lists it; symbolic links count and are not followed.

The count is a walk of the tree in this process (run in a thread), not `git ls-files`: git
lists nothing until it has walked the whole tree (8 s at `/`, docs/design.md, "A survey that
stops at its cap"), while this walk stops at the first file past the cap, or when `stop` is set
(the caller's deadline). The entries' types come with the folders' listings; the files' sizes
are read only once they are known to be under the cap, up to the first byte past the size
limit. The patterns are gitignore's, matched by the `pathspec` package.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pathspec

# A named group of a pattern's expression (pathspec marks where a folder's name ends).
_NAMED_GROUP: Final = re.compile(r"\(\?P<\w+>")


@dataclass(frozen=True)
class Limits:
    max_files: int
    max_bytes: int


@dataclass
class Count:
    """What the walk found before it ended; `over` names the limit it passed, if any."""

    files: int = 0
    bytes: int = 0  # summed once the files are counted, and only then (one `lstat` each)
    over: str | None = None  # "files", "bytes" or "stopped"
    folders: int = 0  # folders read: how far the walk went
    paths: list[str] = field(default_factory=list, repr=False)  # the files counted


@dataclass(frozen=True)
class _Rules:
    base: str  # the folder the ignore file is in, with a trailing "/"
    spec: pathspec.GitIgnoreSpec
    # Matches whenever one of the file's patterns does: most paths match none, and one search
    # answers for them (pathspec's own check costs ten times as much a path).
    any_line: re.Pattern[str] | None


class _Stop(Exception):
    """The walk is over: a limit passed, or the caller stopped it."""


def count_tree(
    root: Path, excludes: tuple[str, ...], limits: Limits, stop: threading.Event
) -> Count:
    """The files under `root` a snapshot would take, counted until a limit passes.

    `excludes`: paths relative to `root` left out with what lies under them (the data
    directory, when it is inside the tree)."""
    count = Count()
    base = str(root).rstrip("/") + "/"
    # Depth first with a stack of its own (a tree may be deeper than Python's recursion).
    stack: list[tuple[str, str, list[_Rules]]] = [(base, "", _global_rules(base))]
    skipped = frozenset(excludes)
    try:
        while stack:
            _stopped(stop, count)
            path, relative, rules = stack.pop()
            stack += _folder(path, relative, rules, skipped, limits, count)
        _sizes(count, limits, stop)
    except _Stop:
        pass
    return count


def _stopped(stop: threading.Event, count: Count) -> None:
    if stop.is_set():
        count.over = "stopped"
        raise _Stop


def _folder(
    path: str,
    relative: str,
    rules: list[_Rules],
    excludes: frozenset[str],
    limits: Limits,
    count: Count,
) -> list[tuple[str, str, list[_Rules]]]:
    """Count one folder's files; its subfolders to walk next (with the rules that apply)."""
    count.folders += 1
    try:
        with os.scandir(path) as scan:
            entries = list(scan)
    except OSError:
        return []  # unreadable or gone meanwhile: git skips it too
    here = rules + _rules_in(path, entries)
    folders: list[tuple[str, str, list[_Rules]]] = []
    for entry in entries:
        if entry.name == ".git" or (excludes and relative + entry.name in excludes):
            continue
        try:
            # The entry's type comes with the folder's listing: no `stat` here.
            is_dir = entry.is_dir(follow_symlinks=False)
            if here and _ignored(entry.path, is_dir, here):
                continue
            if not is_dir:
                if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    _add(count, limits, entry.path)  # a FIFO, socket or device is not git's
            elif os.path.lexists(os.path.join(entry.path, ".git")):
                _add(count, limits, "")  # a nested repository: one entry, never entered
            else:
                folders.append((entry.path, relative + entry.name + "/", here))
        except OSError:
            continue  # gone meanwhile
    return folders


def _add(count: Count, limits: Limits, path: str) -> None:
    count.files += 1
    if count.files > limits.max_files:
        count.over = "files"
        raise _Stop
    if path:
        count.paths.append(path)


def _sizes(count: Count, limits: Limits, stop: threading.Event) -> None:
    for i, path in enumerate(count.paths):
        if i % 1000 == 0:
            _stopped(stop, count)
        try:
            count.bytes += os.lstat(path).st_size
        except OSError:
            continue  # gone meanwhile
        if count.bytes > limits.max_bytes:
            count.over = "bytes"
            raise _Stop


def _ignored(path: str, is_dir: bool, rules: list[_Rules]) -> bool:
    # The deepest ignore file that has a say decides; within a file the last matching line does.
    for rule in reversed(rules):
        relative = path[len(rule.base) :] + ("/" if is_dir else "")
        if rule.any_line is not None and not rule.any_line.search(relative):
            continue
        include = rule.spec.check_file(relative).include
        if include is not None:
            return include
    return False


def _rules_in(folder: str, entries: list[os.DirEntry[str]]) -> list[_Rules]:
    for entry in entries:
        if entry.name == ".gitignore":
            rules = _read_rules(entry.path, folder.rstrip("/") + "/")
            return [rules] if rules is not None else []
    return []


def _global_rules(base: str) -> list[_Rules]:
    """git's global ignore file (`core.excludesFile` unset: `$XDG_CONFIG_HOME/git/ignore`),
    which applies to the whole tree, below every `.gitignore`."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    rules = _read_rules(os.path.join(config, "git", "ignore"), base)
    return [rules] if rules is not None else []


def _read_rules(path: str, base: str) -> _Rules | None:
    # pathspec is imported by the first survey (in its thread), not at the daemon's start
    # (docs/design.md, "Start-up imports").
    import pathspec

    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            spec = pathspec.GitIgnoreSpec.from_lines(file)
    except OSError:
        return None
    return _Rules(base, spec, _any_line(spec))


def _any_line(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One expression matching where any of the spec's patterns does (their named groups
    unnamed, as an alternation may not repeat a name); None if they cannot be joined."""
    lines = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue  # a blank line or a comment
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return None
        lines.append("(?:" + _NAMED_GROUP.sub("(?:", regex.pattern) + ")")
    try:
        return re.compile("|".join(lines)) if lines else re.compile("(?!)")
    except re.error:
        return None


def too_large(root: Path, count: Count, limits: Limits) -> str | None:
    """Why the tree is too large to snapshot whole, from the walk's count (None: it is not)."""
    if count.over == "files":
        return f"{root} holds more than {limits.max_files} files"
    if count.over == "bytes":
        return f"the files of {root} hold more than {limits.max_bytes // (1 << 20)} MB"
    return None
