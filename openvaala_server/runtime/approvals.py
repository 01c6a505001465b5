"""The approvals a conversation waits for: asked of every client, settled by the first answer.

`approve` is the agent loop's check before each tool call: it applies the policy
(domain/approvals.py) and, for a call that must ask, calls `ApprovalBoard.ask`, which publishes
`approval/requested` and returns a future; `approval/respond` from any client calls `resolve`,
which publishes `approval/resolved` and settles the future in the same step, so a second answer
finds the id already resolved. An interrupt resolves the approval as "deny" (`cancel`).

Pending approvals live in memory only: when the daemon stops, the turn waiting on one is cut
(interrupted, or `server_stopped` after a crash) and the question is gone with it
(docs/protocol.md, "Approvals").
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from openvaala_server import errors
from openvaala_server.domain import denials
from openvaala_server.domain.approvals import (
    Answer,
    Decision,
    Grant,
    GrantOffer,
    NoGrant,
    Refuse,
    Run,
    decide,
    grant_offer,
)
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.mcp_approvals import decide_mcp
from openvaala_server.domain.permissions import Access, ApprovalMode, Confinement
from openvaala_server.domain.proposed import ProposedDiff
from openvaala_server.domain.records import Item
from openvaala_server.mcp.manager import as_mcp_tool
from openvaala_server.protocol import methods
from openvaala_server.protocol import payloads as wire
from openvaala_server.runtime.hub import Hub
from openvaala_server.runtime.ports import Conversation
from openvaala_server.tools.base import PreviewsHeld, ToolResult, access_of
from openvaala_server.tools.previews import previews, proposed_changes
from openvaala_server.tools.threads import run_in_own_thread

if TYPE_CHECKING:
    from openvaala_server.runtime.session import LiveSession, LiveTurn
    from openvaala_server.tools.base import Tool

log = logging.getLogger(__name__)

# How many answered ids are remembered, to tell "already answered" from "never existed".
RESOLVED_KEPT = 1000
# The message of the "deny" an interrupt resolves a pending approval with, by its reason.
_CANCEL_MESSAGES = {
    "user": "The user interrupted the turn.",
    "jump": "A new message interrupted the turn.",
    "close": "The subagent was closed.",
    "shutdown": "The server stopped.",
}


class ApprovalHost(Conversation, Protocol):
    """The conversation an approval is asked in (`LiveConversation`), which owns the board."""

    @property
    def approvals(self) -> ApprovalBoard: ...


@dataclass(frozen=True)
class Response:
    decision: Answer
    message: str | None = None


@dataclass
class PendingApproval:
    approval_id: str
    session_id: str
    # What "allow for this conversation" remembers, or why nothing can be (then that answer
    # allows this one call, and says so).
    offer: GrantOffer | NoGrant
    # The `approval/requested` params as published (conversationId and seq included): what a
    # subscribe snapshot lists.
    request: wire.PendingApproval | None
    answer: asyncio.Future[Response] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ApprovalBoard:
    """One conversation's pending approvals."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._pending: dict[str, PendingApproval] = {}
        self._resolved: OrderedDict[str, Answer] = OrderedDict()

    def ask(
        self,
        session_id: str,
        agent: str,
        tool: str,
        summary: str,
        arguments: dict[str, Any],
        reason: str,
        offer: GrantOffer | NoGrant,
        diffs: list[ProposedDiff] | None = None,
    ) -> PendingApproval:
        approval_id = new_id()
        params: wire.ApprovalRequestedNote = {
            "sessionId": session_id,
            "approvalId": approval_id,
            "tool": tool,
            "summary": summary,
            "arguments": arguments,
            "reason": reason,
            "agent": agent,
            "grantScope": offer.scope if isinstance(offer, GrantOffer) else None,
            "diffs": diffs or [],
        }
        if isinstance(offer, NoGrant):
            params["noGrantReason"] = offer.reason
        pending = PendingApproval(approval_id, session_id, offer, None)
        self._pending[approval_id] = pending
        seq = self._hub.publish(methods.APPROVAL_REQUESTED, params)
        pending.request = {"conversationId": self._hub.conversation_id, "seq": seq, **params}
        return pending

    def resolve(
        self, approval_id: str, decision: Answer, message: str | None = None
    ) -> wire.RespondResult:
        """Settle a pending approval; the first answer wins. "allow_conversation" of a call
        nothing can be remembered for settles as "allow", saying why (`notGranted`)."""
        pending = self._pending.pop(approval_id, None)
        if pending is None:
            if approval_id in self._resolved:
                raise errors.AlreadyResolved(
                    f"approval {approval_id} was already answered "
                    f"({self._resolved[approval_id]}): the first answer counts",
                    approvalId=approval_id,
                    decision=self._resolved[approval_id],
                )
            raise errors.NotFound(
                f"no pending approval {approval_id} in this conversation", param="approvalId"
            )
        not_granted = None
        if decision == "allow_conversation" and isinstance(pending.offer, NoGrant):
            decision, not_granted = (
                "allow",
                f"Not remembered for this conversation: {pending.offer.reason}",
            )
        self._resolved[approval_id] = decision
        while len(self._resolved) > RESOLVED_KEPT:
            self._resolved.popitem(last=False)
        resolved: wire.ApprovalResolvedNote = {
            "sessionId": pending.session_id,
            "approvalId": approval_id,
            "decision": decision,
        }
        if message:
            resolved["message"] = message
        if not_granted:
            resolved["notGranted"] = not_granted
        self._hub.publish(methods.APPROVAL_RESOLVED, resolved)
        if not pending.answer.done():
            pending.answer.set_result(Response(decision, message))
        answer: wire.RespondResult = {"approvalId": approval_id, "decision": decision}
        if not_granted:
            answer["notGranted"] = not_granted
        return answer

    def cancel(self, pending: PendingApproval, message: str) -> None:
        """The turn was interrupted while waiting: the approval resolves as denied."""
        if pending.approval_id in self._pending:
            self.resolve(pending.approval_id, "deny", message)

    def pending(self) -> list[wire.PendingApproval]:
        """The pending `approval/requested` params, oldest first."""
        return [p.request for p in self._pending.values() if p.request is not None]


async def approve(
    conv: ApprovalHost,
    session: LiveSession,
    call: Item,
    tool: Tool,
    confinement: Confinement,
) -> tuple[ToolResult | None, Confinement]:
    """Apply the agent's approval policy (domain/approvals.py) to one call of a running turn.

    Returns the result to report instead of running the tool (refused or denied), or None and
    the confinement the call runs under: the sandbox's, or none for a call the user let out."""
    cwd = Path(conv.cwd)
    try:
        access = access_of(tool, call["arguments"], cwd)
    except Exception as exc:  # never run a call whose effects could not be told
        log.exception("tool %s could not state its access", call["name"])
        return ToolResult(f"The call could not be checked, so it did not run: {exc}", True), (
            confinement
        )
    decision: Decision
    mcp_tool = as_mcp_tool(tool)
    if mcp_tool is not None:  # outside our sandbox: judged by the tool alone
        granted = {g.tool for g in conv.grants if g.kind == "tool"}
        # A subagent's MCP calls ask whenever an agent above it would be asked.
        modes = conv.runtime.permissions_for(conv, session).approvals
        approval: ApprovalMode = "never" if all(m == "never" for m in modes) else "escalate"
        decision = decide_mcp(approval, call["name"], mcp_tool.server, mcp_tool.trust, granted)
    else:
        decision = decide(
            conv.runtime.permissions_for(conv, session),
            call["name"],
            access,
            Path(os.path.realpath(cwd)),  # noqa: ASYNC240 - a few syscalls, cheaper than a hop
            conv.grants,
            confinement.protected,
        )
    if isinstance(decision, Refuse):
        return ToolResult(decision.reason, True), confinement
    # What the user approved (or granted) is what is written: the paths as resolved now.
    pinned = replace(confinement, approved=access.writes) if access.writes else confinement
    escalated = replace(pinned, mode="off", network=True)
    if isinstance(decision, Run):
        return None, escalated if decision.outside_sandbox else confinement
    offer = _offer(call["name"], mcp_tool is not None, access, decision.outside_sandbox)
    diffs: list[ProposedDiff] = []
    if previews(tool):
        arguments = call["arguments"]
        diffs = await run_in_own_thread(
            lambda: proposed_changes(tool, arguments, cwd, confinement), name="openvaala-preview"
        )
        # The editor's text when it holds the file (runtime/file_hosts.py): its buffer is
        # what the call changes, not the disk.
        files = conv.runtime.file_hosts.for_conversation(conv.conversation_id, cwd)
        if files is not None and isinstance(tool, PreviewsHeld):
            held = await tool.held_preview(arguments, cwd, confinement, files)
            diffs = diffs if held is None else held
    response = await ask_user(
        conv,
        session,
        call["name"],
        access.summary,
        call["arguments"],
        decision.reason,
        offer,
        diffs,
    )
    if response.decision == "deny":
        return ToolResult(denials.denied_text(response.message), True), confinement
    if response.decision == "allow_conversation" and isinstance(offer, GrantOffer):
        await conv.grant(session, list(offer.grants))
    return None, escalated if decision.outside_sandbox else pinned


def _offer(name: str, mcp: bool, access: Access, outside_sandbox: bool) -> GrantOffer | NoGrant:
    if mcp:
        return GrantOffer((Grant(name, "tool", "*"),), f"every call of the MCP tool {name}")
    return grant_offer(name, access, outside_sandbox)


async def ask_user(
    conv: ApprovalHost,
    session: LiveSession,
    tool: str,
    summary: str,
    arguments: dict[str, Any],
    reason: str,
    offer: GrantOffer | NoGrant,
    diffs: list[ProposedDiff] | None = None,
) -> Response:
    """Ask every client; the session shows "awaiting_approval" until the first answer.
    `diffs`: what a file-changing call would change (tools/previews.py)."""
    turn: LiveTurn | None = session.turn
    assert turn is not None  # asked only from a running turn
    pending = conv.approvals.ask(
        session.session_id, session.agent, tool, summary, arguments, reason, offer, diffs
    )
    turn.awaiting_approval += 1
    _publish_status(conv, session)
    try:
        return await pending.answer
    except asyncio.CancelledError:
        reason = _CANCEL_MESSAGES.get(turn.stop_reason or "", "The turn was interrupted.")
        conv.approvals.cancel(pending, reason)
        raise
    finally:
        turn.awaiting_approval -= 1
        _publish_status(conv, session)


def _publish_status(conv: ApprovalHost, session: LiveSession) -> None:
    conv.publish_session(session)
    if session.session_id == conv.root_session_id:
        conv.publish_updated()
