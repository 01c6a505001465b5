"""A second conversation whose id shares the first 8 characters of another's, as two
conversations' ids will once in a while: made on disk (ids come from the daemon's random
source), then indexed by `openvaala reindex` with the daemon stopped."""

from __future__ import annotations

import shutil

from tests.support.daemon import Daemon


def add_twin(d: Daemon, cid: str) -> str:
    """A copy of conversation `cid` under an id that starts with `cid[:8]` (the short id the
    lists show) and differs from the ninth character on. Restarts the daemon."""
    twin = cid[:8] + ("0" if cid[8] != "0" else "1") * 24
    d.stop()
    source = d.data_dir.conversation_dir(cid)
    target = d.data_dir.conversation_dir(twin)
    shutil.copytree(source, target)
    metadata = target / "metadata.jsonl"
    metadata.write_text(metadata.read_text().replace(cid, twin))
    indexed = d.cli("reindex", timeout=120)
    assert indexed.returncode == 0, indexed.stderr
    d.start()
    return twin
