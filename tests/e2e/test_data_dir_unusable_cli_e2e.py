"""A data directory that cannot be made (a file in its place): `serve start`, `serve restart` and
`reindex` say which and why, as `openvaala serve` does, instead of ending in a traceback. The real
command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    "command", [["serve", "start"], ["serve", "restart"], ["reindex"], ["serve"]]
)
def test_a_file_where_the_data_directory_goes_is_named(tmp_path: Path, command: list[str]) -> None:
    in_the_way = tmp_path / "openvaala-data"
    in_the_way.write_text("not a directory")
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", *command],
        env={**os.environ, "OPENVAALA_HOME": str(in_the_way)},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"cannot write to {in_the_way}: it is not a directory" in done.stderr
    assert in_the_way.read_text() == "not a directory"  # left as it was
