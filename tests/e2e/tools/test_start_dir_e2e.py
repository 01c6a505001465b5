"""A module an agent writes into the directory the daemon was started in must never run inside
the daemon (docs/security.md, start_dir.py).

The user starts `openvaala` in a project; that project is the agent's working directory. Before
the fix, `python -m openvaala_server serve` put it first on `sys.path`: an `inotify_simple.py`
written by the agent shadowed the real one at the daemon's next start, and a planted
`openvaala_server/` package replaced the daemon itself on `openvaala serve start`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from openvaala_server.discovery import is_locked
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.server.tools.attacker import agent, running_daemon
from tests.server.tools.sandbox_places import Places
from tests.support.daemon import Daemon, stop_any_server
from tests.support.events import new_conversation, run_turn


def payload(mark: Path) -> str:
    """A module that leaves a mark, then stands aside for the real one of the same name."""
    return (
        f"open({str(mark)!r}, 'w').write('ran in the daemon')\n"
        "import sys, os\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != here]\n"
        "del sys.modules[__name__]\n"
        "import inotify_simple as _real\n"
        "globals().update(vars(_real))\n"
    )


@pytest.fixture
def daemon(
    places: Places, fake_openai: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Daemon]:
    # The user ran `openvaala` in the project: the daemon starts there.
    monkeypatch.chdir(places.work)
    with running_daemon(places, fake_openai.config_toml("fake") + agent()) as started:
        yield started


async def test_a_module_written_by_the_agent_is_not_imported_at_the_next_start(
    daemon: Daemon, places: Places, fake_openai: FakeProvider
) -> None:
    mark = places.outside / "imported"
    fake_openai.enqueue(
        Reply().tool_call("write_file", {"path": "inotify_simple.py", "content": payload(mark)}),
        Reply().text("written"),
        Reply().tool_call("shell", {"command": "echo hi > after.txt"}),
        Reply().text("done"),
    )
    client = await daemon.client()
    cid = await new_conversation(client, str(places.work))
    await run_turn(client, cid, "write it")
    await client.close()
    assert (places.work / "inotify_simple.py").exists()
    daemon.restart()  # still in the project directory
    client = await daemon.client()
    await client.subscribe(cid)
    await run_turn(client, cid, "go on")  # a turn: the files of the workspace are watched
    await client.close()
    assert (places.work / "after.txt").exists()
    assert not mark.exists(), "the daemon imported a module the agent wrote"


def test_serve_start_ignores_a_package_planted_in_the_start_directory(
    places: Places, fake_openai: FakeProvider
) -> None:
    mark = places.outside / "planted-daemon"
    planted = places.work / "openvaala_server"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text(f"open({str(mark)!r}, 'w').write('x')\n")
    places.config.write_text(fake_openai.config_toml("fake") + agent())
    daemon = Daemon(home=places.data, config_path=places.config, workdir=places.work)
    try:
        # As the `openvaala` command runs it: a console script, whose own sys.path has no
        # start directory (`-P` here); the daemon it starts inherits the start directory.
        done = subprocess.run(
            [sys.executable, "-P", "-m", "openvaala_server", "serve", "start", "--port", "0"],
            cwd=places.work,
            env=daemon.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert not mark.exists(), "`serve start` ran a package planted in the start directory"
        assert done.returncode == 0, done.stderr
        assert is_locked(daemon.data_dir.lock_path)
    finally:
        stop_any_server(daemon)
