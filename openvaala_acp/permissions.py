"""Approvals (docs/protocol.md "Approvals") as `session/request_permission`.

Each `approval/requested` of an open session asks the editor with its options — allow once,
allow for this conversation (named with exactly what it allows; absent when nothing can be
granted), deny — and the answer goes back through `approval/respond`, so the
first answer from any client wins: when another client answers first (`approval/resolved`), the
editor's question is dropped and a late answer from it is ignored (`already_resolved`). ACP has
no way to withdraw a question already shown, so the editor may keep its dialog open; answering
it then does nothing."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from openvaala_acp import tools
from openvaala_acp.link import DaemonLink
from openvaala_acp.outbox import Outbox
from openvaala_acp.stream import SessionStream
from openvaala_server.protocol import methods
from openvaala_server.structured import Activity, Supervisor

if TYPE_CHECKING:
    from openvaala_server.domain.approvals import Answer
    from openvaala_server.protocol.payloads import ApprovalRequestedNote, ApprovalResolvedNote

log = logging.getLogger(__name__)

# The option ids are the daemon's decisions.
ALLOW_ONCE = PermissionOption(option_id="allow", name="Allow once", kind="allow_once")
DENY = PermissionOption(option_id="deny", name="Deny", kind="reject_once")
_DECISIONS: dict[str, Answer] = {d: d for d in ("allow", "allow_conversation", "deny")}


def options_for(params: ApprovalRequestedNote) -> list[PermissionOption]:
    """The editor's choices for one `approval/requested`: "allow for this conversation" names
    exactly what it allows (`grantScope`), and is not offered when nothing can be granted
    (docs/security.md, "Approvals")."""
    scope = params.get("grantScope")
    if not isinstance(scope, str) or not scope:
        return [ALLOW_ONCE, DENY]
    always = PermissionOption(
        option_id="allow_conversation",
        name=f"Allow for this conversation: {scope}",
        kind="allow_always",
    )
    return [ALLOW_ONCE, always, DENY]


def question_text(params: ApprovalRequestedNote) -> str:
    """The reason the call asks, and why it can only be allowed once when that is so."""
    lines = [str(params.get("reason") or "")]
    if not params.get("grantScope"):
        why = str(params.get("noGrantReason") or "nothing can be remembered for this call")
        lines.append(f"Cannot be allowed for this conversation: {why}")
    return "\n".join(line for line in lines if line)


def _reason(reason: str) -> list[ContentToolCallContent]:
    if not reason:
        return []
    return [
        ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=reason))
    ]


class Asker(Protocol):
    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kw: object,
    ) -> RequestPermissionResponse: ...


class Permissions:
    def __init__(
        self,
        link: DaemonLink,
        outbox: Outbox,
        tasks: Supervisor,
        cancel: Callable[[str], Awaitable[None]],
    ) -> None:
        self.link = link
        self.outbox = outbox
        self.tasks = tasks
        # A question the editor answered "cancelled" cancels the prompt turn it belongs to, as
        # ACP means it, rather than leave the turn waiting (docs/editors.md).
        self.cancel = cancel
        self.conn: Asker | None = None
        self._asks: dict[str, Activity] = {}

    def requested(self, stream: SessionStream, params: ApprovalRequestedNote) -> None:
        approval_id = str(params.get("approvalId"))
        if approval_id in self._asks or self.conn is None:
            return
        conn = self.conn

        async def ask() -> None:
            try:
                await self._ask(conn, stream, params)
            finally:
                if self._asks.get(approval_id) is activity:
                    del self._asks[approval_id]

        # An activity of the agent's supervisor (main.py): answered, resolved or not, it ends
        # with the agent.
        activity = self.tasks.spawn(ask, f"acp-ask-{approval_id}")
        self._asks[approval_id] = activity

    def resolved(self, params: ApprovalResolvedNote) -> None:
        task = self._asks.pop(str(params.get("approvalId")), None)
        if task is not None:
            task.cancel()

    def drop_all(self) -> None:
        for task in list(self._asks.values()):
            task.cancel()
        self._asks.clear()

    async def _ask(self, conn: Asker, stream: SessionStream, params: ApprovalRequestedNote) -> None:
        approval_id = str(params.get("approvalId"))
        name = str(params.get("tool") or "")
        arguments = params.get("arguments")
        if not isinstance(arguments, dict):  # read from the wire: a malformed call shows no input
            arguments = {}
        call_id = stream.pending_call(name, arguments)
        if call_id is None:  # a subagent's call: the editor has not seen it yet
            call_id = approval_id
            self.outbox.put(
                stream.conversation_id,
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=call_id,
                    title=str(params.get("summary") or name),
                    kind=tools.kind(name),
                    status="pending",
                    raw_input=arguments,
                ),
            )
        diffs = tools.proposed(params)
        if diffs:  # the call's content becomes the change itself, read by the daemon
            self.outbox.put(
                stream.conversation_id,
                ToolCallProgress(
                    session_update="tool_call_update", tool_call_id=call_id, content=diffs
                ),
            )
        await self.outbox.flush()  # the call is shown before the question about it
        reason = question_text(params)
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=str(params.get("summary") or name),
            kind=tools.kind(name),
            status="pending",
            raw_input=arguments,
            # The change itself to review (the daemon read the files), then why it asks.
            content=[*diffs, *_reason(reason)] or None,
        )
        try:
            response = await conn.request_permission(
                session_id=stream.conversation_id,
                tool_call=tool_call,
                options=options_for(params),
            )
        except (ConnectionError, RequestError) as exc:
            log.warning("the editor did not answer approval %s: %s", approval_id, exc)
            return
        outcome = response.outcome
        decision = (
            _DECISIONS.get(outcome.option_id) if isinstance(outcome, AllowedOutcome) else None
        )
        if decision is None:
            # Cancelled: the turn is interrupted, which denies the call (docs/editors.md).
            await self.cancel(stream.conversation_id)
            return
        try:
            await self.link.request(
                methods.APPROVAL_RESPOND,
                {
                    "conversationId": stream.conversation_id,
                    "approvalId": approval_id,
                    "decision": decision,
                },
            )
        except RequestError as exc:  # answered elsewhere first, or the daemon forgot it
            log.info("approval %s: %s", approval_id, exc)
