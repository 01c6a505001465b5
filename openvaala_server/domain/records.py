"""The record types of the journal files, and the item types of a session's history.

One JSONL line is one record: ``{"seq": n, "ts": "...Z", "type": "...", ...payload}``.
``metadata.jsonl`` holds the conversation-level records below; ``<session-id>.jsonl`` holds
``item`` records, each carrying one complete item of that agent's history.
Records are never rewritten: a change is a new record.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

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
        SESSION_CLOSED,
        TURN_STARTED,
        TURN_ENDED,
        APPROVAL_GRANTED,
        PLAN_UPDATED,
        ITEM_PINNED,
        ITEM_UNPINNED,
    }
)

# Item types (PROTOCOL.md "Shapes").
USER_MESSAGE: Final = "user_message"
AGENT_MESSAGE: Final = "agent_message"
REASONING: Final = "reasoning"
TOOL_CALL: Final = "tool_call"
TOOL_RESULT: Final = "tool_result"
SUMMARY: Final = "summary"
NOTICE: Final = "notice"
ITEM_TYPES: Final = frozenset(
    {USER_MESSAGE, AGENT_MESSAGE, REASONING, TOOL_CALL, TOOL_RESULT, SUMMARY, NOTICE}
)

# Item statuses.
IN_PROGRESS: Final = "in_progress"
COMPLETED: Final = "completed"
INTERRUPTED: Final = "interrupted"
FAILED: Final = "failed"

Record = dict[str, Any]
Item = dict[str, Any]


def utc_now() -> str:
    """A timestamp as written in records and on the wire: ISO 8601, UTC, microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def item_text(item: Item) -> str:
    """The searchable text of an item (messages only: tool output is not indexed)."""
    if item.get("type") in (USER_MESSAGE, AGENT_MESSAGE):
        text = item.get("text")
        return text if isinstance(text, str) else ""
    return ""
