"""A daemon killed with SIGKILL left its index marked "not closed cleanly": whatever happened to
the file meanwhile (here pages past the first rows overwritten), the next start rebuilds it from the
journals and every conversation is listed. Against the real daemon."""

from __future__ import annotations

from tests.e2e.store.test_hardening_storage import _damage, _fill_store, _list_all
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


async def test_a_killed_daemon_has_its_damaged_index_rebuilt_at_start(daemon_factory) -> None:  # type: ignore[no-untyped-def]
    d: Daemon = daemon_factory(start=False)
    ids = await _fill_store(d.data_dir, 300)
    d.start()
    client = await d.client()
    cid = await new_conversation(client, str(d.workdir))
    await run_turn(client, cid, "hello")
    ids.add(cid)
    await client.close()
    d.kill()
    _damage(d.data_dir.metadata_db, first_page=50, pages=20)

    d.start()
    assert await _list_all(d) == ids
    assert "did not close it cleanly" in d.log()
