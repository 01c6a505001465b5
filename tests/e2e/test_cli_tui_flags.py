"""`openvaala --continue`, `--resume ID`, `tui --cwd DIR` and a missing `--cwd`, as a user types
them: the real command in a pseudo-terminal against a real daemon."""

from __future__ import annotations

import sys

import pexpect

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def spawn(daemon: Daemon, *args: str) -> pexpect.spawn[str]:
    env = dict(daemon.env, TERM="xterm-256color", COLUMNS="100", LINES="30")
    return pexpect.spawn(
        sys.executable,
        ["-m", "openvaala_server", *args],
        env=env,
        cwd=str(daemon.workdir),
        dimensions=(30, 100),
        timeout=30,
        encoding="utf-8",
        codec_errors="replace",
    )


async def _conversation_with(daemon: Daemon, text: str) -> str:
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, cid, text)
        return cid
    finally:
        await client.close()


def _quit(child: pexpect.spawn[str]) -> str:
    child.sendcontrol("q")
    child.expect(pexpect.EOF)
    child.close()
    return str(child.before)


async def test_continue_opens_the_last_conversation_in_this_directory(daemon: Daemon) -> None:
    await _conversation_with(daemon, "older words")
    cid = await _conversation_with(daemon, "the latest words")
    child = spawn(daemon, "--continue")
    try:
        child.expect("the latest words")
        after = _quit(child)
    finally:
        child.close(force=True)
    assert f"openvaala --resume {cid}" in after  # quitting says how to come back


async def test_resume_by_id_and_tui_cwd(daemon: Daemon) -> None:
    cid = await _conversation_with(daemon, "resume me please")
    child = spawn(daemon, "tui", "--resume", cid)
    try:
        child.expect("resume me please")
        _quit(child)
    finally:
        child.close(force=True)
    other = daemon.workdir / "other"
    other.mkdir()
    child = spawn(daemon, "tui", "--cwd", str(other))
    try:
        child.expect("other")  # the first screen names the working directory
        _quit(child)
    finally:
        child.close(force=True)


def test_an_unknown_resume_id_and_a_missing_cwd_fail_before_the_screen(daemon: Daemon) -> None:
    child = spawn(daemon, "--resume", "0" * 32)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1, child.before
    child = spawn(daemon, "--cwd", str(daemon.workdir / "nope"))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus not in (0, None) and "does not exist" in str(child.before)
