"""One conversation's OpenVaala notifications folded into Codex's (pure; docs/codex.md "Events").

`ThreadFeed.feed(method, params)` takes one daemon notification and returns what a Codex
client is sent for it, in order: notifications, approval questions (`Ask`, sent as server
requests) and settled approvals (`Settled`). The feed keeps only what the mapping needs: each
session's running turn, the tool calls not yet answered, the started items, the turn's diffs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, cast

from openvaala_server.codex import items, overrides, proposed, threads, wire
from openvaala_server.codex.ids import thread_id
from openvaala_server.domain import tool_names
from openvaala_server.domain.records import ItemOfKind, ToolCallItem, ToolResultItem
from openvaala_server.protocol.json_types import JsonMapping, JsonObject, JsonValue

# OpenVaala's turn error kinds (docs/protocol.md "turn/ended") as the closest CodexErrorInfo.
ERROR_INFO: Final[dict[str, wire.CodexErrorInfo]] = {
    "provider_unavailable": {"responseStreamConnectionFailed": {"httpStatusCode": None}},
    "auth_failed": "unauthorized",
    "model_not_found": "modelNotFound",
    "model_missing": "modelNotFound",
    "context_overflow": "contextWindowExceeded",
    "compaction_failed": "contextWindowExceeded",
    "bad_request": "badRequest",
    "internal": "internalServerError",
    "storage_failed": "internalServerError",
}


def error_info(kind: object) -> wire.CodexErrorInfo:
    return ERROR_INFO.get(str(kind), "other")


def turn_error(error: object) -> wire.TurnError | None:
    if not isinstance(error, dict):
        return None
    return {
        "message": str(error.get("message", "")),
        "codexErrorInfo": error_info(error.get("kind")),
        "additionalDetails": None,
    }


@dataclass(frozen=True)
class Ask:
    """An approval the daemon waits for, to send as a server request."""

    approval_id: str
    thread_id: str
    method: str
    params: JsonMapping


@dataclass(frozen=True)
class Settled:
    """An approval answered (by this client or another): its server request is resolved."""

    approval_id: str
    thread_id: str


Out = wire.Notice | Ask | Settled


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class ThreadFeed:
    info: JsonObject  # the conversation's ConversationInfo, as last announced
    clock: Callable[[], int] = _now_ms
    turn_of: dict[str, str] = field(default_factory=dict)  # session → running turn
    last_turn: dict[str, str] = field(default_factory=dict)  # session → latest turn
    calls: dict[str, ToolCallItem] = field(default_factory=dict)  # callId → call
    result_call: dict[str, str] = field(default_factory=dict)  # result itemId → callId
    started: dict[str, str] = field(default_factory=dict)  # itemId → OpenVaala type
    diffs: dict[str, list[str]] = field(default_factory=dict)  # turn → file diffs
    compacting: dict[str, tuple[str, bool]] = field(
        default_factory=dict
    )  # session → item, own turn
    statuses: dict[str, str] = field(default_factory=dict)  # session → status
    # The thread id the client knows this conversation by when it is a rewound copy
    # (docs/codex.md "Rewinding"); None: the conversation's own.
    as_id: str | None = None
    compaction_turns: int = 0  # the manual compactions shown as a turn of their own
    settings: dict[str, tuple[str, str]] = field(default_factory=dict)  # session → model, agent
    told_model: dict[str, str] = field(default_factory=dict)  # session → model the client sent
    told_cwd: str | None = None  # the working directory the client sent (or was answered)
    plan: overrides.PlanMode = field(default_factory=overrides.PlanMode)
    policy: overrides.PolicyMode = field(default_factory=overrides.PolicyMode)
    # The text of a file by its absolute path, for the changes a pending call proposes
    # (proposed.py); the session gives the real one, tests of the fold none.
    read_file: proposed.Reader = proposed.no_files

    @property
    def root(self) -> str:
        return str(self.info.get("rootSessionId", ""))

    @property
    def cwd(self) -> str:
        return str(self.info.get("cwd") or "/")

    def thread(self, session_id: object) -> str:
        if not isinstance(session_id, str) or session_id == self.root:
            return self.as_id or thread_id(str(self.info["conversationId"]))
        return thread_id(session_id)

    def feed(self, method: str, p: JsonObject) -> list[Out]:
        handler = _HANDLERS.get(method)
        return handler(self, p) if handler is not None else []

    # -- helpers ---------------------------------------------------------------------------

    def _note(self, method: str, params: JsonMapping) -> wire.Notice:
        return {"method": method, "params": params}

    def _item_note(self, method: str, sid: str, turn: str, item: wire.ThreadItem) -> wire.Notice:
        stamp = "startedAtMs" if method == "item/started" else "completedAtMs"
        return self._note(
            method,
            {"threadId": self.thread(sid), "turnId": turn, "item": item, stamp: self.clock()},
        )

    def _turn(
        self, sid: str, turn: str, status: wire.TurnStatus, error: wire.TurnError | None
    ) -> wire.Turn:
        now = self.clock() // 1000
        return {
            "id": turn,
            "items": [],
            "itemsView": "notLoaded",
            "status": status,
            "error": error,
            "startedAt": now if status == "inProgress" else None,
            "completedAt": None if status == "inProgress" else now,
            "durationMs": None,
        }

    def _status(self, sid: str, status: str) -> list[Out]:
        if self.statuses.get(sid) == status:
            return []
        self.statuses[sid] = status
        return [
            self._note(
                "thread/status/changed",
                {"threadId": self.thread(sid), "status": threads.thread_status(status)},
            )
        ]

    # -- turns -----------------------------------------------------------------------------

    def turn_started(self, p: JsonObject) -> list[Out]:
        sid, turn = str(p["sessionId"]), str(p["turnId"])
        self.turn_of[sid] = self.last_turn[sid] = turn
        out: list[Out] = [
            self._note(
                "turn/started",
                {"threadId": self.thread(sid), "turn": self._turn(sid, turn, "inProgress", None)},
            )
        ]
        return out + self._status(sid, "running")

    def turn_ended(self, p: JsonObject) -> list[Out]:
        sid, turn = str(p["sessionId"]), str(p["turnId"])
        self.turn_of.pop(sid, None)
        self.diffs.pop(turn, None)
        status = str(p.get("status"))
        codex_status: wire.TurnStatus = (
            "failed"
            if status == "failed"
            else "interrupted"
            if status == "interrupted"
            else "completed"
        )
        error = turn_error(p.get("error"))
        out: list[Out] = []
        if error is not None:
            out.append(
                self._note(
                    "error",
                    {
                        "threadId": self.thread(sid),
                        "turnId": turn,
                        "error": error,
                        "willRetry": False,
                    },
                )
            )
        out.append(
            self._note(
                "turn/completed",
                {"threadId": self.thread(sid), "turn": self._turn(sid, turn, codex_status, error)},
            )
        )
        return out + self._status(sid, "idle")

    def retry_scheduled(self, p: JsonObject) -> list[Out]:
        sid = str(p["sessionId"])
        turn = self.turn_of.get(sid)
        error = turn_error(p.get("error"))
        if turn is None or error is None:
            return []
        params = {"threadId": self.thread(sid), "turnId": turn, "error": error, "willRetry": True}
        return [self._note("error", params)]

    # -- items -----------------------------------------------------------------------------

    def item_started(self, p: JsonObject) -> list[Out]:
        item = cast(ItemOfKind, p["item"])
        sid, turn = item["sessionId"], str(p.get("turnId") or item.get("turnId") or "")
        self.started[item["itemId"]] = item["type"]
        if item["type"] == "tool_call":
            self.calls[item["callId"]] = item
            mapped: wire.ThreadItem | None = items.tool_item(item, None, self.cwd, read=self._read)
        elif item["type"] == "tool_result":
            self.result_call[item["itemId"]] = item["callId"]
            return []
        else:
            mapped = items.message_item(item)
        return [self._item_note("item/started", sid, turn, mapped)] if mapped else []

    def item_delta(self, p: JsonObject) -> list[Out]:
        sid, item_id, delta = str(p["sessionId"]), str(p["itemId"]), str(p.get("delta", ""))
        kind = self.started.get(item_id)
        turn = self.turn_of.get(sid, "")
        base: JsonObject = {"threadId": self.thread(sid), "turnId": turn, "delta": delta}
        if kind == "agent_message":
            return [self._note("item/agentMessage/delta", {**base, "itemId": item_id})]
        if kind == "reasoning":
            params = {**base, "itemId": item_id, "summaryIndex": 0}
            return [self._note("item/reasoning/summaryTextDelta", params)]
        call = self.calls.get(self.result_call.get(item_id, ""))
        if kind == "tool_result" and call is not None and call["name"] == "shell":
            params = {**base, "itemId": call["itemId"]}
            return [self._note("item/commandExecution/outputDelta", params)]
        return []

    def item_completed(self, p: JsonObject) -> list[Out]:
        item = cast(ItemOfKind, p["item"])
        sid, turn = (
            item["sessionId"],
            str(item.get("turnId") or self.turn_of.get(item["sessionId"], "")),
        )
        self.started.pop(item["itemId"], None)
        kind = item["type"]
        if kind == "tool_call" or kind == "notice" or kind == "summary":
            return []  # a call completes with its result; a summary with its compaction
        if item["type"] == "tool_result":
            return self._result(item, sid, turn)
        mapped = items.message_item(item)
        if mapped is None:
            return []
        out: list[Out] = []
        if kind == "user_message":  # never started on OpenVaala's side (docs/protocol.md)
            out.append(self._item_note("item/started", sid, turn, mapped))
        out.append(self._item_note("item/completed", sid, turn, mapped))
        return out

    def _read(self, path: str) -> str | None:
        """A file a call names (relative to the conversation's directory), for its diff."""
        return self.read_file(os.path.join(self.cwd, path))

    def item_discarded(self, p: JsonObject) -> list[Out]:
        self.started.pop(str(p.get("itemId")), None)
        return []

    def _result(self, result: ToolResultItem, sid: str, turn: str) -> list[Out]:
        self.result_call.pop(result["itemId"], None)
        call = self.calls.pop(result["callId"], None)
        if call is None:
            return []
        out: list[Out] = [
            self._item_note(
                "item/completed",
                sid,
                turn,
                items.tool_item(call, result, self.cwd, read=self._read),
            )
        ]
        changes = result.get("changes") or []
        if changes and turn:
            self.diffs.setdefault(turn, []).extend(c["diff"] for c in changes)
            diff = "".join(self.diffs[turn])
            params = {"threadId": self.thread(sid), "turnId": turn, "diff": diff}
            out.append(self._note("turn/diff/updated", params))
        return out

    # -- compaction ------------------------------------------------------------------------

    def compaction_started(self, p: JsonObject) -> list[Out]:
        sid, seq = str(p["sessionId"]), int(str(p.get("seq") or 0))
        item_id = f"{seq:032x}"
        turn = self.turn_of.get(sid)
        out: list[Out] = []
        own_turn = turn is None
        if turn is None:  # a manual compaction runs outside any turn: Codex shows it as one
            turn = item_id
            self.turn_of[sid] = self.last_turn[sid] = turn
            out.append(
                self._note(
                    "turn/started",
                    {
                        "threadId": self.thread(sid),
                        "turn": self._turn(sid, turn, "inProgress", None),
                    },
                )
            )
        self.compacting[sid] = (item_id, own_turn)
        self.compaction_turns += own_turn
        item: wire.ContextCompactionItem = {"type": "contextCompaction", "id": item_id}
        return [*out, self._item_note("item/started", sid, turn, item)]

    def compaction_ended(self, p: JsonObject) -> list[Out]:
        sid = str(p["sessionId"])
        item_id, own_turn = self.compacting.pop(sid, ("", False))
        turn = self.turn_of.get(sid, "")
        if not item_id:
            return []
        item: wire.ContextCompactionItem = {"type": "contextCompaction", "id": item_id}
        out: list[Out] = [self._item_note("item/completed", sid, turn, item)]
        error = turn_error(p.get("error"))
        if error is not None:
            params = {
                "threadId": self.thread(sid),
                "turnId": turn,
                "error": error,
                "willRetry": False,
            }
            out.append(self._note("error", params))
        if own_turn:
            self.turn_of.pop(sid, None)
            status: wire.TurnStatus = "failed" if error is not None else "completed"
            turn_params = {
                "threadId": self.thread(sid),
                "turn": self._turn(sid, turn, status, error),
            }
            out.append(self._note("turn/completed", turn_params))
        return out

    def compaction_refused(
        self,
        turn: str,
        reason: str | None,
        error: object,
        *,
        sid: str | None = None,
        warning: str | None = None,
    ) -> list[wire.Notice]:
        """A `thread/compact/start` the daemon answered with no compaction (nothing to compact,
        or refused), or that `warning` says was not tried (a subagent's thread, `sid`): Codex
        waits for a turn's end, so it gets a turn of its own that says why."""
        sid = sid or self.root
        failure = turn_error(error)
        out: list[wire.Notice] = [
            self._note(
                "turn/started",
                {"threadId": self.thread(sid), "turn": self._turn(sid, turn, "inProgress", None)},
            )
        ]
        if failure is not None:
            params = {"threadId": self.thread(sid), "turnId": turn, "error": failure}
            out.append(self._note("error", {**params, "willRetry": False}))
        else:
            message = warning or f"Nothing to compact: {reason or 'the history is too short'}."
            out.append(self._note("warning", {"threadId": self.thread(sid), "message": message}))
        status: wire.TurnStatus = "failed" if failure is not None else "completed"
        turn_params = {"threadId": self.thread(sid), "turn": self._turn(sid, turn, status, failure)}
        return [*out, self._note("turn/completed", turn_params)]

    # -- the rest --------------------------------------------------------------------------

    def usage_updated(self, p: JsonObject) -> list[Out]:
        sid = str(p["sessionId"])
        turn = self.turn_of.get(sid) or self.last_turn.get(sid)
        usage = p.get("usage")
        if turn is None or not isinstance(usage, dict):
            return []
        used = int(str(usage.get("used") or 0))
        breakdown = {
            "totalTokens": used,
            "inputTokens": used,
            "cachedInputTokens": 0,
            "outputTokens": 0,
            "reasoningOutputTokens": 0,
        }
        token_usage = {
            "total": breakdown,
            "last": breakdown,
            "modelContextWindow": usage.get("contextWindow"),
        }
        params = {"threadId": self.thread(sid), "turnId": turn, "tokenUsage": token_usage}
        return [self._note("thread/tokenUsage/updated", params)]

    def plan_updated(self, p: JsonObject) -> list[Out]:
        sid = str(p["sessionId"])
        plan = p.get("plan")
        turn = self.turn_of.get(sid) or self.last_turn.get(sid)
        if turn is None or not isinstance(plan, dict):
            return []
        params: JsonObject = {
            "threadId": self.thread(sid),
            "turnId": turn,
            "explanation": plan.get("explanation"),
            "plan": cast(JsonValue, items.plan_steps(plan)),
        }
        return [self._note("turn/plan/updated", params)]

    def conversation_updated(self, p: JsonObject) -> list[Out]:
        info = p.get("conversation")
        if not isinstance(info, dict):
            return []
        old_title, was_archived = self.info.get("title"), bool(self.info.get("archived"))
        old_mode = self.info.get("permissionMode")
        self.info = info
        out: list[Out] = []
        if old_mode is not None and info.get("permissionMode") != old_mode:  # by any client
            model, agent = self.settings.get(self.root, ("", ""))
            model = model or str(info.get("model") or "")
            out.append(self._settings_note(self.root, model, agent or str(info.get("agent") or "")))
        if info.get("title") != old_title:
            params = {"threadId": self.thread(None), "threadName": info.get("title")}
            out.append(self._note("thread/name/updated", params))
        if bool(info.get("archived")) != was_archived:  # by any client
            archived = "thread/archived" if info.get("archived") else "thread/unarchived"
            out.append(self._note(archived, {"threadId": self.thread(None)}))
        return out

    def session_updated(self, p: JsonObject) -> list[Out]:
        session = p.get("session")
        if not isinstance(session, dict):
            return []
        sid, status = str(session["sessionId"]), str(session.get("status"))
        now = (str(session.get("model") or ""), str(session.get("agent") or ""))
        before = self.settings.get(sid)
        self.settings[sid] = now
        out: list[Out] = []
        if before is not None and before != now:  # conversation/setAgent or setModel, by anyone
            out.append(self._settings_note(sid, *now))
        if sid in self.turn_of and status not in ("running", "awaiting_approval"):
            return out  # the turn's end says it (turn/completed, then the idle status)
        return out + self._status(sid, status)

    def _settings_note(self, sid: str, model: str, agent: str) -> wire.Notice:
        approval, sandbox = threads.policies(self.info.get("permissionMode"))
        self.policy.told = overrides.policy_mode(approval, sandbox)
        settings: JsonObject = {
            "model": model,
            "modelProvider": threads.MODEL_PROVIDER,
            "cwd": self.cwd,
            "approvalPolicy": approval,
            "approvalsReviewer": "user",
            "sandboxPolicy": sandbox,
            "collaborationMode": {
                "mode": "plan" if agent == overrides.PLAN_AGENT else "default",
                "settings": {
                    "model": model,
                    "reasoning_effort": None,
                    "developer_instructions": None,
                },
            },
        }
        params = {"threadId": self.thread(sid), "threadSettings": settings}
        return self._note("thread/settings/updated", params)

    def model_choice(self, sid: str, model: object) -> str | None:
        """The model a `turn/start` chooses for session `sid`, or None when it chooses none
        (overrides.py; the one Codex held before another client's setAgent is no choice)."""
        told = self.told_model.get(sid)
        if isinstance(model, str) and model:
            self.told_model[sid] = model
        return overrides.sent_choice(model, told, self.settings.get(sid, ("", ""))[0])

    def cwd_choice(self, cwd: object) -> str | None:
        """The working directory a `turn/start` chooses for the conversation, or None."""
        told = self.told_cwd
        if isinstance(cwd, str) and cwd:
            self.told_cwd = cwd
        return overrides.cwd_choice(cwd, told, self.cwd)

    def agent_choice(self, collaboration_mode: object) -> str | None:
        """The agent a `turn/start`'s collaboration mode needs for the root session, or None."""
        agent = self.settings.get(self.root, ("", ""))[1]
        return self.plan.agent_choice(self.root, overrides.mode_kind(collaboration_mode), agent)

    def mode_choice(self, approval: object, sandbox: object) -> str | None:
        """The permission mode a `turn/start`'s approval and sandbox policies choose, or None."""
        current = str(self.info.get("permissionMode") or "")
        return self.policy.choice(overrides.policy_mode(approval, sandbox), current)

    def session_started(self, p: JsonObject) -> list[Out]:
        session = p.get("session")
        if not isinstance(session, dict):
            return []
        thread = threads.session_thread(self.info, session, as_id=self.as_id)
        return [self._note("thread/started", {"thread": thread})]

    def approval_requested(self, p: JsonObject) -> list[Out]:
        sid, tool = str(p["sessionId"]), str(p.get("tool"))
        call = next(
            (
                c
                for c in reversed(self.calls.values())
                if c["sessionId"] == sid and c["name"] == tool
            ),
            None,
        )
        thread, turn = self.thread(sid), self.turn_of.get(sid, "")
        item_id = call["itemId"] if call is not None else str(p["approvalId"])
        reason = given if isinstance(given := p.get("reason"), str) else None
        params: wire.FileChangeApproval | wire.CommandExecutionApproval
        if tool in items.FILE_TOOLS:
            method = "item/fileChange/requestApproval"
            params = {
                "threadId": thread,
                "turnId": turn,
                "itemId": item_id,
                "startedAtMs": self.clock(),
                "reason": reason,
                "grantRoot": None,
            }
        else:
            arguments = p.get("arguments")
            script = arguments.get("command") if isinstance(arguments, dict) else None
            # Another tool is named by its summary, as the other clients show it.
            shell = tool == tool_names.SHELL and isinstance(script, str)
            command = items.shell_line(str(script)) if shell else str(p.get("summary", ""))
            method = "item/commandExecution/requestApproval"
            params = {
                "threadId": thread,
                "turnId": turn,
                "itemId": item_id,
                "startedAtMs": self.clock(),
                "reason": reason,
                "approvalId": str(p["approvalId"]),
                "command": command,
                "cwd": self.cwd,
            }
        return [Ask(str(p["approvalId"]), thread, method, cast(JsonMapping, params))]

    def approval_resolved(self, p: JsonObject) -> list[Out]:
        return [Settled(str(p["approvalId"]), self.thread(p.get("sessionId")))]


_HANDLERS: Final[dict[str, Callable[[ThreadFeed, JsonObject], list[Out]]]] = {
    "turn/started": ThreadFeed.turn_started,
    "turn/ended": ThreadFeed.turn_ended,
    "retry/scheduled": ThreadFeed.retry_scheduled,
    "item/started": ThreadFeed.item_started,
    "item/delta": ThreadFeed.item_delta,
    "item/completed": ThreadFeed.item_completed,
    "item/discarded": ThreadFeed.item_discarded,
    "compaction/started": ThreadFeed.compaction_started,
    "compaction/completed": ThreadFeed.compaction_ended,
    "compaction/failed": ThreadFeed.compaction_ended,
    "usage/updated": ThreadFeed.usage_updated,
    "plan/updated": ThreadFeed.plan_updated,
    "conversation/updated": ThreadFeed.conversation_updated,
    "session/updated": ThreadFeed.session_updated,
    "session/started": ThreadFeed.session_started,
    "approval/requested": ThreadFeed.approval_requested,
    "approval/resolved": ThreadFeed.approval_resolved,
}
