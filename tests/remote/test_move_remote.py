"""Bundles between machines: `openvaala move ID --from HOST` and `export --remote HOST ID |
import -` carry a fork with its ancestor and its checkpoints from the remote daemon to this
machine's, through a real sshd."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openvaala_server.client import Client
from openvaala_server.client.remote import ENV_SSH, parse
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon, make_daemon, stop_any_server
from tests.support.events import new_conversation, run_turn
from tests.support.sshd import Sshd


@pytest.fixture(scope="module")
def here(fake: FakeProvider, machines: Path) -> Iterator[Daemon]:
    """This machine's daemon, the one bundles arrive at (started by the first import)."""
    config = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    d = make_daemon(machines, config, name="here")
    yield d
    stop_any_server(d)


def openvaala(
    env: dict[str, str], *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", *args],
        env=env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        cwd=env["PWD"],
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def fork_there(sshd: Sshd, remote: Daemon, fake: FakeProvider) -> tuple[str, str]:
    """(parent, fork) on the remote machine; the parent's turn wrote a file (a checkpoint)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_SSH, sshd.ssh_command)
        return asyncio.run(_make_fork(remote, fake))


async def _make_fork(remote: Daemon, fake: FakeProvider) -> tuple[str, str]:
    client = await Client.connect(remote=parse("remotebox"), reconnect=False)
    try:
        cid = await new_conversation(client, str(remote.workdir))
        fake.enqueue(
            Reply().tool_call("write_file", {"path": "made.txt", "content": "made\n"}),
            Reply().text("Wrote it."),
        )
        await run_turn(client, cid, "write a file")
        fork = await client.request("conversation/fork", {"conversationId": cid})
        fid: str = fork["conversation"]["conversationId"]
        await client.subscribe(fid)
        fake.enqueue(Reply().text("On the fork."))
        await run_turn(client, fid, "and here")
    finally:
        await client.close()
    return cid, fid


def imported_id(stdout: bytes) -> str:
    """The conversation as imported (`imported ID (...)`): new ids when one already is here."""
    line = next(x for x in stdout.decode().splitlines() if x.startswith("imported "))
    return line.split()[1]


async def _arrived(here: Daemon, fid: str) -> None:
    """The fork is on this machine's daemon, with its ancestor and the ancestor's checkpoint."""
    client = await Client.connect(data_dir=here.data_dir, start=False, reconnect=False)
    try:
        listed: list[Any] = (await client.request("conversation/list", {}))["conversations"]
        by_id = {c["conversationId"]: c for c in listed}
        parent = by_id[fid]["forkedFrom"]["conversationId"]
        assert parent in by_id  # the ancestor came along
        assert by_id[fid]["cwd"] == str(here.workdir)  # this machine's directory, not the bundle's
        report = await client.request("conversation/checkpoints", {"conversationId": parent})
        assert [f["path"] for t in report["turns"] for f in t["files"]] == ["made.txt"]
    finally:
        await client.close()


async def test_move_carries_a_fork_with_its_ancestor_and_checkpoints(
    sshd: Sshd, here: Daemon, fork_there: tuple[str, str]
) -> None:
    _, fid = fork_there
    env = {**here.env, ENV_SSH: sshd.ssh_command, "PWD": str(here.workdir)}
    done = openvaala(env, "move", fid[:8], "--from", "remotebox", "--on-conflict", "keep-both")
    assert done.returncode == 0, done.stderr.decode()
    assert f"moved {fid} from remotebox to this machine" in done.stdout.decode()
    await _arrived(here, imported_id(done.stdout))


async def test_export_remote_piped_into_import(
    sshd: Sshd, here: Daemon, fork_there: tuple[str, str]
) -> None:
    _, fid = fork_there
    env = {**here.env, ENV_SSH: sshd.ssh_command, "PWD": str(here.workdir)}
    exported = openvaala(env, "export", "--remote", "remotebox", fid)
    assert exported.returncode == 0, exported.stderr.decode()
    assert f"exported {fid} from remotebox" in exported.stderr.decode()
    imported = openvaala(env, "import", "-", "--on-conflict", "keep-both", stdin=exported.stdout)
    assert imported.returncode == 0, imported.stderr.decode()
    await _arrived(here, imported_id(imported.stdout))


async def test_a_move_onto_a_copy_already_here_says_how_to_answer(
    sshd: Sshd, here: Daemon, fork_there: tuple[str, str]
) -> None:
    """No terminal question over the wire: the error names the flag that answers it."""
    _, fid = fork_there
    env = {**here.env, ENV_SSH: sshd.ssh_command, "PWD": str(here.workdir)}
    first = openvaala(env, "move", fid, "--from", "remotebox", "--on-conflict", "keep-both")
    assert first.returncode == 0, first.stderr.decode()
    again = openvaala(env, "move", fid, "--from", "remotebox")
    assert again.returncode == 1
    said = again.stderr.decode()
    assert "import_conflict: " in said and "pass --on-conflict keep-both or" in said, said
