"""A start trusts an index the last clean stop left untouched, and checks every page of any other
(docs/storage.md, "The index's check at start"): the check grows with the index, while damage
done after the stop, even keeping the file's size and modification time, is still found and the
index rebuilt. Against the real daemon."""

from __future__ import annotations

import os

from openvaala_server.store import closed_mark
from tests.e2e.store.test_hardening_storage import _damage, _fill_store, _list_all
from tests.support.daemon import Daemon

CHECKED = "checking every page of"


async def test_an_untouched_index_is_trusted_and_a_touched_one_is_checked(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    d: Daemon = daemon_factory(start=False)
    ids = await _fill_store(d.data_dir, 300)  # closed cleanly
    db = d.data_dir.metadata_db
    assert closed_mark.unchanged(db)

    d.start()
    assert await _list_all(d) == ids
    assert CHECKED not in d.log()
    # Gone while the daemon writes: a daemon killed now leaves nothing that vouches for the file.
    assert not closed_mark.mark_path(db).exists()
    d.stop()
    assert closed_mark.unchanged(db)

    # Damage that keeps the file's size and modification time: only its change time tells.
    before = db.stat()
    _damage(db, first_page=50, pages=20)
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (db.stat().st_size, db.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    d.start()
    assert await _list_all(d) == ids
    log = d.log()
    assert CHECKED in log and "rebuilding" in log
