"""Gathering what a request says about where it runs (runtime/surroundings.py), on real
directories and a real git: the branch in its states, the status bounded, the instruction files
from the root down with the fallback names, the memory files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from openvaala_server.domain.environment import STATUS_LINES
from openvaala_server.runtime.surroundings import directories, gather, git_state


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def test_the_branch_in_each_state_and_a_bounded_status(tmp_path: Path) -> None:
    assert git_state(str(tmp_path)) is None  # not a repository
    _git(tmp_path, "init", "-q", "-b", "trunk")
    state = git_state(str(tmp_path))
    assert state is not None and (state.root, state.branch) == (str(tmp_path), "trunk")
    for n in range(STATUS_LINES + 3):
        (tmp_path / f"f{n}.txt").write_text("x")
    state = git_state(str(tmp_path))
    assert state is not None
    assert len(state.status) == STATUS_LINES and state.more == 3
    assert state.status[0] == "?? f0.txt"
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one")
    head = _git(tmp_path, "rev-parse", "--short", "HEAD")
    _git(tmp_path, "checkout", "-q", "--detach")
    state = git_state(str(tmp_path / "."))
    assert state is not None and state.branch == f"detached at {head}" and state.status == ()


def test_instruction_files_from_the_root_down_and_memory(tmp_path: Path) -> None:
    root, config = tmp_path / "repo", tmp_path / "config"
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    config.mkdir()
    _git(root, "init", "-q")
    (root / "CLAUDE.md").write_text("root claude")
    (root / "a" / "AGENTS.md").write_text("a agents")
    (root / "a" / "CLAUDE.md").write_text("a claude: not read, AGENTS.md comes first")
    (deep / "AGENTS.md").mkdir()  # a directory of that name is not a file
    (config / "AGENTS.md").write_text("mine")
    (root / ".openvaala").mkdir()
    (root / ".openvaala" / "MEMORY.md").write_text("- project note\n")
    found = gather(str(deep), ["AGENTS.md", "CLAUDE.md"], config)
    assert [(Path(d.path), d.text) for d in found.project_docs] == [
        (root / "CLAUDE.md", "root claude"),
        (root / "a" / "AGENTS.md", "a agents"),
    ]
    assert found.user_doc is not None and found.user_doc.text == "mine"
    assert [(m.scope, m.text) for m in found.memories] == [("project", "- project note\n")]
    assert found.root == str(root) and found.facts.cwd == str(deep)
    # Outside any repository: the working directory alone.
    assert directories(str(root), str(tmp_path)) == [tmp_path]
    assert gather(str(config), ["AGENTS.md"], tmp_path / "none").project_docs[0].text == "mine"


def test_a_fifo_named_like_an_instruction_file_is_not_waited_for(tmp_path: Path) -> None:
    # A tool can `mkfifo AGENTS.md` (or MEMORY.md): opening it for reading would wait for a
    # writer forever, and every later turn with it. In a child process, so a regression fails
    # this test instead of hanging the test run.
    config = tmp_path / "config"
    config.mkdir()
    os.mkfifo(tmp_path / "AGENTS.md")
    (tmp_path / ".openvaala").mkdir()
    os.mkfifo(tmp_path / ".openvaala" / "MEMORY.md")
    (tmp_path / "CLAUDE.md").write_text("the file after the fifo")
    code = (
        "import sys; from pathlib import Path\n"
        "from openvaala_server.runtime.surroundings import gather\n"
        "found = gather(sys.argv[1], ['AGENTS.md', 'CLAUDE.md'], Path(sys.argv[2]))\n"
        "print([d.text for d in found.project_docs], len(found.memories))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(config)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['the file after the fifo'] 0"
