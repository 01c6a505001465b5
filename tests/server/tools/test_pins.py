"""Which directories a sandboxed command gets pinned (bound onto themselves) or read-only."""

from __future__ import annotations

from pathlib import Path

from openvaala_server.tools.pins import pinned_ancestors, repository_dirs


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


def test_the_repositories_of_the_working_directory_only(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".jj").mkdir()
    (tmp_path / "vendored" / ".git").mkdir(parents=True)
    (tmp_path / ".hg").symlink_to("/")  # leads outside: read-only anyway, not bound
    assert repository_dirs(str(tmp_path)) == [str(tmp_path / ".git"), str(tmp_path / ".jj")]
