"""Pushing to the editor: the daemon's notifications as `$/openvaala/event`, the connection
state, each MCP server's state (`$/openvaala/mcpStatus`), and the usage report for a status line
(`$/openvaala/usage`, only when it changed)."""

from __future__ import annotations

from collections.abc import Mapping

from openvaala_lsp.host import Host
from openvaala_lsp.mcp import MCP_STATUS
from openvaala_lsp.usage import for_status_line, report
from openvaala_server.client import CONNECTION, SNAPSHOT
from openvaala_server.client.view import AWAITING_APPROVAL
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject, JsonValue

EVENT = "$/openvaala/event"
USAGE = "$/openvaala/usage"
CONNECTION_STATE = "$/openvaala/connection"


class Forwarder:
    def __init__(self, ls: Host) -> None:
        self.ls = ls
        self.conversations: set[str] = set()  # the editor subscribed to these
        self._last_usage: dict[tuple[str, str], tuple[object, ...]] = {}

    def on_note(self, method: str, params: JsonObject) -> None:
        if method == CONNECTION:
            self.ls.protocol.notify(CONNECTION_STATE, self._with_running(params))
            return
        if method == methods.MCP_STATUS_CHANGED:  # every MCP server's state, for any editor
            self.ls.protocol.notify(MCP_STATUS, params)
            return
        cid = params.get("conversationId")
        if not isinstance(cid, str) or cid not in self.conversations:
            return
        self.ls.protocol.notify(
            EVENT,
            {"conversationId": cid, "seq": params.get("seq"), "method": method, "params": params},
        )
        if method == methods.USAGE_UPDATED:
            usage = params.get("usage")
            sid = str(params.get("sessionId", ""))
            self.push_usage(cid, sid, usage if isinstance(usage, dict) else {})
        elif method == SNAPSHOT:
            self.push_all_usage(cid)

    def _with_running(self, params: JsonObject) -> JsonObject:
        """`connected` names the editor's conversations whose turn goes on (a daemon reached
        again over ssh never stopped it): the bridge has resubscribed and folded what it
        missed before it says so, so an editor redraws its running markers from this, having
        kept them while reconnecting (docs/editors.md, "Notifications (bridge → editor)")."""
        if params.get("state") != "connected":
            return params
        views = self.ls.bridge.views
        running: list[JsonValue] = [
            cid
            for cid in sorted(self.conversations)
            if cid in views and busy(views[cid].conversation)
        ]
        return {**params, "running": running}

    def push_all_usage(self, cid: str) -> None:
        view = self.ls.bridge.views.get(cid)
        if view is None:
            return
        for session in view.sessions.values():
            if session.usage:
                self.push_usage(cid, session.session_id, session.usage)

    def push_usage(self, cid: str, sid: str, usage: Mapping[str, object]) -> None:
        if cid not in self.conversations:
            return
        key = (
            usage.get("used"),
            usage.get("contextWindow"),
            usage.get("source"),
            usage.get("repliesUntilRefresh"),
        )
        if self._last_usage.get((cid, sid)) == key:
            return
        self._last_usage[(cid, sid)] = key
        view = self.ls.bridge.views.get(cid)
        payload = for_status_line(report(cid, sid, usage))
        payload["root"] = view is not None and view.root_id == sid
        self.ls.protocol.notify(USAGE, payload)

    def forget(self, cid: str) -> None:
        self.conversations.discard(cid)
        for key in [k for k in self._last_usage if k[0] == cid]:
            del self._last_usage[key]


def busy(conversation: Mapping[str, object]) -> bool:
    """A turn runs, or waits for an approval (which is part of it)."""
    return conversation.get("status") in ("running", AWAITING_APPROVAL)
