"""A conversation whose working directory is `/` (or holds /proc, /tmp, /run, /sys): binding it
writable must not bring the host's /proc, /tmp, /run or a writable /sys back into the sandbox.

Through the host's /proc, `/proc/<daemon pid>/root/<data dir>/token` is the daemon's token: the
hiding mounts are in the sandbox's mount namespace, not the daemon's. Real bubblewrap, a real
daemon, a fake provider scripting the attacker's command.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.providers import FakeProvider
from tests.server.tools.attacker import agent, running_daemon, shell_call
from tests.server.tools.sandbox_places import TOKEN, Places
from tests.support.daemon import Daemon

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")


@pytest.fixture
def daemon(places: Places, fake_openai: FakeProvider) -> Iterator[Daemon]:
    with running_daemon(places, fake_openai.config_toml("fake") + agent()) as started:
        yield started


@pytest.fixture
def host_tmp_file() -> Iterator[Path]:
    """A file in the host's /tmp, which a sandboxed command must not see."""
    path = Path("/tmp") / f"openvaala-host-{secrets.token_hex(4)}"
    path.write_text("host tmp\n")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def kept_in_run() -> str:
    """What a sandboxed /run holds: only the way to /etc/resolv.conf, when it leads there."""
    resolv = Path(os.path.realpath("/etc/resolv.conf"))
    return resolv.relative_to("/run").parts[0] if resolv.is_relative_to("/run") else ""


@pytest.mark.timeout(120)  # a shell call at `/` (the sandbox's places, the checkpoint survey)
async def test_a_conversation_at_root_gets_no_host_proc_tmp_run_or_sys(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, host_tmp_file: Path
) -> None:
    command = (
        f"cat {places.token}; "
        f"for p in /proc/[0-9]*; do cat $p/root{places.token} 2>/dev/null && echo FROM:$p; done; "
        f"cat {host_tmp_file}; echo RUN:$(ls /run); "
        "touch /sys/fs/cgroup/openvaala-probe 2>/dev/null && echo SYS-WRITABLE; "
        "echo end"
    )
    output = await shell_call(daemon, fake_openai, command, "/")
    assert "end" in output  # the command ran, at /
    assert TOKEN not in output and "FROM:" not in output
    assert "host tmp" not in output
    assert f"RUN:{kept_in_run()}\n" in output  # an empty /run of its own
    assert "SYS-WRITABLE" not in output


async def test_a_conversation_inside_proc_is_refused_saying_why(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    command = f"cat root{places.token}; cat /proc/1/root{places.token}; echo end"
    pid = daemon.process.pid if daemon.process else 1
    output = await shell_call(daemon, fake_openai, command, f"/proc/{pid}")
    assert TOKEN not in output and "end" not in output
    assert "which the sandbox replaces" in output


async def test_a_conversation_under_tmp_keeps_its_directory_and_nothing_else_of_tmp(
    daemon: Daemon, places: Places, fake_openai: FakeProvider, host_tmp_file: Path
) -> None:
    work = Path(tempfile.mkdtemp(prefix="openvaala-work-", dir="/tmp"))
    try:
        command = f"echo made > made.txt; cat {host_tmp_file}; ls /tmp | sed 's/^/TMP:/'; echo end"
        output = await shell_call(daemon, fake_openai, command, str(work))
        assert "end" in output
        assert (work / "made.txt").read_text() == "made\n"  # the cwd is the host's, writable
        assert "host tmp" not in output
        listed = [line for line in output.splitlines() if line.startswith("TMP:")]
        assert listed == [f"TMP:{work.name}"]  # /tmp holds only the way to the cwd
    finally:
        shutil.rmtree(work, ignore_errors=True)
