"""Work-done progress per running turn: begins at `turn/started`, reports what the agent is doing,
ends at `turn/ended`; cancelling it from the editor interrupts the turn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from functools import partial

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException

from openvaala_lsp.host import Host
from openvaala_server.client import CONNECTION
from openvaala_server.client.link import daemon_gone
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject

log = logging.getLogger(__name__)

_END = object()


@dataclass
class _Turn:
    conversation_id: str
    session_id: str
    queue: asyncio.Queue[object] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None


def token_for(turn_id: str) -> str:
    return f"openvaala/turn/{turn_id}"


def _activity(method: str, params: JsonObject) -> str | None:
    if method == methods.ITEM_STARTED:
        found = params.get("item")
        item = found if isinstance(found, dict) else {}
        kind = item.get("type")
        if kind == "reasoning":
            return "thinking…"
        if kind == "agent_message":
            return "writing…"
        if kind == "tool_call":
            return f"calling {item.get('name', 'a tool')}…"
        if kind == "tool_result":
            return f"running {item.get('name', 'a tool')}…"
    if method == methods.APPROVAL_REQUESTED:
        return f"awaiting approval: {params.get('summary') or params.get('tool') or 'a tool'}"
    if method == methods.APPROVAL_RESOLVED:
        return "denied" if params.get("decision") == "deny" else "allowed, running…"
    if method == methods.COMPACTION_STARTED:
        return "compacting…"
    if method == methods.RETRY_SCHEDULED:
        return f"retrying (attempt {params.get('attempt')})…"
    return None


class TurnProgress:
    def __init__(self, ls: Host) -> None:
        self.ls = ls
        self._turns: dict[str, _Turn] = {}  # by token
        self.wanted = True  # initializationOptions.progress: false turns it off

    def enabled(self) -> bool:
        caps = self.ls.client_capabilities
        return self.wanted and bool(get_capability(caps, "window.work_done_progress", False))

    def on_note(self, method: str, params: JsonObject) -> None:
        if method == CONNECTION and daemon_gone(params, remote=self.ls.bridge.remote):
            # The daemon went away: its turns never end, so their progress ends here.
            for turn in self._turns.values():
                turn.queue.put_nowait(_END)
                turn.queue.put_nowait("the daemon stopped")
            return
        cid = params.get("conversationId")
        if not isinstance(cid, str) or cid not in self.ls.forwarder.conversations:
            return
        sid = str(params.get("sessionId", ""))
        if method == methods.TURN_STARTED and self.enabled():
            token = token_for(str(params.get("turnId")))
            if token not in self._turns:
                turn = _Turn(cid, sid)
                self._turns[token] = turn
                turn.task = asyncio.create_task(self._run(token, turn))
            return
        if method == methods.TURN_ENDED:
            ending = self._turns.get(token_for(str(params.get("turnId"))))
            if ending is not None:
                ending.queue.put_nowait(_END)
                ending.queue.put_nowait(str(params.get("status", "ended")))
            return
        message = _activity(method, params)
        if message is not None:
            for turn in self._turns.values():
                if turn.conversation_id == cid and turn.session_id == sid:
                    turn.queue.put_nowait(message)

    def _title(self, turn: _Turn) -> str:
        view = self.ls.bridge.views.get(turn.conversation_id)
        if view is None:
            return "OpenVaala"
        if turn.session_id != view.root_id:
            session = view.sessions.get(turn.session_id)
            agent = session.info.get("agent", "subagent") if session else "subagent"
            return f"OpenVaala: {agent} (subagent)"
        return f"OpenVaala: {view.conversation.get('title') or 'conversation'}"

    async def _run(self, token: str, turn: _Turn) -> None:
        progress = self.ls.work_done_progress
        try:
            try:
                await progress.create_async(token)
            except (JsonRpcException, Exception) as exc:  # the editor refused: no progress
                log.info("no progress for %s: %s", token, exc)
                return
            progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=self._title(turn), cancellable=True, message="working…"
                ),
            )
            while True:
                message = await turn.queue.get()
                if message is _END:
                    status = await turn.queue.get()
                    progress.end(token, types.WorkDoneProgressEnd(message=str(status)))
                    return
                progress.report(token, types.WorkDoneProgressReport(message=str(message)))
        finally:
            self._turns.pop(token, None)
            progress.tokens.pop(token, None)

    def cancel(self, token: str | int) -> None:
        turn = self._turns.get(str(token))
        if turn is None:
            return
        self.ls.background(
            partial(
                self.ls.bridge.request,
                methods.TURN_INTERRUPT,
                {"conversationId": turn.conversation_id, "sessionId": turn.session_id},
            ),
            f"interrupt-{turn.conversation_id}",
        )

    async def close(self) -> None:
        for turn in list(self._turns.values()):
            if turn.task is not None:
                turn.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await turn.task


def register(ls: Host) -> None:
    @ls.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def cancel(ls: Host, params: types.WorkDoneProgressCancelParams) -> None:
        ls.turn_progress.cancel(params.token)
