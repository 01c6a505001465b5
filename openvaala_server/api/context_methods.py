"""The context methods (docs/protocol.md "Context"): the trace of the next request, pins, and
what a summary replaced. Read params, call runtime/context_view.py, shape the result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from openvaala_server.api.connection import Connection
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params
from openvaala_server.runtime import context_view, history

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]


def context_methods(runtime: ConversationManager) -> dict[str, Handler]:
    async def context(conn: Connection, p: Params) -> w.ContextTrace:
        conv = await runtime.open(p.id("conversationId"))
        session = conv.session(p.id("sessionId", None))
        return await context_view.context_result(conv, session, p.boolean("includeBody", False))

    async def pin(conn: Connection, p: Params) -> w.PinResult:
        return await _set_pin(p, True)

    async def unpin(conn: Connection, p: Params) -> w.PinResult:
        return await _set_pin(p, False)

    async def _set_pin(p: Params, on: bool) -> w.PinResult:
        conv = await runtime.open(p.id("conversationId"))
        session = conv.session(p.id("sessionId", None))
        return await context_view.set_pinned(conv, session, p.id("itemId"), on)

    async def replaced(conn: Connection, p: Params) -> w.ReplacedResult:
        conv = await runtime.open(p.id("conversationId"))
        session = conv.session(p.id("sessionId", None))
        await conv.ensure_history()
        if session.session_id == conv.root_session_id:
            items = await history.root_history(runtime, conv)
        else:
            items = session.items
        return context_view.replaced_by(items, p.id("summaryItemId"))

    return {
        m.CONVERSATION_CONTEXT: context,
        m.CONVERSATION_PIN: pin,
        m.CONVERSATION_UNPIN: unpin,
        m.CONVERSATION_REPLACED: replaced,
    }
