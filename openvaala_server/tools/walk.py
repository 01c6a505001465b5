"""Walking a directory tree the way ripgrep does: .gitignore respected, .git and links skipped.

`grep` without ripgrep and `glob` list files with this, so both tools see the same files as
`rg` would: ignore files (.gitignore, .ignore, .rgignore) in the tree and in its parent
directories up to the repository's top, the deeper file and the later line winning, an ignored
directory never entered; hidden files included but never `.git`; symbolic links not followed
(a link could lead anywhere, the daemon's private files included). The patterns are gitignore's,
matched by the `pathspec` package. The daemon's protected paths are never listed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")


@dataclass(frozen=True)
class _Rules:
    base: str  # the directory the ignore file is in, with a trailing "/"
    spec: pathspec.GitIgnoreSpec


def glob_filter(pattern: str) -> pathspec.PathSpec[pathspec.Pattern]:
    """A `--glob` filter as ripgrep reads it: gitignore syntax, with `{a,b}` alternatives."""
    # pathspec is imported by the first walk (in the tool's thread), not at the daemon's start
    # (docs/design.md, "Start-up imports").
    import pathspec

    return pathspec.PathSpec.from_lines("gitignore", expand_braces(pattern))


def expand_braces(pattern: str) -> list[str]:
    """`*.{ts,tsx}` -> `*.ts`, `*.tsx` (gitignore patterns have no braces; globs often do)."""
    start = pattern.find("{")
    end = pattern.find("}", start + 1)
    if start < 0 or end < 0:
        return [pattern]
    head, tail = pattern[:start], pattern[end + 1 :]
    return [
        expanded
        for choice in pattern[start + 1 : end].split(",")
        for expanded in expand_braces(head + choice + tail)
    ]


def walk_files(root: Path, protected: frozenset[str]) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every file under the real directory `root` that ripgrep would search, in name order.

    Yields each file's path relative to `root` ("/"-separated) with its directory entry.
    `protected` holds real paths never to enter or list.
    """
    rules = _parent_rules(root)
    yield from _walk(str(root), "", rules, protected)


def _walk(
    folder: str, relative: str, rules: list[_Rules], protected: frozenset[str]
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return  # unreadable or vanished meanwhile: ripgrep skips it too
    names = {entry.name for entry in entries}
    here = rules + _rules_in(folder, names)
    for entry in entries:
        if entry.name == ".git" or entry.path in protected:
            continue
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        path = relative + entry.name
        if _ignored(entry.path, is_dir, here):
            continue
        if is_dir:
            yield from _walk(entry.path, path + "/", here, protected)
        elif is_file:
            yield path, entry


def _ignored(path: str, is_dir: bool, rules: list[_Rules]) -> bool:
    # The deepest ignore file that has a say decides; within a file the last matching line does.
    for rule in reversed(rules):
        relative = path[len(rule.base) :] + ("/" if is_dir else "")
        include = rule.spec.check_file(relative).include
        if include is not None:
            return include
    return False


def _rules_in(folder: str, names: set[str]) -> list[_Rules]:
    import pathspec

    found = []
    for name in IGNORE_FILES:
        if name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as file:
                    spec = pathspec.GitIgnoreSpec.from_lines(file)
            except OSError:
                continue
            found.append(_Rules(folder + "/", spec))
    return found


def _parent_rules(root: Path) -> list[_Rules]:
    """The ignore files above `root`, outermost first, up to the repository's top directory."""
    parents: list[Path] = []
    if (root / ".git").exists():
        return []
    for parent in root.parents:
        parents.append(parent)
        if (parent / ".git").exists():
            break
    rules: list[_Rules] = []
    for parent in reversed(parents):
        try:
            names = set(os.listdir(parent))
        except OSError:
            continue
        base = str(parent).rstrip("/")
        rules += _rules_in(base, names)
    return rules
