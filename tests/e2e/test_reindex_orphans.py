"""`openvaala reindex` names a fork whose parent conversation did not come along (a move that
copied only the fork's directory)."""

from __future__ import annotations

import shutil

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


async def test_reindex_reports_a_fork_whose_parent_is_missing(daemon: Daemon) -> None:
    client = await daemon.client()
    try:
        parent = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, parent, "hello")
        fork = (await client.request("conversation/fork", {"conversationId": parent}))[
            "conversation"
        ]["conversationId"]
        await client.subscribe(fork)
        await run_turn(client, fork, "on the fork")
    finally:
        await client.close()
    daemon.stop()
    ok = daemon.cli("reindex")
    assert ok.returncode == 0 and "missing" not in ok.stdout
    shutil.rmtree(daemon.home / "conversations" / parent)
    report = daemon.cli("reindex")
    assert report.returncode == 0, report.stderr
    assert f"fork {fork}: its parent {parent} is missing" in report.stdout
