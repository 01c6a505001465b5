"""The record types of the journal files, and the item types of a session's history.

One JSONL line is one record: ``{"seq": n, "ts": "...Z", "type": "...", ...payload}``.
``metadata.jsonl`` holds the conversation-level records below; ``<session-id>.jsonl`` holds
``item`` records, each carrying one complete item of that agent's history.
Records are never rewritten: a change is a new record.
"""

from __future__ import annotations

import time
from typing import Final, Literal, NotRequired, TypedDict

from openvaala_server.domain.diffs import FileDiff
from openvaala_server.domain.images import ImageRef
from openvaala_server.domain.json_types import JsonObject, JsonValue
from openvaala_server.domain.plan import Plan

# The version of the journal format this code writes. A conversation whose first record names a
# newer version is skipped by reindex (and not opened), never half-understood.
FORMAT_VERSION: Final = 1

CONVERSATION_CREATED: Final = "conversation_created"
CONVERSATION_RENAMED: Final = "conversation_renamed"
CONVERSATION_ARCHIVED: Final = "conversation_archived"
CONVERSATION_UNARCHIVED: Final = "conversation_unarchived"
SESSION_CREATED: Final = "session_created"
SESSION_MODEL_SET: Final = "session_model_set"
# {sessionId, agent}: the user chose another agent (conversation/setAgent, the root session).
SESSION_AGENT_SET: Final = "session_agent_set"
# {cwd}: the conversation's working directory moved (conversation/setCwd).
CONVERSATION_CWD_SET: Final = "conversation_cwd_set"
# {mode: "plan" | "ask" | "auto-edit"}: the user chose the conversation's permission mode
# (conversation/setPermissionMode; domain/permission_mode.py).
PERMISSION_MODE_SET: Final = "permission_mode_set"
SESSION_CLOSED: Final = "session_closed"
TURN_STARTED: Final = "turn_started"
TURN_ENDED: Final = "turn_ended"
# {tool, kind: "command" | "path", pattern, outsideSandbox, sessionId}: an "allow for this
# conversation" answer (domain/approvals.py `Grant`).
APPROVAL_GRANTED: Final = "approval_granted"
# {sessionId, plan: {steps: [{step, status}], explanation?}}: the session's `update_plan` call
# replaced its plan (domain/plan.py).
PLAN_UPDATED: Final = "plan_updated"
# {sessionId, itemId}: the user pinned an item of that session's history, or unpinned it: a pinned
# item is never summarized away (docs/storage.md).
ITEM_PINNED: Final = "item_pinned"
ITEM_UNPINNED: Final = "item_unpinned"
ITEM: Final = "item"

METADATA_RECORD_TYPES: Final = frozenset(
    {
        CONVERSATION_CREATED,
        CONVERSATION_RENAMED,
        CONVERSATION_ARCHIVED,
        CONVERSATION_UNARCHIVED,
        SESSION_CREATED,
        SESSION_MODEL_SET,
        SESSION_AGENT_SET,
        CONVERSATION_CWD_SET,
        PERMISSION_MODE_SET,
        SESSION_CLOSED,
        TURN_STARTED,
        TURN_ENDED,
        APPROVAL_GRANTED,
        PLAN_UPDATED,
        ITEM_PINNED,
        ITEM_UNPINNED,
    }
)

# Item types (docs/protocol.md "Item").
USER_MESSAGE: Final = "user_message"
AGENT_MESSAGE: Final = "agent_message"
REASONING: Final = "reasoning"
TOOL_CALL: Final = "tool_call"
TOOL_RESULT: Final = "tool_result"
SUMMARY: Final = "summary"
NOTICE: Final = "notice"

# Item statuses.
IN_PROGRESS: Final = "in_progress"
COMPLETED: Final = "completed"
INTERRUPTED: Final = "interrupted"
FAILED: Final = "failed"

ItemStatus = Literal["in_progress", "completed", "interrupted", "failed"]
ItemType = Literal[
    "user_message", "agent_message", "reasoning", "tool_call", "tool_result", "summary", "notice"
]


class CopiedFrom(TypedDict):
    """Where a subagent's history copy came from (docs/protocol.md "Item")."""

    sessionId: str
    itemId: str


class ErrorInfo(TypedDict):
    """`{kind, message}`: a turn's, a retry's or a compaction's error on the wire and on disk."""

    kind: str
    message: str


# -- items, one TypedDict per kind (docs/protocol.md "Item") ---------------------------------
# TypedDicts rather than classes: an item is read from the journal, kept in memory and sent on
# the wire as the same dict, at no cost per item (docs/design.md "Typed core").


class _ItemBase(TypedDict):
    itemId: str
    sessionId: str
    turnId: str | None
    createdAt: str
    status: ItemStatus
    # OpenVaala additions on any kind: read from a fork's original, copied into a subagent.
    fromConversationId: NotRequired[str]
    copiedFrom: NotRequired[CopiedFrom]


class UserMessageItem(_ItemBase):
    type: Literal["user_message"]
    text: str
    inputId: str
    origin: Literal["user", "subagent", "shell"]  # shell: `shell/run` (docs/protocol.md)
    images: NotRequired[list[ImageRef]]
    fromSessionId: NotRequired[str]


class AgentMessageItem(_ItemBase):
    type: Literal["agent_message"]
    text: str


class ReasoningItem(_ItemBase):
    type: Literal["reasoning"]
    text: str
    providerData: NotRequired[JsonObject]


class ToolCallItem(_ItemBase):
    type: Literal["tool_call"]
    callId: str
    name: str
    # JsonValue by name: typing.get_type_hints looks the recursive alias's inner "JsonValue"
    # up in this module (protocol/json_types.py).
    arguments: dict[str, JsonValue]
    argumentsText: str
    providerData: NotRequired[JsonObject]


class ToolResultItem(_ItemBase):
    type: Literal["tool_result"]
    callId: str
    name: str
    output: str
    isError: bool
    truncated: NotRequired[bool]
    changes: NotRequired[list[FileDiff]]
    images: NotRequired[list[ImageRef]]


class NoticeItem(_ItemBase):
    type: Literal["notice"]
    kind: str  # interrupted | turn_failed | server_stopped | resumed | history_elsewhere | hook
    text: str
    errorKind: NotRequired[str]


class SummaryItem(_ItemBase):
    type: Literal["summary"]
    text: str
    coversUpTo: str
    coveredItems: int
    reason: Literal["auto", "manual", "refresh"]
    model: str
    replacesFrom: NotRequired[str]
    replacedItems: NotRequired[int]
    replacesSummary: NotRequired[str]
    keptPinned: NotRequired[list[str]]
    early: NotRequired[bool]


ItemOfKind = (
    UserMessageItem
    | AgentMessageItem
    | ReasoningItem
    | ToolCallItem
    | ToolResultItem
    | NoticeItem
    | SummaryItem
)
# The fields each kind declares, for the check of docs/protocol.md against these types.
ITEM_KINDS: Final[dict[str, type]] = {
    USER_MESSAGE: UserMessageItem,
    AGENT_MESSAGE: AgentMessageItem,
    REASONING: ReasoningItem,
    TOOL_CALL: ToolCallItem,
    TOOL_RESULT: ToolResultItem,
    NOTICE: NoticeItem,
    SUMMARY: SummaryItem,
}


class Item(TypedDict, total=False):
    """An item of any kind: every field of every kind, each optional.

    What most code handles (a history, a page, a snapshot, a provider request) mixes kinds, and a
    provider request holds synthetic items without ids; the per-kind types above say which
    fields a kind has; every per-kind field is a field of `Item`."""

    itemId: str
    type: str
    sessionId: str
    turnId: str | None
    createdAt: str
    status: str
    fromConversationId: str
    copiedFrom: CopiedFrom
    text: str
    inputId: str
    origin: str
    images: list[ImageRef]
    fromSessionId: str
    providerData: JsonObject
    callId: str
    name: str
    arguments: JsonObject
    argumentsText: str
    output: str
    isError: bool
    truncated: bool
    changes: list[FileDiff]
    kind: str
    errorKind: str
    coversUpTo: str
    coveredItems: int
    reason: str
    model: str
    replacesFrom: str
    replacedItems: int
    replacesSummary: str
    keptPinned: list[str]
    early: bool


# -- journal records (docs/storage.md) -------------------------------------------------------


class ForkedFrom(TypedDict):
    conversationId: str
    kind: Literal["fork", "rewind"]
    upToItemId: str | None
    olderHistory: NotRequired[OlderHistory]


class OlderHistory(TypedDict):
    conversationId: str
    upToItemId: str | None


class ConversationCreated(TypedDict):
    type: Literal["conversation_created"]
    conversationId: str
    cwd: str
    agent: str
    model: str
    title: str
    titleSource: Literal["auto", "user"]
    rootSessionId: str
    forkedFrom: ForkedFrom | None
    formatVersion: int
    # The user chose `model` at creation (conversation/create's `model`): see SessionModelSet.
    modelChosen: NotRequired[bool]


class ConversationRenamed(TypedDict):
    type: Literal["conversation_renamed"]
    title: str
    titleSource: Literal["auto", "user"]


class ConversationArchived(TypedDict):
    type: Literal["conversation_archived", "conversation_unarchived"]


class ConversationCwdSet(TypedDict):
    type: Literal["conversation_cwd_set"]
    cwd: str


class PermissionModeSet(TypedDict):
    type: Literal["permission_mode_set"]
    mode: Literal["plan", "ask", "auto-edit"]


class SessionCreated(TypedDict):
    type: Literal["session_created"]
    sessionId: str
    parentSessionId: str | None
    agent: str
    model: str
    title: str


class SessionModelSet(TypedDict):
    type: Literal["session_model_set"]
    sessionId: str
    model: str
    # "agent": the model came with a switch of agent (nobody chose it); absent: the user's choice.
    by: NotRequired[Literal["agent"]]


class SessionAgentSet(TypedDict):
    type: Literal["session_agent_set"]
    sessionId: str
    agent: str


class SessionClosed(TypedDict):
    type: Literal["session_closed"]
    sessionId: str


class TurnStarted(TypedDict):
    type: Literal["turn_started"]
    sessionId: str
    turnId: str


class TurnEnded(TypedDict):
    type: Literal["turn_ended"]
    sessionId: str
    turnId: str
    status: str  # completed | failed | interrupted
    error: NotRequired[ErrorInfo]


class ApprovalGranted(TypedDict):
    type: Literal["approval_granted"]
    sessionId: str
    tool: str
    kind: Literal["command", "path", "tool"]
    pattern: str
    outsideSandbox: bool


class PlanUpdated(TypedDict):
    type: Literal["plan_updated"]
    sessionId: str
    plan: Plan


class ItemPinned(TypedDict):
    type: Literal["item_pinned", "item_unpinned"]
    sessionId: str
    itemId: str


# What is appended to metadata.jsonl, before the journal stamps it.
MetadataPayload = (
    ConversationCreated
    | ConversationRenamed
    | ConversationArchived
    | ConversationCwdSet
    | PermissionModeSet
    | SessionCreated
    | SessionModelSet
    | SessionAgentSet
    | SessionClosed
    | TurnStarted
    | TurnEnded
    | ApprovalGranted
    | PlanUpdated
    | ItemPinned
)


class Record(TypedDict, total=False):
    """One journal line of any type, as read back: the stamp, the type and every payload field.

    Read from disk, so nothing but `seq` and `type` is checked by the reader: code that folds
    records (domain/meta.py) checks each field it uses."""

    seq: int
    ts: str
    type: str
    item: Item
    conversationId: str
    cwd: str
    agent: str
    model: str
    title: str
    titleSource: str
    rootSessionId: str
    forkedFrom: ForkedFrom | None
    formatVersion: int
    sessionId: str
    parentSessionId: str | None
    turnId: str
    status: str
    error: ErrorInfo
    tool: str
    kind: str
    pattern: str
    outsideSandbox: bool
    plan: Plan
    itemId: str


def utc_now() -> str:
    """A timestamp as written in records and on the wire: ISO 8601, UTC, microseconds.

    The date and time to the second are formatted once a second, not per call: strftime for
    every record was ~4% of the daemon's time while fifty conversations streamed (docs/design.md,
    "Costs that stay flat on real-shaped data")."""
    global _second  # replaced whole, so a thread reads a consistent pair
    micros = time.time_ns() // 1000
    seconds, fraction = divmod(micros, 1_000_000)
    cached = _second
    if cached[0] != seconds:
        cached = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{cached[1]}.{fraction:06d}Z"


_second: tuple[int, str] = (-1, "")  # (Unix second, that second formatted): see `utc_now`


def item_text(item: Item) -> str:
    """The searchable text of an item (messages only: tool output is not indexed)."""
    if item.get("type") in (USER_MESSAGE, AGENT_MESSAGE):
        text = item.get("text")
        return text if isinstance(text, str) else ""
    return ""
