"""The read-only transcript documents: content (`workspace/textDocumentContent` or the
`openvaala/render` fallback), refreshes after changes, and their code lenses."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from openvaala_lsp import uris
from openvaala_lsp.approvals import answers_for
from openvaala_lsp.edits import line_edits
from openvaala_lsp.host import Host, Mode
from openvaala_lsp.render import Anchor, Rendered, render
from openvaala_lsp.replies import Content
from openvaala_server.protocol.json_types import JsonObject

log = logging.getLogger(__name__)

REFRESH = "$/openvaala/refresh"  # fallback clients: re-request `openvaala/render`
DEBOUNCE_S = 0.05
# VS Code closes and reopens a document to change its language (setTextDocumentLanguage): a
# closed transcript is forgotten only if it was not reopened within this time.
REOPEN_GRACE_S = 2.0


@dataclass
class Known:
    mode: Mode
    version: int  # the view version the editor last received


class Documents:
    def __init__(self, ls: Host) -> None:
        self.ls = ls
        self.known: dict[str, Known] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._closing: dict[str, asyncio.TimerHandle] = {}
        # The last text served per uri (render requests): what `since` edits start from.
        self._served: dict[str, tuple[int, list[str]]] = {}

    def client_has_content(self) -> bool:
        caps = self.ls.client_capabilities
        return get_capability(caps, "workspace.text_document_content", None) is not None

    async def rendered(self, uri: str) -> tuple[uris.DocRef, Rendered, int]:
        ref = uris.parse(uri)
        if ref is None:
            raise JsonRpcInvalidParams(f"not an OpenVaala document: {uri}", data={"param": "uri"})
        view = await self.ls.bridge.watch(ref.conversation_id)
        await self.ls.bridge.page_in(view, ref.session_id)
        return ref, render(view, ref.session_id), view.version

    async def content(self, uri: str, mode: Mode, since: int | None = None) -> Content:
        """The transcript's text; with `since` (the version the editor shows, which it got from
        here) only the line edits from that version, when the bridge still has it."""
        ref, rendered, version = await self.rendered(uri)
        known = self.known.get(ref.uri)
        # Once served through textDocumentContent, refreshes go that way.
        self.known[ref.uri] = Known(
            "content" if known and known.mode == "content" else mode, version
        )
        lines = rendered.text.split("\n")
        if lines[-1] == "":  # lines as an editor's buffer has them: no empty one after the end
            lines.pop()
        last = self._served.get(ref.uri)
        self._served[ref.uri] = (version, lines)
        if since is not None and last is not None and last[0] == since:
            edits = line_edits(last[1], lines)
            return {"uri": ref.uri, "version": version, "since": since, "edits": edits}
        return {"uri": ref.uri, "text": rendered.text, "version": version}

    async def lenses(self, uri: str) -> list[types.CodeLens]:
        if uris.parse(uri) is None:
            return []
        _, rendered, _ = await self.rendered(uri)
        return [lens for anchor in rendered.anchors for lens in _lenses(anchor)]

    def forget(self, uri: str) -> None:
        self.known.pop(uri, None)
        self._served.pop(uri, None)

    def closed(self, uri: str) -> None:
        if uri in self.known and uri not in self._closing:
            loop = asyncio.get_running_loop()
            self._closing[uri] = loop.call_later(REOPEN_GRACE_S, self._closed_for_good, uri)

    def _closed_for_good(self, uri: str) -> None:
        self._closing.pop(uri, None)
        self.forget(uri)

    def opened(self, uri: str) -> None:
        """An editor opened (or reopened) a transcript: keep it refreshed."""
        if (timer := self._closing.pop(uri, None)) is not None:
            timer.cancel()
        ref = uris.parse(uri)
        if ref is None or ref.uri in self.known:
            return
        view = self.ls.bridge.views.get(ref.conversation_id)
        mode: Mode = "content" if self.client_has_content() else "fallback"
        # Unknown version: the next change to the conversation refreshes it.
        self.known[ref.uri] = Known(mode, view.version if view is not None else -1)

    # -- refresh -------------------------------------------------------------------------

    def on_note(self, method: str, params: JsonObject) -> None:
        cid = params.get("conversationId")
        if not isinstance(cid, str) or cid in self._pending:
            return
        view = self.ls.bridge.views.get(cid)
        if view is None:
            return
        stale = [
            u
            for u, k in self.known.items()
            if k.version != view.version and (r := uris.parse(u)) and r.conversation_id == cid
        ]
        if stale:
            self._pending[cid] = asyncio.create_task(self._refresh(cid))

    async def _refresh(self, cid: str) -> None:
        try:
            await asyncio.sleep(DEBOUNCE_S)
        finally:
            self._pending.pop(cid, None)
        view = self.ls.bridge.views.get(cid)
        if view is None:
            return
        for uri, known in list(self.known.items()):
            ref = uris.parse(uri)
            if ref is None or ref.conversation_id != cid or known.version == view.version:
                continue
            if known.mode == "content":
                with contextlib.suppress(JsonRpcException, asyncio.CancelledError):
                    await self.ls.workspace_text_document_content_refresh_async(
                        types.TextDocumentContentRefreshParams(uri=uri)
                    )
            else:
                self.ls.protocol.notify(REFRESH, {"uri": uri, "version": view.version})
        caps = self.ls.client_capabilities
        if get_capability(caps, "workspace.code_lens.refresh_support", False):
            with contextlib.suppress(JsonRpcException, asyncio.CancelledError):
                await self.ls.workspace_code_lens_refresh_async(None)


def _lenses(anchor: Anchor) -> list[types.CodeLens]:
    where = types.Range(types.Position(anchor.line, 0), types.Position(anchor.line, 0))
    cid = anchor.conversation_id
    if anchor.kind == "approval":
        return [
            types.CodeLens(
                where,
                types.Command(
                    title=title,
                    command="openvaala.respondApproval",
                    arguments=[
                        {"conversationId": cid, "approvalId": anchor.approval_id, "decision": d}
                    ],
                ),
            )
            for title, d in answers_for({"grantScope": anchor.grant_scope})
        ]
    if anchor.kind == "subagent":
        follow = {"conversationId": cid, "sessionId": anchor.session_id}
        return [
            types.CodeLens(
                where, types.Command(title="Follow", command="openvaala.follow", arguments=[follow])
            )
        ]
    fork = {"conversationId": cid, "upToItemId": anchor.fork_up_to}
    rewind = {"conversationId": cid, "messageId": anchor.item_id}
    return [
        types.CodeLens(
            where, types.Command(title="Fork here", command="openvaala.fork", arguments=[fork])
        ),
        types.CodeLens(
            where,
            types.Command(title="Rewind here", command="openvaala.rewind", arguments=[rewind]),
        ),
    ]


def register(ls: Host) -> None:
    @ls.feature(
        types.WORKSPACE_TEXT_DOCUMENT_CONTENT,
        types.TextDocumentContentOptions(schemes=[uris.SCHEME]),
    )
    async def text_document_content(
        ls: Host, params: types.TextDocumentContentParams
    ) -> types.TextDocumentContentResult:
        result = await ls.documents.content(params.uri, "content")
        return types.TextDocumentContentResult(text=result["text"])

    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS)
    async def code_lens(ls: Host, params: types.CodeLensParams) -> list[types.CodeLens]:
        return await ls.documents.lenses(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Host, params: types.DidCloseTextDocumentParams) -> None:
        ls.documents.closed(params.text_document.uri)

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Host, params: types.DidOpenTextDocumentParams) -> None:
        ls.documents.opened(params.text_document.uri)
