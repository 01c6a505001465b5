"""`openvaala --version` answers with the installed package's version."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version


def test_version_answers_with_the_installed_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openvaala_server", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"openvaala {version('openvaala')}"
