"""`openvaala exec` with no daemon running spawns the daemon before its own imports: the command
line it goes through imports neither asyncio nor the client library, so the daemon's start (the
longest part of a cold exec) begins as soon as the arguments are parsed (docs/design.md, "A cold
exec, end to end").

The process is the real command (`cli.main`), in a subprocess of its own so that its imports are
its own; only the spawn itself is replaced, by a function that records what was imported by then
and stops there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Recorded at the spawn: the modules imported so far, then the process stops (exit 0).
PROBE = """
import json, sys
from openvaala_server import daemon_spawn

def spawn(root, port=None):
    print(json.dumps(sorted(sys.modules)))
    sys.stdout.flush()
    raise SystemExit(0)

daemon_spawn.spawn = spawn
from openvaala_server.cli import main
main(sys.argv[1:])
raise SystemExit("exec did not start a daemon")
"""

# What exec needs after the spawn, not before it.
NOT_BEFORE_THE_SPAWN = (
    "asyncio",  # the client's event loop
    "websockets",  # the client's connection
    "http.client",  # the wait for the daemon's readiness
    "openvaala_server.exec",  # the turn's follower and its view of the conversation
    "openvaala_server.client.connection",
    "openvaala_server.client.view",
    # The values read up to the spawn are NamedTuples: `dataclasses` imports `inspect`, `ast`
    # and `dis`, and the JSON codec orjson, which imports `dataclasses` (docs/design.md,
    # "Exec's spawn and the daemon's first turn").
    "dataclasses",
    "inspect",
    "orjson",
    "openvaala_server.protocol.codec",
)


def modules_at_spawn(tmp_path: Path, *args: str) -> set[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "OPENVAALA_HOME": str(tmp_path / "home"),
        "OPENVAALA_CONFIG": str(tmp_path / "config.toml"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("args", [("exec", "hello"), ("exec", "--json", "hello")])
def test_exec_spawns_the_daemon_before_importing_its_client(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    imported = modules_at_spawn(tmp_path, *args)
    assert "openvaala_server.cli" in imported  # the probe saw the real command line
    assert sorted(imported & set(NOT_BEFORE_THE_SPAWN)) == []
