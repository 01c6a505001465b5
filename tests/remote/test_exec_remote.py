"""`openvaala exec --remote` runs a turn on the remote daemon through a real sshd; a missing
`openvaala` over there is named as such."""

from __future__ import annotations

import base64
import subprocess
import sys

from openvaala_server.exec import EXIT_NO_DAEMON, EXIT_OK
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.remote.conftest import assert_no_daemon_here
from tests.support.daemon import Daemon


def run_exec(env: dict[str, str], *args: str, cwd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openvaala_server", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_exec_runs_the_turn_on_the_remote_daemon_started_on_demand(
    client_env: dict[str, str], remote: Daemon, local: Daemon, fake: FakeProvider
) -> None:
    fake.enqueue(Reply().text("Hello ", "from over there."))
    env = {k: v for k, v in client_env.items() if k != "OPENVAALA_REMOTE"}
    done = run_exec(
        env, "exec", "--remote", f"remotebox:{remote.workdir}", "say hi", cwd=str(local.workdir)
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == "Hello from over there.\n"
    assert "go on: openvaala exec --remote remotebox --resume" in done.stderr  # there, not here
    # The daemon that answered is the remote one, started by the bridge; none started here,
    # and no token of the remote machine reached this one's data directory.
    assert remote.data_dir.token_path.exists()
    assert_no_daemon_here(local)
    listed = run_exec(client_env, "list", "--json", cwd=str(local.workdir))
    assert listed.returncode == 0, listed.stderr
    assert str(remote.workdir) in listed.stdout  # the remote path, as the remote daemon keeps it


def test_a_missing_openvaala_over_there_is_named(client_env: dict[str, str], local: Daemon) -> None:
    env = {**client_env, "OPENVAALA_REMOTE_PROGRAM": "/nonexistent/openvaala"}
    done = run_exec(env, "exec", "hi", cwd=str(local.workdir))
    assert done.returncode == EXIT_NO_DAEMON
    assert "/nonexistent/openvaala` is not installed on remotebox" in done.stderr


# A 1×1 PNG (68 bytes).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNgYAAAAAMAAWgmWQ0AAAAASUVORK5CYII="
)


def test_an_image_of_this_machine_goes_with_the_prompt(
    client_env: dict[str, str], remote: Daemon, local: Daemon, fake: FakeProvider
) -> None:
    (local.workdir / "here-only.png").write_bytes(PNG)  # not on the "remote machine"
    fake.enqueue(Reply().text("a dot"))
    env = {**client_env, "OPENVAALA_REMOTE": f"remotebox:{remote.workdir}"}
    done = run_exec(
        env,
        "exec",
        "--model",
        "seeing",
        "--image",
        "here-only.png",
        "what?",
        cwd=str(local.workdir),
    )
    assert done.returncode == EXIT_OK, done.stderr
    content = fake.last_request.json["messages"][-1]["content"]
    assert (
        content[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    )
    assert not (remote.workdir / "here-only.png").exists()
