"""The daemon's git queries without bubblewrap (tools/confined_git.py): no git process at all,
the branch read from HEAD, a planted `core.fsmonitor` never run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from openvaala_server.runtime.surroundings import git_state, project_root
from openvaala_server.tools.sandbox import BWRAP_ENV


def test_without_bwrap_the_branch_comes_from_head_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BWRAP_ENV, "")  # a machine without bubblewrap
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    mark = tmp_path / "ran"
    subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {mark}; false"], check=True
    )
    (repo / "sub").mkdir()
    state = git_state(str(repo / "sub"))
    assert state is not None
    assert (state.root, state.branch, state.status) == (str(repo), "trunk", ())
    assert project_root(str(repo / "sub")) == str(repo)
    assert not mark.exists()
    assert git_state(str(tmp_path)) is None
