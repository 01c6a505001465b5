"""The read-only transcript document `openvaala://conversation/<id>`: served through
`workspace/textDocumentContent` (LSP 3.18) to editors that have it, through `openvaala/render`
to the others, refreshed on change, with code lenses."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.harness import Recorder, capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon


async def _conversation(client: LanguageClient, text: str) -> str:
    new = await request(client, "openvaala/conversations/new", {})
    cid = str(new["conversation"]["conversationId"])
    await request(client, "openvaala/prompt", {"conversationId": cid, "text": text})
    return cid


async def _content(client: LanguageClient, uri: str) -> str:
    result = await client.workspace_text_document_content_async(
        types.TextDocumentContentParams(uri=uri)
    )
    return result.text


async def test_text_document_content_and_refresh(daemon: Daemon) -> None:
    caps = capabilities("visual-studio-code", text_document_content=True)
    client, rec, init = await start_lsp(daemon, caps)
    try:
        workspace = init.capabilities.workspace
        assert workspace is not None and workspace.text_document_content is not None
        assert list(workspace.text_document_content.schemes) == ["openvaala"]

        cid = await _conversation(client, "first message")
        uri = f"openvaala://conversation/{cid}"
        text = await _content(client, uri)
        assert text.startswith("# first message\n")
        assert "## You\n\nfirst message\n" in text
        assert "## Assistant\n\nYou said: “first message”" in text
        assert "reported)" in text  # the context line

        await request(client, "openvaala/prompt", {"conversationId": cid, "text": "second one"})
        await rec.until(lambda: uri in rec.refreshed)
        assert rec.fallback_refreshed == []
        text = await _content(client, uri)
        assert text.index("first message") < text.index("second one")
    finally:
        await stop_lsp(client)


async def test_render_fallback_and_refresh_notification(daemon: Daemon) -> None:
    client, rec, init = await start_lsp(daemon, capabilities("neovim"))
    try:
        workspace = init.capabilities.workspace
        assert workspace is None or workspace.text_document_content is None
        cid = await _conversation(client, "hello from neovim")
        uri = f"openvaala://conversation/{cid}"
        shown = await request(client, "openvaala/render", {"uri": uri})
        assert shown["uri"] == uri and "## You\n\nhello from neovim" in shown["text"]

        await request(client, "openvaala/prompt", {"conversationId": cid, "text": "more"})
        await rec.until(lambda: uri in rec.fallback_refreshed)
        again = await request(client, "openvaala/render", {"uri": uri})
        assert again["version"] > shown["version"] and "## You\n\nmore" in again["text"]
        assert rec.refreshed == []
    finally:
        await stop_lsp(client)


async def test_code_lenses_fork_and_rewind(lsp: tuple[LanguageClient, Recorder]) -> None:
    client, _rec = lsp
    cid = await _conversation(client, "one")
    await request(client, "openvaala/prompt", {"conversationId": cid, "text": "two"})
    uri = f"openvaala://conversation/{cid}"
    lines = (await request(client, "openvaala/render", {"uri": uri}))["text"].splitlines()
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None
    titles = [(lens.range.start.line, lens.command.title) for lens in lenses if lens.command]
    you = [n for n, line in enumerate(lines) if line == "## You"]
    assert titles == [
        (you[0], "Fork here"),
        (you[0], "Rewind here"),
        (you[1], "Fork here"),
        (you[1], "Rewind here"),
    ]
    # "Rewind here" on the second message: a new conversation with the first exchange only,
    # the message back for the composer.
    rewind = lenses[3].command
    assert rewind is not None and rewind.command == "openvaala.rewind"
    result = await command(client, rewind.command, *(rewind.arguments or []))
    assert result["composerText"] == "two"
    # "Fork here" on the first message keeps its reply.
    fork = lenses[0].command
    assert fork is not None
    forked = await command(client, fork.command, *(fork.arguments or []))
    text = (await request(client, "openvaala/render", {"uri": forked["uri"]}))["text"]
    assert "You said: “one”" in text and "two" not in text
    assert [d.uri for d in client.shown_documents] == [result["uri"], forked["uri"]]


async def test_render_since_a_version_answers_with_line_edits(daemon: Daemon) -> None:
    """An editor that shows version v asks `openvaala/render` with `since: v` and gets only the
    line edits to the new version; applied to what it shows, they give the new text."""
    client, _, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        cid = await _conversation(client, "first message")
        uri = f"openvaala://conversation/{cid}"
        shown = await request(client, "openvaala/render", {"uri": uri})
        lines = shown["text"].split("\n")[:-1]
        await request(client, "openvaala/prompt", {"conversationId": cid, "text": "second one"})
        update = await request(client, "openvaala/render", {"uri": uri, "since": shown["version"]})
        assert "text" not in update and update["since"] == shown["version"]
        for edit in update["edits"]:
            lines[edit["start"] : edit["end"]] = edit["lines"]
        full = await request(client, "openvaala/render", {"uri": uri})
        assert full["version"] == update["version"]
        assert "\n".join(lines) + "\n" == full["text"]
        # Not everything was sent again: the first exchange is untouched.
        assert sum(len(e["lines"]) for e in update["edits"]) < len(lines)
        # A version it no longer has: the whole text.
        stale = await request(client, "openvaala/render", {"uri": uri, "since": 1})
        assert stale["text"] == full["text"]
    finally:
        await stop_lsp(client)
