"""Approvals in the editor: each pending `approval/requested` of a watched conversation is told to
plugins (`$/openvaala/approvalRequested`) and, unless the editor's plugin said it asks the user
itself, put to the user as `window/showMessageRequest` with the three answers (docs/editors.md).

The daemon decides everything: the first answer from any client wins, and the bridge only passes
answers on. A prompt already shown cannot be withdrawn, so an answer that comes too late is told
as one short message rather than an error."""

from __future__ import annotations

import logging
from collections import OrderedDict
from functools import partial
from typing import cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from openvaala_lsp import uris
from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, optional, required
from openvaala_server.client import SNAPSHOT
from openvaala_server.domain.approvals import Answer as Decision
from openvaala_server.protocol import methods, payloads
from openvaala_server.protocol.json_types import JsonObject

log = logging.getLogger(__name__)

REQUESTED = "$/openvaala/approvalRequested"
RESOLVED = "$/openvaala/approvalResolved"

# The answers as the editor shows them, in order, and the decision each one sends; the title of
# "allow for this conversation" names what it allows (`answers_for`).
ANSWERS: tuple[tuple[str, str], ...] = (
    ("Allow once", "allow"),
    ("Allow for this conversation", "allow_conversation"),
    ("Deny", "deny"),
)
DECISIONS = tuple(decision for _, decision in ANSWERS)
PAST = {"allow": "allowed", "allow_conversation": "allowed for this conversation", "deny": "denied"}

# `initializationOptions.approvals`: who asks the user.
ASK_MODES = ("prompt", "plugin")
KEEP_RESOLVED = 256  # answers remembered, to tell a late answer how the request ended


def ask_mode(options: object) -> tuple[str, str | None]:
    """The approval mode from the editor's initializationOptions (any JSON the editor sent),
    and a warning for bad input (the editor still works: it falls back to the prompts)."""
    if options is None:
        return "prompt", None
    if not isinstance(options, dict):
        return "prompt", "initializationOptions must be an object; approvals are asked by prompt"
    unknown = sorted(set(options) - {"approvals", "progress"})
    mode = options.get("approvals", "prompt")
    if mode not in ASK_MODES:
        return "prompt", (
            f"initializationOptions.approvals must be one of {', '.join(ASK_MODES)}, "
            f"not {mode!r}; approvals are asked by prompt"
        )
    if unknown:
        known = "approvals, progress"
        return mode, f"unknown initializationOptions: {', '.join(unknown)} (known: {known})"
    return mode, None


def prompt_text(request: JsonObject) -> str:
    """The one message the user reads: who asks, for what, and why."""
    agent = request.get("agent") or "the agent"
    tool = request.get("tool") or "a tool"
    summary = str(request.get("summary") or "").strip()
    text = f"OpenVaala: {agent} wants to use {tool}"
    if summary:
        text += f": {summary}"
    reason = str(request.get("reason") or "").strip()
    if reason:
        text += f"\n{reason}"
    if not request.get("grantScope"):
        why = str(request.get("noGrantReason") or "nothing can be remembered for this call")
        text += f"\nCannot be allowed for this conversation: {why}"
    return text


def answers_for(request: JsonObject) -> list[tuple[str, str]]:
    """The answers to one request: "allow for this conversation" titled with exactly what it
    allows (`grantScope`), left out when nothing can be granted (docs/security.md)."""
    scope = request.get("grantScope")
    if not isinstance(scope, str) or not scope:
        return [a for a in ANSWERS if a[1] != "allow_conversation"]
    return [(f"{t}: {scope}" if d == "allow_conversation" else t, d) for t, d in ANSWERS]


def resolved_text(resolved: JsonObject | None) -> str:
    decision = PAST.get(str((resolved or {}).get("decision")))
    where = f" ({decision})" if decision else ""
    return f"OpenVaala: that approval was already answered{where}."


def decision_of(title: str, answers: list[tuple[str, str]]) -> str | None:
    return next((decision for t, decision in answers if t == title), None)


class Approvals:
    def __init__(self, ls: Host) -> None:
        self.ls = ls
        self.mode = "prompt"
        self._announced: dict[str, str] = {}  # approvalId → conversationId, told and pending
        self._resolved: OrderedDict[str, JsonObject] = OrderedDict()

    # -- following the daemon ------------------------------------------------------------

    def on_note(self, method: str, params: JsonObject) -> None:
        cid = params.get("conversationId")
        if not isinstance(cid, str):
            return
        if method == methods.APPROVAL_RESOLVED:
            self._resolve(cid, params)
        elif method in (methods.APPROVAL_REQUESTED, SNAPSHOT):
            self.sync(cid)

    def sync(self, cid: str) -> None:
        """Tell what the bridge's view of `cid` has pending and was not told yet; a fresh
        snapshot that lacks one told earlier means it was answered while the bridge was away."""
        view = self.ls.bridge.views.get(cid)
        if view is None:  # still subscribing: synced once the view exists
            return
        for aid, request in list(view.approvals.items()):
            if aid not in self._announced and aid not in self._resolved:
                self._announce(cid, {**request.wire, "conversationId": cid})
        for aid, owner in list(self._announced.items()):
            if owner == cid and aid not in view.approvals:
                self._resolve(cid, {"conversationId": cid, "approvalId": aid, "decision": None})

    def pending(self, cid: str | None = None) -> list[JsonObject]:
        views = self.ls.bridge.views
        chosen = list(views.values()) if cid is None else [v for v in (views.get(cid),) if v]
        return [
            {**request.wire, "conversationId": view.conversation_id}
            for view in chosen
            for request in view.approvals.values()
        ]

    def _announce(self, cid: str, request: JsonObject) -> None:
        aid = str(request.get("approvalId"))
        self._announced[aid] = cid
        text = prompt_text(request)
        told = {
            **request,
            "uri": uris.conversation_uri(cid),
            "text": text,
            "answers": [{"title": t, "decision": d} for t, d in answers_for(request)],
        }
        self.ls.protocol.notify(REQUESTED, told)
        if self.mode == "prompt":
            ask = partial(self._ask, cid, aid, text, answers_for(request))
            self.ls.background(ask, f"ask-{aid}")

    def _resolve(self, cid: str, params: JsonObject) -> None:
        aid = str(params.get("approvalId"))
        self._resolved[aid] = dict(params)
        self._resolved.move_to_end(aid)
        while len(self._resolved) > KEEP_RESOLVED:
            self._resolved.popitem(last=False)
        if self._announced.pop(aid, None) is None:
            return
        resolved = {"conversationId": cid, "approvalId": aid, "decision": params.get("decision")}
        for key in ("sessionId", "seq", "message", "notGranted"):
            if params.get(key) is not None:
                resolved[key] = params[key]
        self.ls.protocol.notify(RESOLVED, resolved)

    # -- answering -----------------------------------------------------------------------

    async def _ask(self, cid: str, aid: str, text: str, answers: list[tuple[str, str]]) -> None:
        answer = await self.ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Warning,
                message=text,
                actions=[types.MessageActionItem(title=title) for title, _ in answers],
            )
        )
        if answer is None:  # dismissed: still pending, answerable from anywhere
            return
        decision = decision_of(answer.title, answers)
        if decision is None:
            self._show(types.MessageType.Error, f"OpenVaala: unknown answer {answer.title!r}")
            return
        if aid in self._resolved:  # answered elsewhere while the prompt was open
            self._show(types.MessageType.Info, resolved_text(self._resolved[aid]))
            return
        try:
            await self.respond({"conversationId": cid, "approvalId": aid, "decision": decision})
        except JsonRpcException as exc:
            kind = (exc.data or {}).get("kind") if isinstance(exc.data, dict) else None
            if kind in ("already_resolved", "not_found"):
                self._show(types.MessageType.Info, resolved_text(self._resolved.get(aid)))
            else:
                self._show(types.MessageType.Error, f"OpenVaala: {exc.message}")

    async def respond(self, params: Params) -> payloads.RespondResult:
        """`approval/respond` for the editor: `{conversationId, approvalId, decision, message?}`."""
        decision = required(params, "decision")
        if decision not in DECISIONS:
            raise JsonRpcInvalidParams(
                f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}",
                data={"param": "decision"},
            )
        call: payloads.RespondParams = {
            "conversationId": required(params, "conversationId"),
            "approvalId": required(params, "approvalId"),
            "decision": cast(Decision, decision),  # one of DECISIONS, checked above
        }
        if (message := optional(params, "message")) is not None and message.strip():
            call["message"] = message
        return await self.ls.bridge.request(methods.APPROVAL_RESPOND, call)

    def _show(self, kind: types.MessageType, message: str) -> None:
        self.ls.window_show_message(types.ShowMessageParams(type=kind, message=message))
