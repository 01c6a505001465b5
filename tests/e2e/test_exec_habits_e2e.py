"""`openvaala exec` as a script user meets it (docs/design.md, "openvaala exec"): a typo in
`--allow` is a usage error naming it; the stderr line of a tool call names its command; a resumed
conversation whose directory is gone is pointed at `--cwd` (and without it the error says so);
an agent switch of a run that fails before it starts is not kept; a config edit the daemon
ignored is warned about. The demo model drives the turns."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import Daemon
from tests.support.events import collect_until, method_is, snapshot_of
from tests.support.running import running_daemon

EXIT_OK, EXIT_USAGE = 0, 2

CONFIG = """
[models.demo]
provider = "demo"
pace_ms = 0

[agents.default]
description = "General assistant"
model = "demo"

[agents.reviewer]
description = "Reviews"
model = "demo"
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with running_daemon(tmp_path_factory.mktemp("exec-habits"), CONFIG) as d:
        yield d


def run_exec(d: Daemon, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", "exec", *args],
        env=d.env,
        cwd=cwd or d.workdir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def conversation_id(done: subprocess.CompletedProcess[str]) -> str:
    marker = "openvaala exec --resume "
    return done.stderr.split(marker, 1)[1].split()[0]


async def info_of(d: Daemon, cid: str) -> dict[str, object]:
    client = await d.client(reconnect=False)
    try:
        return dict((await snapshot_of(client, cid))["conversation"])
    finally:
        await client.close()


def test_an_allow_typo_is_a_usage_error_naming_it(home: Daemon) -> None:
    done = run_exec(home, "--allow", "shel", "hello")
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "'shel'" in done.stderr and "did you mean 'shell'" in done.stderr
    assert run_exec(home, "--allow", "mcp__docs__search", "hi").returncode == EXIT_OK


def test_the_tool_line_names_the_command(home: Daemon) -> None:
    done = run_exec(home, "run: ls -la")
    assert done.returncode == EXIT_OK, done.stderr
    assert "openvaala: tool shell: ls -la\n" in done.stderr


async def test_cwd_re_points_a_conversation_whose_directory_is_gone(
    home: Daemon, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    done = run_exec(home, "--cwd", str(first), "hello")
    assert done.returncode == EXIT_OK, done.stderr
    cid = conversation_id(done)
    shutil.rmtree(first)
    refused = run_exec(home, "--resume", cid, "again")
    assert refused.returncode == EXIT_USAGE
    assert f"directory {first} does not exist: pass --cwd DIR" in refused.stderr
    moved = run_exec(home, "--cwd", str(second), "--resume", cid, "again")
    assert moved.returncode == EXIT_OK, moved.stderr
    assert f"works in {second} now" in moved.stderr
    assert (await info_of(home, cid))["cwd"] == str(second)


async def test_an_agent_switch_of_a_run_that_fails_first_is_not_kept(home: Daemon) -> None:
    done = run_exec(home, "hello")
    cid = conversation_id(done)
    failed = run_exec(home, "--resume", cid, "--agent", "reviewer", "--model", "gone", "again")
    assert failed.returncode == EXIT_USAGE, failed.stderr
    assert "model 'gone' is not configured" in failed.stderr
    assert (await info_of(home, cid))["agent"] == "default"


async def test_an_ignored_config_edit_is_warned_about(home: Daemon) -> None:
    client = await home.client(reconnect=False)
    good = home.config_path.read_text()
    try:
        home.config_path.write_text(good + "\n[agents.default]\nsandboxx = 1\n")
        await collect_until(client, method_is("config/error"))
        done = run_exec(home, "hello")
        assert done.returncode == EXIT_OK, done.stderr
        assert "warning: the last edit of the config file was ignored" in done.stderr
    finally:
        home.config_path.write_text(good)
        await collect_until(client, method_is("config/reloaded"))
        await client.close()
