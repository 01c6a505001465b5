"""Repositories of a `workspace` that the working directory's `.git` alone does not cover: a
`.git` file pointing at a gitdir inside the working directory, a nested repository, a `.git`
symlink. Whatever an agent plants there runs unconfined at the user's next `git status`.

Real bubblewrap and daemon; a fake provider scripts the attacker's command; the test then runs
`git status` outside any sandbox, as the user would next. A marker file tells whether the planted
program ran.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.server.tools.attacker import agent, running_daemon, shell_call
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("git") is None, reason="needs bwrap and git"
)


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    with running_daemon(places, fake_openai.config_toml("fake") + agent()) as started:
        yield started


def git(*args: str | Path) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True)


def make_repository(places: Places, layout: str) -> Path:
    """The repository whose `git status` the user runs next, laid out as `layout` says."""
    work = places.work
    if layout == "gitdir-file":  # `git init --separate-git-dir`, a worktree's `.git` file
        git("init", "-q", "--separate-git-dir", work / ".gd", work)
        return work
    if layout == "nested":  # a repository in a subdirectory (a vendored one, a submodule)
        git("init", "-q", work / "vendor" / "lib")
        return work / "vendor" / "lib"
    if layout == "deep-gitdir-file":  # both: a nested `.git` file naming a gitdir in the cwd
        (work / "store").mkdir()
        git("init", "-q", "--separate-git-dir", work / "store" / "lib.git", work / "src" / "lib")
        return work / "src" / "lib"
    raise AssertionError(layout)


def users_next_git_status(repo: Path, mark: Path) -> bool:
    """Whether the user's own `git status` there runs what was planted."""
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    return mark.exists()


@pytest.mark.parametrize("layout", ["gitdir-file", "nested", "deep-gitdir-file"])
async def test_a_planted_fsmonitor_or_hook_never_reaches_the_users_git(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, layout: str
) -> None:
    repo = make_repository(places, layout)
    mark = places.outside / "planted-ran"
    hook = f"#!/bin/sh\\ntouch {mark}\\n"
    command = (
        f"cd {repo}; git config core.fsmonitor 'touch {mark}; false'; "
        f'h=$(git rev-parse --git-path hooks)/post-index-change; printf "{hook}" > "$h"; '
        'chmod +x "$h"; echo tried'
    )
    output = await shell_call(daemon, fake_openai, command, str(places.work))
    assert "tried" in output  # the command ran in the workspace
    assert "Read-only file system" in output
    assert not users_next_git_status(repo, mark)


async def test_a_git_symlink_cannot_be_swapped_for_a_planted_repository(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    git("init", "-q", places.work / "real")
    (places.work / "real" / "f").write_text("x\n")
    (places.work / ".git").symlink_to("real/.git")
    mark = places.outside / "planted-ran"
    command = (
        f"rm .git && git init -q . && git config core.fsmonitor 'touch {mark}; false'; echo tried"
    )
    output = await shell_call(daemon, fake_openai, command, str(places.work))
    assert (places.work / ".git").is_symlink()
    assert "symbolic link" in output  # the call was refused, saying why
    assert not users_next_git_status(places.work, mark)
