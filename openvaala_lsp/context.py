"""Context for editors (docs/editors.md, docs/protocol.md "Context"): the trace of the next
request with its lines for a hover or a picker (`openvaala/context`, `openvaala.context`), its
provider body to copy (`openvaala.contextJson`), pins (`openvaala/pin`, `openvaala/unpin`) and
what a summary replaced, with a jump to it in the conversation's document (`openvaala/replaced`,
`openvaala.replaced` shows the document there)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from openvaala_lsp import uris
from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, as_params, from_arguments, required, session_params
from openvaala_lsp.render import render
from openvaala_lsp.replies import ContextJson, ContextReply, ReplacedReply
from openvaala_lsp.usage import report
from openvaala_server.protocol import codec, methods, payloads

# What each handler answers is declared on it; the editor gets it as JSON.
Run = Callable[[Host, Params], Awaitable[object]]


def trace_lines(result: payloads.ContextTrace) -> list[str]:
    """The trace as plain lines: one per part with its tokens, then what was left out."""
    lines = [f"Next request: about {int(result.get('total') or 0):,} tokens"]
    for part in result.get("parts") or []:
        lines.append(f"{part.get('label')}: {int(part.get('tokens') or 0):,}")
    for omitted in result.get("omitted") or []:
        count = len(omitted.get("itemIds") or [])
        lines.append(f"Left out: {count} item{'s' * (count != 1)}, {omitted.get('reason')}")
    return lines


async def context(ls: Host, params: Params) -> ContextReply:
    call: payloads.ContextParams = {
        **session_params(params),
        "includeBody": bool(params.get("includeBody")),
    }
    result = await ls.bridge.request(methods.CONVERSATION_CONTEXT, call)
    gauge = report(call["conversationId"], result["sessionId"], result.get("usage") or {})
    return {**result, "lines": trace_lines(result), "gauge": gauge}


async def context_json(ls: Host, params: Params) -> ContextJson:
    """The provider body of the next request, as text to put on the clipboard."""
    call: payloads.ContextParams = {**session_params(params), "includeBody": True}
    result = await ls.bridge.request(methods.CONVERSATION_CONTEXT, call)
    body = result.get("body")
    return {"body": body, "json": codec.text(body, indent=2) if body else ""}


async def pin(ls: Host, params: Params) -> payloads.PinResult:
    call: payloads.PinParams = {**session_params(params), "itemId": required(params, "itemId")}
    return await ls.bridge.request(methods.CONVERSATION_PIN, call)


async def unpin(ls: Host, params: Params) -> payloads.PinResult:
    call: payloads.PinParams = {**session_params(params), "itemId": required(params, "itemId")}
    return await ls.bridge.request(methods.CONVERSATION_UNPIN, call)


async def replaced(ls: Host, params: Params, *, show: bool = False) -> ReplacedReply:
    """What a summary replaced; `location` is where the conversation's document shows the first
    of those messages (when it does), and `show` opens the document there."""
    call: payloads.ReplacedParams = {
        **session_params(params),
        "summaryItemId": required(params, "summaryItemId"),
    }
    result = await ls.bridge.request(methods.CONVERSATION_REPLACED, call)
    cid = call["conversationId"]
    view = ls.bridge.views.get(cid)
    if view is not None:
        ids = set(result.get("itemIds") or [])
        rendered = render(view, call.get("sessionId"))
        line = next((a.line for a in rendered.anchors if a.item_id in ids), None)
        if line is not None:
            uri = uris.conversation_uri(cid, call.get("sessionId"))
            caps = ls.client_capabilities
            if show and get_capability(caps, "window.show_document.support", False):
                await _show_at(ls, uri, line)
            return {**result, "location": {"uri": uri, "line": line}}
    # Without a location the reply is the daemon's result as it is.
    return cast(ReplacedReply, result)


async def _show_at(ls: Host, uri: str, line: int) -> None:
    spot = types.Range(types.Position(line, 0), types.Position(line, 0))
    try:
        await ls.window_show_document_async(
            types.ShowDocumentParams(uri=uri, take_focus=True, selection=spot)
        )
    except Exception:
        # The editor's own failure, e.g. Neovim placing the cursor in a transcript whose text has
        # not arrived yet: show the document, and the plugin moves there itself.
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))


async def _replaced_shown(ls: Host, params: Params) -> ReplacedReply:
    return await replaced(ls, params, show=True)


REQUESTS: dict[str, Run] = {
    "openvaala/context": context,
    "openvaala/pin": pin,
    "openvaala/unpin": unpin,
    "openvaala/replaced": replaced,
}
COMMANDS: dict[str, tuple[Run, tuple[str, ...]]] = {
    "openvaala.context": (context, ("conversationId", "sessionId")),
    "openvaala.contextJson": (context_json, ("conversationId", "sessionId")),
    "openvaala.pin": (pin, ("conversationId", "itemId", "sessionId")),
    "openvaala.unpin": (unpin, ("conversationId", "itemId", "sessionId")),
    "openvaala.replaced": (_replaced_shown, ("conversationId", "summaryItemId", "sessionId")),
}


def register(ls: Host) -> None:
    for method, run in REQUESTS.items():
        _request(ls, method, run)
    for name, (run, positional) in COMMANDS.items():
        _command(ls, name, run, positional)


def _request(ls: Host, method: str, run: Run) -> None:
    @ls.feature(method)
    async def handle(server: LanguageServer, params: Any) -> Any:
        return await run(_ours(server), as_params(params))

    handle.__name__ = f"request_{run.__name__}"


def _command(ls: Host, name: str, run: Run, positional: tuple[str, ...]) -> None:
    # pygls reads the annotations at run time: the server is typed as the pygls base class.
    @ls.command(name)
    async def handle(server: LanguageServer, *arguments: Any) -> Any:
        return await run(_ours(server), from_arguments(list(arguments), positional))

    handle.__name__ = f"command_{run.__name__}"


def _ours(server: LanguageServer) -> Host:
    return cast(Host, server)
