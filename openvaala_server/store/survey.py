"""The survey of a working directory: is it small enough for whole-tree snapshots?

Before a conversation's first whole-tree snapshot (store/checkpoints.py) the files the snapshot
would take are counted, as `git add -A` with the private repository would see them: the
`.gitignore` files of the tree and git's own global ignore file apply (not those of the
directories above it, which git does not read either); `.git` is never entered and a nested
repository counts as one entry, as git lists it; symbolic links count and are not followed.

The count is a walk of the tree in this process (run in a thread), not `git ls-files`: git
lists nothing until it has walked the whole tree (8 s at `/`, docs/design.md, "A survey that
stops at its cap"), while this walk stops at the first file past the cap, or the first byte
past the size limit, or when `stop` is set (the caller's deadline). The patterns are
gitignore's, matched by the `pathspec` package.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec


@dataclass(frozen=True)
class Limits:
    max_files: int
    max_bytes: int


@dataclass
class Count:
    """What the walk found before it ended; `over` names the limit it passed, if any."""

    files: int = 0
    bytes: int = 0
    over: str | None = None  # "files", "bytes" or "stopped"
    folders: int = 0  # folders read: how far the walk went


@dataclass(frozen=True)
class _Rules:
    base: str  # the folder the ignore file is in, with a trailing "/"
    spec: pathspec.GitIgnoreSpec


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
            path, relative, rules = stack.pop()
            if stop.is_set():
                count.over = "stopped"
                break
            stack += _folder(path, relative, rules, skipped, limits, count)
    except _Stop:
        pass
    return count


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
        rel = relative + entry.name
        if entry.name == ".git" or rel in excludes:
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            if here and _ignored(entry.path, is_dir, here):
                continue
            if not is_dir:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    _add(count, limits, info.st_size)  # a FIFO, socket or device is not git's
            elif os.path.lexists(os.path.join(entry.path, ".git")):
                _add(count, limits, 0)  # a nested repository: one entry, never entered
            else:
                folders.append((entry.path, rel + "/", here))
        except OSError:
            continue  # gone meanwhile
    return folders


def _add(count: Count, limits: Limits, size: int) -> None:
    count.files += 1
    count.bytes += size
    if count.files > limits.max_files:
        count.over = "files"
        raise _Stop
    if count.bytes > limits.max_bytes:
        count.over = "bytes"
        raise _Stop


def _ignored(path: str, is_dir: bool, rules: list[_Rules]) -> bool:
    # The deepest ignore file that has a say decides; within a file the last matching line does.
    for rule in reversed(rules):
        relative = path[len(rule.base) :] + ("/" if is_dir else "")
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
            return _Rules(base, pathspec.GitIgnoreSpec.from_lines(file))
    except OSError:
        return None


def too_large(root: Path, count: Count, limits: Limits) -> str | None:
    """Why the tree is too large to snapshot whole, from the walk's count (None: it is not)."""
    if count.over == "files":
        return f"{root} holds more than {limits.max_files} files"
    if count.over == "bytes":
        return f"the files of {root} hold more than {limits.max_bytes // (1 << 20)} MB"
    return None
