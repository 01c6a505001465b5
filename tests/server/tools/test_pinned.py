"""An approved write reaches the approved path or nothing (tools/pinned.py, docs/security.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openvaala_server.domain.permissions import Confinement
from openvaala_server.tools import guard, pinned


def test_the_walk_reaches_the_directory_and_makes_what_is_missing(tmp_path: Path) -> None:
    fd = pinned.open_dir(tmp_path / "new" / "deeper")
    try:
        assert os.path.samestat(os.fstat(fd), os.stat(tmp_path / "new" / "deeper"))
    finally:
        os.close(fd)


def test_a_directory_swapped_for_a_link_stops_the_walk(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dir").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(pinned.NotApproved, match="no longer the directory you approved"):
        pinned.open_dir(tmp_path / "dir")


def test_a_call_pinned_to_a_path_refuses_one_that_now_leads_elsewhere(tmp_path: Path) -> None:
    approved, other = tmp_path / "approved.txt", tmp_path / "other.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(other)
    confinement = Confinement(mode="off", approved=(approved,))
    with pytest.raises(guard.Refused, match="not to what you approved"):
        guard.check_write(link, tmp_path, confinement)
    # The approved path itself passes, and its directory is opened without links.
    assert guard.check_write(approved, tmp_path, confinement) == approved
    os.close(guard.checked_dir(tmp_path, tmp_path, confinement))
