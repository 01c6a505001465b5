"""Attack 6 of docs/security.md: planting a git hook or `core.fsmonitor` from inside `workspace`.

The daemon runs the tools (real bubblewrap), a fake provider scripts the attacker's calls, and
then the test itself runs `git status` in the repository, outside any sandbox, as the user would
next: whatever was planted would run then. A marker file tells whether it did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openvaala_server.client import Client
from openvaala_server.domain.permissions import SandboxMode
from openvaala_server.tools.base import ToolContext
from openvaala_server.tools.files import EditFileTool, WriteFileTool
from openvaala_server.tools.patch import ApplyPatchTool
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    completed_items,
    method_is,
    new_conversation,
    run_turn,
    turn_ended,
)

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("git") is None, reason="needs bwrap and git"
)

HOOK = ".git/hooks/post-index-change"


def agents(fake: FakeProvider) -> str:
    return fake.config_toml("fake") + "".join(
        f'\n[agents.{name}]\nmodel = "fake"\nsandbox = "{sandbox}"\napproval = "{approval}"\n'
        for name, sandbox, approval in (
            ("default", "workspace", "escalate"),
            ("unboxed", "off", "never"),
        )
    )


@pytest.fixture
def repo(places: Places) -> Path:
    """A fresh repository with an untracked file: its next `git status` writes the index."""
    subprocess.run(["git", "init", "-q", str(places.work)], check=True)
    (places.work / "a.txt").write_text("a\n")
    return places.work


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    places.config.write_text(agents(fake_openai))
    started = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    started.start()
    try:
        yield started
    finally:
        started.stop()


def planted(places: Places) -> Callable[[], bool]:
    """Runs `git status` in the repository as the user would; whether a planted command ran."""
    mark = places.outside / "planted-ran"

    def ran() -> bool:
        subprocess.run(["git", "status"], cwd=places.work, capture_output=True, check=False)
        return mark.exists()

    return ran


def hook_script(places: Places) -> str:
    return f"#!/bin/sh\ntouch {places.outside / 'planted-ran'}\n"


async def test_a_hook_planted_by_shell_never_runs(
    daemon: Daemon, repo: Path, places: Places, fake_openai: FakeProvider
) -> None:
    mark = places.outside / "planted-ran"
    command = (
        f"git config core.fsmonitor 'touch {mark}; false'; "
        f"printf '{hook_script(places)}' > {HOOK}; chmod +x {HOOK}; "
        "mv .git .git-old; mkdir -p .git/hooks; echo still writable > b.txt"
    )
    fake_openai.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("ok"))
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(repo))
        notes = await run_turn(client, cid, "set up the repository")
    finally:
        await client.close()
    [result] = completed_items(notes, "tool_result")
    assert "Read-only file system" in result["output"]
    assert (repo / "b.txt").read_text() == "still writable\n"
    assert not planted(places)()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


async def test_a_write_file_into_git_asks_and_says_why(
    daemon: Daemon, repo: Path, places: Places, fake_openai: FakeProvider
) -> None:
    # The user's own hook, executable: write_file keeps a file's mode, so new content would run.
    hook = repo / HOOK
    hook.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(hook, 0o755)
    config = (repo / ".git" / "config").read_text()
    evil = config + f'[core]\n\tfsmonitor = "touch {places.outside / "planted-ran"}; false"\n'
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": HOOK, "content": hook_script(places)}),
        Reply().tool_call("write_file", {"path": ".git/config", "content": evil}),
        Reply().text("ok"),
    )
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(repo))
        await client.request("input/send", {"conversationId": cid, "text": "speed up git"})
        for _ in range(2):
            asked = (await collect_until(client, method_is("approval/requested")))[-1]["params"]
            assert ".git, which the sandbox keeps read-only" in asked["reason"]
            await client.respond_approval(cid, asked["approvalId"], "deny", None)
        await collect_until(client, turn_ended())
    finally:
        await client.close()
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert (repo / ".git" / "config").read_text() == config
    assert not planted(places)()


async def test_an_undo_never_puts_a_hook_back(
    daemon: Daemon, repo: Path, places: Places, fake_openai: FakeProvider
) -> None:
    hook = repo / HOOK
    hook.write_text(hook_script(places))
    os.chmod(hook, 0o755)
    patch = f"*** Begin Patch\n*** Delete File: {HOOK}\n*** End Patch\n"
    fake_openai.enqueue(
        Reply().tool_call("apply_patch", {"input": patch}), Reply().text("removed it")
    )
    client: Client = await daemon.client()
    try:
        cid = await new_conversation(client, str(repo), agent="unboxed")
        notes = await run_turn(client, cid, "remove that hook")
        [result] = completed_items(notes, "tool_result")
        assert not result.get("isError"), result
        assert not hook.exists()
        undone = await client.request("conversation/undo", {"conversationId": cid})
    finally:
        await client.close()
    assert undone["refusedPaths"] == [HOOK]
    assert not hook.exists()
    assert not planted(places)()


@pytest.mark.parametrize("mode", ["workspace", "off"])
async def test_the_file_tools_keep_git_read_only_in_workspace(
    repo: Path, places: Places, mode: SandboxMode
) -> None:
    """The tools' own check, whatever the approval policy decided (a `never` agent, a bug)."""
    ctx = ToolContext(cwd=repo, emit_output=lambda _: None, confinement=places.confinement(mode))
    patch = "*** Begin Patch\n*** Add File: sub/.hg/hgrc\n+[hooks]\n*** End Patch\n"
    results = [
        await WriteFileTool().run({"path": ".git/hooks/pre-commit", "content": "x"}, ctx),
        await EditFileTool().run(
            {"path": ".git/config", "old_text": "[core]", "new_text": "[core]\n\tx = 1"}, ctx
        ),
        await ApplyPatchTool().run({"input": patch}, ctx),
    ]
    if mode == "workspace":
        for result in results:
            assert result.is_error
            assert "blocked by the sandbox: workspace keeps" in result.output
        assert not (repo / ".git" / "hooks" / "pre-commit").exists()
        assert not (repo / "sub").exists()
    else:
        assert not any(result.is_error for result in results), results
        assert (repo / ".git" / "hooks" / "pre-commit").read_text() == "x"
