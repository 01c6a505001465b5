"""The approvals a conversation waits for: asked of every client, settled by the first answer.

A turn that must ask (domain/approvals.py) calls `ApprovalBoard.ask`, which publishes
`approval/requested` and returns a future; `approval/respond` from any client calls `resolve`,
which publishes `approval/resolved` and settles the future in the same step, so a second answer
finds the id already resolved. An interrupt resolves the approval as "deny" (`cancel`).

Pending approvals live in memory only: when the daemon stops, the turn waiting on one is cut
(interrupted, or `server_stopped` after a crash) and the question is gone with it
(docs/protocol.md, "Approvals").
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openvaala_server import errors
from openvaala_server.domain.approvals import Answer
from openvaala_server.domain.ids import new_id
from openvaala_server.domain.permissions import Access
from openvaala_server.runtime.hub import Hub

# How many answered ids are remembered, to tell "already answered" from "never existed".
RESOLVED_KEPT = 1000


@dataclass(frozen=True)
class Response:
    decision: Answer
    message: str | None = None


@dataclass
class PendingApproval:
    approval_id: str
    session_id: str
    # The `approval/requested` params as published (conversationId and seq included): what a
    # subscribe snapshot lists.
    request: dict[str, Any]
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
    ) -> PendingApproval:
        approval_id = new_id()
        params = {
            "sessionId": session_id,
            "approvalId": approval_id,
            "tool": tool,
            "summary": summary,
            "arguments": arguments,
            "reason": reason,
            "agent": agent,
        }
        pending = PendingApproval(approval_id, session_id, {})
        self._pending[approval_id] = pending
        seq = self._hub.publish("approval/requested", params)
        pending.request = {"conversationId": self._hub.conversation_id, "seq": seq, **params}
        return pending

    def resolve(self, approval_id: str, decision: Answer, message: str | None = None) -> None:
        """Settle a pending approval; the first answer wins."""
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
        self._resolved[approval_id] = decision
        while len(self._resolved) > RESOLVED_KEPT:
            self._resolved.popitem(last=False)
        params: dict[str, Any] = {
            "sessionId": pending.session_id,
            "approvalId": approval_id,
            "decision": decision,
        }
        if message:
            params["message"] = message
        self._hub.publish("approval/resolved", params)
        if not pending.answer.done():
            pending.answer.set_result(Response(decision, message))

    def cancel(self, pending: PendingApproval, message: str) -> None:
        """The turn was interrupted while waiting: the approval resolves as denied."""
        if pending.approval_id in self._pending:
            self.resolve(pending.approval_id, "deny", message)

    def pending(self) -> list[dict[str, Any]]:
        """The pending `approval/requested` params, oldest first."""
        return [p.request for p in self._pending.values()]


def access_of(tool: object, arguments: dict[str, Any], cwd: Path) -> Access | None:
    """What a call would do, as the tool states it (`access(arguments, cwd)`).

    A tool that states nothing yet is described here from its well-known arguments, so the
    built-in shell and file tools are guarded in any case; any other such tool touches nothing
    the sandbox guards (the collaboration tools)."""
    method = getattr(tool, "access", None)
    if callable(method):
        access = method(arguments, cwd)
        return access if isinstance(access, Access) else None
    spec = getattr(tool, "spec", None)
    name = getattr(spec, "name", "")
    if name == "shell":
        command = arguments.get("command")
        if not isinstance(command, str):
            return None  # the tool itself reports the bad argument
        outside = None
        if arguments.get("outside_sandbox") is True:
            justification = arguments.get("justification")
            outside = justification if isinstance(justification, str) else ""
        return Access(summary=command, command=command, outside_sandbox=outside)
    if name in ("write_file", "edit_file"):
        raw = arguments.get("path")
        if not isinstance(raw, str) or not raw.strip():
            return None
        path = Path(raw).expanduser()
        resolved = (path if path.is_absolute() else cwd / path).resolve()
        return Access(summary=f"{name} {resolved}", writes=(resolved,))
    return None
