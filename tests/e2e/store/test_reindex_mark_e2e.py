"""`openvaala reindex` leaves the index as a clean stop does (docs/storage.md, "The index's check
at start"): the start after it does not check every page again (seconds at 50,000
conversations), and the conversations are all there. Against the real daemon and command."""

from __future__ import annotations

from tests.e2e.store.test_closed_mark_e2e import CHECKED
from tests.e2e.store.test_hardening_storage import _fill_store, _list_all
from tests.support.daemon import Daemon


async def test_the_start_after_a_reindex_trusts_the_index_it_built(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    d: Daemon = daemon_factory(start=False)
    ids = await _fill_store(d.data_dir, 20)
    done = d.cli("reindex")
    assert done.returncode == 0, done.stderr
    assert "indexed 20 conversations" in done.stdout

    d.start()
    assert await _list_all(d) == ids
    log = d.log()
    assert CHECKED not in log and "rebuilding" not in log
