"""VS Code's `setTextDocumentLanguage(doc, "markdown")` closes and reopens the transcript at once
(didClose, then didOpen of the same URI): the transcript must stay live across it. Replayed with
VS Code's recorded capabilities, with and without LSP 3.18 textDocumentContent."""

from __future__ import annotations

from functools import partial

import pytest
from lsprotocol import types

from tests.lsp.harness import capabilities, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon


@pytest.mark.parametrize("content", [True, False], ids=["textDocumentContent", "render"])
async def test_close_and_reopen_keeps_the_transcript_refreshed(
    daemon: Daemon, content: bool
) -> None:
    caps = capabilities("visual-studio-code", text_document_content=content)
    client, rec, _ = await start_lsp(daemon, caps)
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        uri = new["uri"]
        # What VS Code does for openTextDocument + showTextDocument + setTextDocumentLanguage.
        if content:
            text = (
                await client.workspace_text_document_content_async(
                    types.TextDocumentContentParams(uri=uri)
                )
            ).text
        else:
            text = (await request(client, "openvaala/render", {"uri": uri}))["text"]
        item = types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        item = types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))

        refreshed = rec.refreshed if content else rec.fallback_refreshed
        for n, words in enumerate(["first after reopen", "second after reopen"], 1):
            await request(client, "openvaala/prompt", {"conversationId": cid, "text": words})
            await rec.until(partial(_at_least, refreshed, uri, n))

        if content:
            shown = await client.workspace_text_document_content_async(
                types.TextDocumentContentParams(uri=uri)
            )
            assert "second after reopen" in shown.text
    finally:
        await stop_lsp(client)


def _at_least(seen: list[str], uri: str, n: int) -> bool:
    return seen.count(uri) >= n
