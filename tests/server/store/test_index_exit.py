"""A process that ends without closing its store still ends (aiosqlite's threads would keep it
waiting at exit), and the index it left open is rebuilt by the next start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from openvaala_server.store import index as ix

REPO = Path(__file__).resolve().parents[3]
SCRIPT = """
import asyncio, sys
from pathlib import Path
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

KEEP = []

async def main() -> None:
    KEEP.append(await Store.open(DataDir(Path(sys.argv[1]))))  # never closed

asyncio.run(main())
print("returned", flush=True)
"""


def test_a_process_that_never_closes_its_store_still_exits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(home)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "returned" in done.stdout
    assert ix.needs_rebuild(home / "metadata.db") == "the last server did not close it cleanly"
