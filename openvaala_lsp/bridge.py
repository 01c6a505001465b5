"""The bridge's one connection to the daemon (a `Link` of the client library: connecting,
reconnecting and restarting a lost daemon are the library's), the transcripts it folds for the
editor, and the pump that hands every notification to the bridge's listeners (forwarding,
documents, progress, usage, turns).

Subscriptions under way are activities of the bridge's supervisor (`tasks`), which the language
server enters for its whole life (server.py `serve_io`), so none outlives it (docs/design.md,
"Structured concurrency")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial

from pygls.exceptions import JsonRpcException

from openvaala_lsp.version import __version__
from openvaala_server.client import SNAPSHOT, RpcError
from openvaala_server.client.link import DAEMON_LOST, UNAVAILABLE, Link, LinkErrors
from openvaala_server.client.view import ConversationView
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor

log = logging.getLogger(__name__)

__all__ = ["DAEMON_LOST", "UNAVAILABLE", "Bridge", "DaemonError", "daemon_lost"]

# A prompt cut by the bridge's own shutdown (docs/editors.md, "Errors").
SHUTTING_DOWN = -32092


class DaemonError(JsonRpcException):
    """A daemon error passed on to the editor with its code, message and `data.kind`."""


def _unavailable(message: str) -> DaemonError:
    return DaemonError(message, UNAVAILABLE, {"kind": "daemon_unavailable"})


def daemon_lost() -> DaemonError:
    """What a request waiting on the daemon (a prompt's turn) gets when the daemon goes away."""
    return DaemonError(
        "the OpenVaala daemon stopped during this request; the turn was cut short"
        " (the bridge starts a new daemon: send the message again)",
        DAEMON_LOST,
        {"kind": "daemon_lost"},
    )


def _from_rpc(exc: RpcError) -> DaemonError:
    return DaemonError(exc.message, exc.code, {**exc.data, "kind": exc.kind})


def bridge_closing() -> DaemonError:
    """What a prompt still waiting gets when the editor shuts the bridge down: the daemon and
    the turn go on (nothing interrupted it), and its reply lands in the conversation."""
    return DaemonError(
        "the editor bridge is shutting down; the turn goes on in the daemon, which was not"
        " stopped, and its reply will be in the conversation",
        SHUTTING_DOWN,
        {"kind": "shutting_down"},
    )


ERRORS = LinkErrors(
    unavailable=_unavailable, lost=daemon_lost, rpc=_from_rpc, closing=bridge_closing
)


class Bridge(Link):
    def __init__(self) -> None:
        super().__init__(
            f"openvaala-lsp/{__version__}", ERRORS, closing="the editor bridge is shutting down"
        )
        self.tasks = Supervisor("editor-bridge")
        # Subscriptions under way: every caller waiting for the same view shares one.
        self._watching: dict[str, asyncio.Future[ConversationView]] = {}
        self._buffered: dict[str, list[tuple[str, JsonObject]]] = {}
        self.views: dict[str, ConversationView] = {}
        # Called with a conversation id once its first view exists (the snapshot's state, which
        # no notification carries).
        self.view_listeners: list[Callable[[str], None]] = []

    # -- subscriptions -------------------------------------------------------------------

    async def watch(self, conversation_id: str) -> ConversationView:
        """The conversation's view, subscribing to it on the daemon the first time."""
        view = self.views.get(conversation_id)
        if view is not None:
            return view
        pending = self._watching.get(conversation_id)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._watching[conversation_id] = pending
            subscribe = partial(self._subscribe_into, conversation_id, pending)
            self.tasks.spawn(subscribe, f"bridge-subscribe:{conversation_id}")
        # Shielded: one caller giving up does not cancel the subscription the others wait for.
        return await asyncio.shield(pending)

    async def _subscribe_into(self, cid: str, pending: asyncio.Future[ConversationView]) -> None:
        try:
            view = await self._subscribe(cid)
        except Exception as exc:
            if not pending.done():
                pending.set_exception(exc)
        except BaseException:  # cancelled: the bridge is closing
            pending.cancel()
            raise
        else:
            if not pending.done():
                pending.set_result(view)

    async def _subscribe(self, cid: str) -> ConversationView:
        self._buffered[cid] = []
        try:
            result = await self.subscribe(cid)
            # Approvals have a section of their own in the transcript (render.py), so the view
            # adds no notices for them.
            view = ConversationView.from_snapshot(
                result["snapshot"] or {}, result["seq"], local_notices=False
            )
            for method, params in self._buffered[cid]:
                view.fold(method, params)
            self.views[cid] = view
            for hook in list(self.view_listeners):
                try:
                    hook(cid)
                except Exception:
                    log.exception("view listener failed on %s", cid)
            return view
        finally:
            self._buffered.pop(cid, None)
            self._watching.pop(cid, None)

    async def page_in(self, view: ConversationView, session_id: str | None) -> None:
        """A subagent at rest comes with none of its items in a snapshot (docs/protocol.md,
        "Snapshot"): its last page is read before its transcript is drawn."""
        session = view.sessions.get(session_id or view.root_id)
        if session is None or session.items or not session.has_more:
            return
        page = await self.request(
            methods.CONVERSATION_READ,
            {"conversationId": view.conversation_id, "sessionId": session.session_id},
        )
        if view.prepend(session.session_id, page["items"], page["hasMore"]):
            view.version += 1  # the text drawn changed: a render from an older version edits

    async def unwatch(self, conversation_id: str) -> None:
        if self.views.pop(conversation_id, None) is not None:
            await self.unsubscribe(conversation_id)

    # -- notifications -------------------------------------------------------------------

    def on_event(self, method: str, params: JsonObject) -> None:
        cid = params.get("conversationId")
        if not isinstance(cid, str):
            return
        if method != SNAPSHOT and cid in self._buffered:
            self._buffered[cid].append((method, params))
        elif (view := self.views.get(cid)) is not None:
            # A snapshot (a resubscription that could not replay) redraws the view from scratch.
            view.fold(method, params)
