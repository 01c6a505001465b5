"""The live conversation list (conversation/watchList): another client hears at once of a
conversation saved, renamed, running, finished, forked and deleted (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

from openvaala_server.client import Client
from tests.support.daemon import Daemon


async def _next_change(client: Client) -> dict[str, Any]:
    while True:
        note = await client.next_notification(timeout=10)
        if note["method"] == "conversation/listChanged":
            return dict(note["params"])


async def test_a_watching_client_hears_of_every_change_to_the_list(daemon: Daemon) -> None:
    watcher = await daemon.client("watcher")
    other = await daemon.client("other")
    try:
        assert await watcher.request("conversation/watchList", {}) == {"watching": True}
        created = await other.request("conversation/create", {"cwd": str(daemon.workdir)})
        cid = created["conversation"]["conversationId"]
        await other.request("input/send", {"conversationId": cid, "text": "hello"})
        # Saved with its first message, then running, then finished: each is told.
        seen: list[dict[str, Any]] = []
        statuses: list[str] = []
        while "running" not in statuses or statuses[-1] != "idle":
            change = await _next_change(watcher)
            assert change["conversation"]["conversationId"] == cid
            assert change["conversation"]["persisted"] is True  # an unsaved one is not listed
            seen.append(change)
            statuses.append(change["conversation"]["status"])
        assert statuses[0] == "idle"  # saved, before its turn starts

        await other.request("conversation/rename", {"conversationId": cid, "title": "Renamed"})
        assert (await _next_change(watcher))["conversation"]["title"] == "Renamed"
        forked = await other.request("conversation/fork", {"conversationId": cid})
        fork = (await _next_change(watcher))["conversation"]
        assert fork["conversationId"] == forked["conversation"]["conversationId"]
        assert fork["forkedFrom"]["conversationId"] == cid
        await other.request("conversation/delete", {"conversationId": cid})
        assert await _next_change(watcher) == {"conversationId": cid, "deleted": True}

        # Unwatched: nothing more arrives for list changes.
        await watcher.request("conversation/unwatchList", {})
        await other.request(
            "conversation/rename", {"conversationId": fork["conversationId"], "title": "x"}
        )
        await other.request("conversation/list", {})  # a round trip after the rename
        assert watcher._notes.empty()
    finally:
        await watcher.close()
        await other.close()
