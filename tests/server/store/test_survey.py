"""store/survey.py: the walk counts what git would list (its `.gitignore` rules, nested
repositories, links), and stops at its limits without reading the rest of the tree."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from openvaala_server.store.checkpoints import SnapshotStore
from openvaala_server.store.survey import Limits, count_tree

UNLIMITED = Limits(10**9, 10**15)
FILES = [
    "a/b/c/x.py",
    "a/b/c/x.pyc",
    "a/y.log",
    "a/b/important.log",
    "build/x/o.o",
    "docs/build/i.html",
    "logs/1.txt",
    "keep/sub/k.tmp",
    "keep/sub/other.tmp",
    "keep/k.txt",
    "nested/f",
    "node_modules/p/i.js",
    "src/gen/g.ts",
    "src/main.ts",
    "deep/" + "/".join("d" * 40) + "/leaf.txt",
    ".env",
    ".env.example",
    "#notes",
    "data/conversations/c.jsonl",
]
IGNORES = {
    ".gitignore": "# build output\n*.pyc\n*.log\n!important.log\n/build/\nnode_modules\n.env\n"
    "docs/**/*.htm[l]\n\\#*\n",
    "keep/.gitignore": "*.tmp\n!k.tmp\n",
    "src/.gitignore": "gen/\n",
    "logs/.gitignore": "*\n!.gitignore\n",
}


def tricky_tree(root: Path) -> None:
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n")
    for name, text in IGNORES.items():
        (root / name).write_text(text)
    (root / "nested" / ".git").mkdir()  # a nested repository: git lists it as one entry
    subprocess.run(["git", "init", "-q"], cwd=root / "nested", check=True)
    (root / "link").symlink_to("/etc/passwd")
    os.mkfifo(root / "fifo")


def git_listing(root: Path, git_dir: Path, excludes: tuple[str, ...]) -> list[bytes]:
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    spec = [".", *(f":(exclude){e}" for e in excludes)]
    options = ["-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(
        ["git", f"--git-dir={git_dir}", f"--work-tree={root}", "ls-files", *options, "--", *spec],
        cwd=root,
        check=True,
        capture_output=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(git_dir.parent / "xdg")},
    )
    return [n for n in listed.stdout.split(b"\0") if n]


def test_the_walk_counts_what_git_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "work"
    root.mkdir()
    tricky_tree(root)
    xdg = tmp_path / "xdg"
    (xdg / "git").mkdir(parents=True)
    (xdg / "git" / "ignore").write_text("*.example\n")  # git's global ignore file
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    listed = git_listing(root, tmp_path / "git", ("data",))
    count = count_tree(root, ("data",), UNLIMITED, threading.Event())
    assert count.over is None
    assert count.files == len(listed) == 12, listed
    files = [root / os.fsdecode(n) for n in listed if not n.endswith(b"/")]  # "nested/"
    assert count.bytes == sum(os.lstat(f).st_size for f in files)


def test_the_walk_stops_at_the_first_file_past_the_cap(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"p{i:02d}").mkdir()
        for j in range(10):
            (tmp_path / f"p{i:02d}" / f"f{j}").write_text("x")
    count = count_tree(tmp_path, (), Limits(25, 10**9), threading.Event())
    assert (count.over, count.files) == ("files", 26)
    assert count.folders <= 4  # the top, and the three folders that held the 26 files
    # Sizes are read once the files are counted, up to the first byte past the limit.
    count = count_tree(tmp_path, (), Limits(10**6, 15), threading.Event())
    assert (count.over, count.files, count.bytes) == ("bytes", 300, 16)


def test_a_stopped_walk_reads_no_further(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    stop = threading.Event()
    stop.set()
    count = count_tree(tmp_path, (), UNLIMITED, stop)
    assert (count.over, count.folders) == ("stopped", 0)


async def test_the_store_says_why_a_tree_is_too_large(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    for i in range(4):
        (work / "sub" / f"f{i}").write_bytes(b"x" * 1000)
    store = SnapshotStore(tmp_path / "conversation", work)
    assert await store.survey(3, 10**9) == f"{work} holds more than 3 files"
    assert await store.survey(10, 1 << 20) is None
    assert await store.survey(10, 0) == f"the files of {work} hold more than 0 MB"
