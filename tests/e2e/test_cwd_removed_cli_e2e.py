"""A command run from a directory that was removed since the shell entered it (`rm -rf` of the
project from another terminal): `exec`, the terminal UI and `import` without `--cwd` say so and
exit 2, instead of a traceback. The real commands, from such a directory."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

GONE = "the current directory no longer exists: cd to another one, or pass --cwd DIR"


@pytest.mark.parametrize(
    "args", [["exec", "hello"], [], ["import", "bundle.tar"]], ids=["exec", "tui", "import"]
)
def test_a_removed_current_directory_is_said(tmp_path: Path, args: list[str]) -> None:
    gone = tmp_path / "project"
    gone.mkdir()
    command = shlex.join([sys.executable, "-m", "openvaala_server", *args])
    done = subprocess.run(
        ["sh", "-c", f'cd {shlex.quote(str(gone))} && rmdir "$PWD" && exec {command}'],
        # No daemon is needed to say it: none is started on this data directory.
        env={**os.environ, "OPENVAALA_HOME": str(tmp_path / "data")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert GONE in done.stderr
    assert not (tmp_path / "data" / "token").exists()  # no daemon was started for it
