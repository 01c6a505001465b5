"""The file watch that narrows a shell call's checkpoint (store/tree_watch.py), on real files
with real inotify: what git records for the paths the watch names must equal what a scan of
the whole tree records, whatever the call did."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from openvaala_server.store.checkpoints import SnapshotStore, watched_changes
from openvaala_server.store.tree_watch import TreeWatch

pytestmark = pytest.mark.skipif(not hasattr(os, "pipe2"), reason="inotify is Linux only")


def make_tree(root: Path) -> None:
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    for d in range(5):
        (root / f"pkg{d}").mkdir()
        for f in range(20):
            (root / f"pkg{d}" / f"m{f}.py").write_text(f"# {d}/{f}\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored")
    (root / "empty").mkdir()
    nested = root / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "inside.txt").write_text("a nested repository: one entry for git")
    git = ["git", "-C", str(nested), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (root / "run.sh").write_text("echo\n")
    os.symlink("run.sh", root / "link")


def sed_i(root: Path) -> None:
    for name in ("pkg0/m5.py", "pkg2/m6.py"):
        temp = root / (name + ".tmp")
        temp.write_text("rewritten\n")
        temp.replace(root / name)


def file_to_folder(root: Path) -> None:
    (root / "pkg0" / "m7.py").unlink()
    (root / "pkg0" / "m7.py").mkdir()
    (root / "pkg0" / "m7.py" / "inner.txt").write_text("inner\n")


def rename(root: Path) -> None:
    (root / "pkg3").rename(root / "moved3")


def relink(root: Path) -> None:
    os.unlink(root / "link")
    os.symlink("pkg0", root / "link")


def made_and_removed(root: Path) -> None:
    (root / "tmp.txt").write_text("x")
    (root / "tmp.txt").unlink()


CHANGES: list[tuple[str, Callable[[Path], object]]] = [
    ("edit", lambda r: (r / "pkg0" / "m1.py").write_text("edited\n")),
    ("create", lambda r: (r / "new.txt").write_text("new\n")),
    ("delete", lambda r: (r / "pkg1" / "m2.py").unlink()),
    ("chmod", lambda r: os.chmod(r / "run.sh", 0o755)),
    ("relink", relink),
    ("ignored", lambda r: (r / "debug.log").write_text("ignored")),
    ("ignored dir", lambda r: (r / "build" / "more.o").write_text("ignored")),
    ("in empty dir", lambda r: (r / "empty" / "first.txt").write_text("first\n")),
    ("new tree", lambda r: (r / "a" / "b" / "c").mkdir(parents=True)),
    ("file in new tree", lambda r: (r / "a" / "b" / "c" / "deep.txt").write_text("deep\n")),
    ("move a dir", rename),
    ("edit in moved dir", lambda r: (r / "moved3" / "m0.py").write_text("after move\n")),
    ("remove a dir", lambda r: shutil.rmtree(r / "pkg4")),
    ("made and removed", made_and_removed),
    ("in nested repo", lambda r: (r / "vendor" / "lib" / "more.txt").write_text("nested")),
    ("sed -i", sed_i),
    ("new and ignored", lambda r: ((r / "n.txt").write_text("n"), (r / "n.log").write_text("l"))),
    ("owner's exec bit", lambda r: os.chmod(r / "pkg0" / "m3.py", 0o744)),
    ("others' exec bit", lambda r: os.chmod(r / "pkg0" / "m4.py", 0o645)),
    ("file to folder", file_to_folder),
]


async def test_the_watched_paths_give_what_a_whole_tree_scan_gives(tmp_path: Path) -> None:
    root, conv_a, conv_b = tmp_path / "w", tmp_path / "a", tmp_path / "b"
    for d in (root, conv_a, conv_b):
        d.mkdir()
    make_tree(root)
    watched, scanned = SnapshotStore(conv_a, root), SnapshotStore(conv_b, root)
    watch = TreeWatch(root, ignored=await watched.ignored_dirs())
    assert watch.start(), watch.broken
    assert watch.take() is None  # the first time: not known, scan everything
    tree_a, tree_b = await watched.snapshot(None), await scanned.snapshot(None)
    assert tree_a == tree_b
    for what, change in CHANGES:
        change(root)
        changed = watch.take()
        assert changed is not None, what
        narrow = await watched_changes(watched, watch, tree_a, changed)
        full = await scanned.changes_since(tree_b, None)
        assert sorted(narrow) == sorted(full), what
        tree_a, tree_b = await watched.snapshot(watch.take()), await scanned.snapshot(None)
        assert tree_a == tree_b, what
    watch.close()


async def test_it_says_unknown_when_it_cannot_vouch(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    for d in range(4):
        (root / f"d{d}").mkdir()
    small = TreeWatch(root, max_dirs=3)  # more directories than allowed: no watch at all
    assert not small.start() and small.broken
    assert small.take() is None
    watch = TreeWatch(root)
    assert watch.start()
    watch.take()
    (root / "d0" / "x").write_text("x")
    changed = watch.take()
    assert changed is not None and changed.paths == {"d0/x"}
    watch.forget()  # the index was dropped: the next answer is "scan everything"
    assert watch.take() is None
    assert watch.take() is not None
    os.rename(root, tmp_path / "elsewhere")  # the root itself moved: never known again
    assert watch.take() is None and watch.take() is None


def _in_child(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`script` run in a process of its own: the inotify instance is the process's, shared by
    every watch, so what it holds is only known where no other test's watch lives."""
    out = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", script, str(tmp_path)],
        cwd=Path(__file__).resolve().parents[3],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out


WATCHERS = """
import os, sys
from pathlib import Path
from openvaala_server.store.tree_watch import TreeWatch

def inotify_fds():
    fds = os.listdir("/proc/self/fd")
    return sum(1 for fd in fds if os.path.exists(f"/proc/self/fd/{fd}")
               and os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify")

root = Path(sys.argv[1])
counts = [inotify_fds()]
first, second = TreeWatch(root / "a"), TreeWatch(root / "b")
assert first.start() and second.start()
counts.append(inotify_fds())
first.close()
counts.append(inotify_fds())
second.close()
counts.append(inotify_fds())
again = TreeWatch(root / "a")
assert again.start()
(root / "a" / "x").write_text("x")
again.take()
(root / "a" / "y").write_text("y")
print(*counts, sorted(again.take().paths))
"""


def test_the_inotify_descriptor_is_given_back_once_nothing_is_watched(tmp_path: Path) -> None:
    """One inotify instance serves every conversation, and is closed when the last watch goes
    (all conversations released, or the daemon exiting), not held for the process's life."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    out = _in_child(WATCHERS, tmp_path)
    assert "ResourceWarning" not in out.stderr
    # None, one for both watches, still one while the second watches, none, then a new one works.
    assert out.stdout.split(maxsplit=4) == ["0", "1", "1", "0", "['y']\n"]


GIVING_UP = """
import os, sys
from pathlib import Path
from openvaala_server.store.tree_watch import TreeWatch

root = Path(sys.argv[1])
(root / "a").mkdir()
watch = TreeWatch(root / "a", max_dirs=2)  # the only watch of the process
assert watch.start()
watch.take()
(root / "a" / "one").mkdir()
(root / "a" / "two").mkdir()
print(watch.take(), watch.broken)  # past its bound: given up, the instance closed meanwhile
(root / "b").mkdir()
other = TreeWatch(root / "b")
assert other.start()
other.take()
(root / "b" / "x").write_text("x")
print(sorted(other.take().paths))
"""


def test_the_last_watch_giving_up_while_events_are_read_answers_unknown(tmp_path: Path) -> None:
    """The only watch passes its directory bound while its events are read: it gives up (the
    next checkpoint scans the tree), the instance is closed under the reader, and a later watch
    still works."""
    out = _in_child(GIVING_UP, tmp_path)
    assert out.stdout.splitlines() == ["None more than 2 directories", "['x']"]
