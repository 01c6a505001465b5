"""`--cwd ~/proj` as the shell leaves it (`--cwd=~/proj`, or in quotes): `exec`, the terminal UI and
`import` read a leading `~` as this user's home, as the daemon does in a `cwd` (docs/protocol.md),
instead of refusing a directory that exists. The real commands, as a user types them, against a
real daemon; HOME is a temporary directory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.e2e.test_cli_tui_flags import spawn
from tests.support.daemon import DEFAULT_CONFIG, Daemon
from tests.support.events import snapshot_of
from tests.support.running import running_daemon


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("user-home")
    (path / "proj").mkdir()
    return path


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Iterator[Daemon]:
    with running_daemon(
        tmp_path_factory.mktemp("cli-home-cwd"), DEFAULT_CONFIG, {"HOME": str(home)}
    ) as d:
        yield d


def user_env(daemon: Daemon, home: Path) -> dict[str, str]:
    return dict(daemon.env, HOME=str(home))


def openvaala(daemon: Daemon, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command with `args` exactly as given: no shell expands a `~` in them."""
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", *args],
        env=user_env(daemon, home),
        cwd=daemon.workdir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def made_conversation(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stderr.split("openvaala exec --resume ", 1)[1].split()[0]


async def cwd_of(daemon: Daemon, cid: str) -> str:
    client = await daemon.client()
    try:
        return str((await snapshot_of(client, cid))["conversation"]["cwd"])
    finally:
        await client.close()


async def test_exec_runs_in_the_home_directory_named_with_a_tilde(
    daemon: Daemon, home: Path
) -> None:
    cid = made_conversation(openvaala(daemon, home, "exec", "--cwd=~/proj", "hello"))
    assert await cwd_of(daemon, cid) == str(home / "proj")
    missing = openvaala(daemon, home, "exec", "--cwd", "~/nope", "hello")
    assert missing.returncode == 2
    assert f"{home / 'nope'} does not exist" in missing.stderr  # the path that was looked for


async def test_the_terminal_ui_opens_in_the_home_directory_named_with_a_tilde(
    daemon: Daemon, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))  # the user's, in the command's environment
    child = spawn(daemon, "--cwd=~/proj")
    try:
        seen = child.expect(["Tab queue", "does not exist", pexpect.EOF])  # the composer is up
        assert seen == 0, child.before
        child.send("hello from home\r")
        # The demo model's reply ("demo model" alone is on the welcome screen before the send).
        child.expect("You said")
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    client = await daemon.client()
    try:
        listed = (await client.request("conversation/list", {}))["conversations"]
    finally:
        await client.close()
    assert [c["cwd"] for c in listed if c["title"] == "hello from home"] == [str(home / "proj")]


async def test_import_gives_the_home_directory_named_with_a_tilde(
    daemon: Daemon, home: Path, tmp_path: Path
) -> None:
    cid = made_conversation(openvaala(daemon, home, "exec", "carry me"))
    bundle = tmp_path / "one.tar"
    assert openvaala(daemon, home, "export", cid, "-o", str(bundle)).returncode == 0
    done = openvaala(
        daemon, home, "import", str(bundle), "--cwd", "~/proj", "--on-conflict", "keep-both"
    )
    assert done.returncode == 0, done.stderr
    client = await daemon.client()
    try:
        listed = (await client.request("conversation/list", {}))["conversations"]
    finally:
        await client.close()
    copies = [c for c in listed if c["title"] == "carry me" and c["conversationId"] != cid]
    assert [c["cwd"] for c in copies] == [str(home / "proj")]
