"""`conversation/list` with `search` through a real daemon: each conversation found by a message
carries a short snippet of that message, as plain text with the matched words as ranges (UTF-16
code units, what a browser indexes), never as markup; one found only by its title has none."""

from __future__ import annotations

from typing import Any

from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.index_wait import search_until

FILLER = " ".join(f"word{n}" for n in range(400))


def _utf16(text: str, start: int, end: int) -> str:
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


async def test_search_results_carry_a_bounded_snippet_with_match_ranges(
    daemon_factory: Any,
) -> None:
    d: Daemon = daemon_factory()
    client = await d.client()
    try:
        long = await new_conversation(client, str(d.workdir))
        await run_turn(client, long, f"{FILLER} 🦓 the <b>zebra</b> & crossing {FILLER}")
        titled = await new_conversation(client, str(d.workdir))
        await run_turn(client, titled, "nothing striped here")
        await client.request(
            "conversation/rename", {"conversationId": titled, "title": "Zebra notes"}
        )

        found = {c["conversationId"]: c for c in await search_until(client, "zebr", 2)}
        snippet = found[long]["snippet"]
        text = snippet["text"]
        assert "<b>" in text and "\ue000" not in text  # the message's text, as text
        assert len(text) <= 250 and "…" in text  # a few words of a 2,000-word message
        assert snippet["matches"] and all(
            _utf16(text, start, end).lower() == "zebra" for start, end in snippet["matches"]
        )
        assert "snippet" not in found[titled]  # its title matched, the title is shown already

        # Without a search, no snippets (and no extra work).
        listed = (await client.request("conversation/list", {}))["conversations"]
        assert listed and all("snippet" not in c for c in listed)
    finally:
        await client.close()
