"""A subagent at rest in an editor, after a cold open (docs/protocol.md, "Snapshot": its items
are not in a snapshot; docs/editors.md): the bridge reads its last page before it draws the
subagent's transcript, and `openvaala/read` (the chat panel's paging) pages its whole history.
Real daemon on real store data, real bridge."""

from __future__ import annotations

from typing import Any

from openvaala_lsp import uris
from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.support import subagent_history
from tests.support.daemon import Daemon


async def test_a_closed_subagents_transcript_and_pages_after_a_cold_open(
    daemon_factory: Any,
) -> None:
    daemon: Daemon = daemon_factory(start=False)
    written = await subagent_history.write(daemon.home, daemon.workdir, "demo")
    daemon.start()
    client, _rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        uri = uris.conversation_uri(written.cid, written.closed)
        rendered = await request(client, "openvaala/render", {"uri": uri})
        text = rendered["text"]
        shown = [t for t in written.closed_texts if t in text]
        assert shown == written.closed_texts[-100:]
        assert "ROOT-ANSWER" not in text

        where: dict[str, Any] = {"conversationId": written.cid, "sessionId": written.idle}
        page = await request(client, "openvaala/read", where)
        assert [i["text"] for i in page["items"]] == written.idle_texts
        assert page["hasMore"] is False
        where = {"conversationId": written.cid, "sessionId": written.closed, "limit": 200}
        last = await request(client, "openvaala/read", where)
        older = await request(
            client, "openvaala/read", {**where, "beforeItem": last["items"][0]["itemId"]}
        )
        texts = [i["text"] for i in older["items"] + last["items"]]
        assert texts == written.closed_texts and older["hasMore"] is False
    finally:
        await stop_lsp(client)
