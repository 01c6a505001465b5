"""The import contracts in pyproject.toml (`[tool.importlinter]`, docs/design.md "Import
contracts") hold: no import cycle anywhere, the clients never import the daemon's internals, the
pure core imports no I/O layer or library, tools and MCP never import the runtime.

import-linter builds the graph (grimp) from the source, function-level and `TYPE_CHECKING`
imports included; run in a child process so its cache and its parse stay out of this worker.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_contract_is_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    child = subprocess.run(
        [str(lint), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert child.returncode == 0, child.stdout + child.stderr
    assert "0 broken" in child.stdout
