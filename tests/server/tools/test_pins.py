"""Which directories a sandboxed command gets pinned (bound onto themselves) or read-only."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.tools.pins import pinned_ancestors
from openvaala_server.tools.vcs_dirs import repository_dirs


def test_the_parents_inside_the_writable_area_outermost_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = home / ".local" / "share" / "openvaala"
    config = home / ".config" / "openvaala" / "config.toml"
    data.mkdir(parents=True)
    config.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere" / "data"
    elsewhere.mkdir(parents=True)
    pinned = pinned_ancestors([str(data), str(config), str(elsewhere)], str(home))
    assert pinned == [
        str(home / ".config"),
        str(home / ".local"),
        str(home / ".config" / "openvaala"),
        str(home / ".local" / "share"),
    ]
    # The writable area itself is a mount already; everything above the root is pinned in `off`.
    assert str(home) not in pinned
    assert str(tmp_path) in pinned_ancestors([str(data)], "/")


def test_a_missing_parent_is_not_pinned(tmp_path: Path) -> None:
    assert pinned_ancestors([str(tmp_path / "no" / "such" / "dir")], str(tmp_path)) == []


def test_the_repositories_in_the_working_directory_within_the_bounds(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".jj").mkdir()
    (tmp_path / "vendored" / ".git").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / ".git").mkdir(parents=True)  # never walked into
    (tmp_path / "a" / "b" / "c" / "d" / ".git").mkdir(parents=True)  # deeper than DEPTH
    (tmp_path / ".hg").symlink_to("/")  # leads outside: read-only anyway, not bound
    # A `.git` file: the gitdir it names, and that one's common directory, are bound too.
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: ../.git/worktrees/wt\n")
    (tmp_path / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (tmp_path / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    # A nested linked `.git` cannot be pinned: its repository is read-only as a whole.
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ".git").symlink_to(tmp_path / "vendored" / ".git")
    found = repository_dirs(str(tmp_path))
    assert found.read_only == [
        str(tmp_path / ".git"),
        str(tmp_path / ".jj"),
        str(tmp_path / "linked"),
        str(tmp_path / "vendored" / ".git"),
        str(tmp_path / "wt" / ".git"),
        str(tmp_path / ".git" / "worktrees" / "wt"),
    ]
    assert found.symlinked == [str(tmp_path / ".hg"), str(tmp_path / "linked" / ".git")]
