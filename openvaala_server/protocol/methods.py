"""Every method name of the wire protocol (docs/protocol.md), one constant each.

Requests are what a client sends (each has a handler in api/); notifications are what the
daemon sends. A test checks these against docs/protocol.md both ways
(tests/server/protocol/test_protocol_doc.py), so a method is added here, in its handler and in
the doc.
"""

from __future__ import annotations

from typing import Final

# -- requests --------------------------------------------------------------------------------
INITIALIZE: Final = "initialize"
CONVERSATION_LIST: Final = "conversation/list"
CONVERSATION_CREATE: Final = "conversation/create"
CONVERSATION_SUBSCRIBE: Final = "conversation/subscribe"
CONVERSATION_UNSUBSCRIBE: Final = "conversation/unsubscribe"
CONVERSATION_WATCH_LIST: Final = "conversation/watchList"
CONVERSATION_UNWATCH_LIST: Final = "conversation/unwatchList"
CONVERSATION_READ: Final = "conversation/read"
CONVERSATION_RENAME: Final = "conversation/rename"
CONVERSATION_ARCHIVE: Final = "conversation/archive"
CONVERSATION_UNARCHIVE: Final = "conversation/unarchive"
CONVERSATION_DELETE: Final = "conversation/delete"
CONVERSATION_USAGE: Final = "conversation/usage"
CONVERSATION_FORK: Final = "conversation/fork"
CONVERSATION_REWIND: Final = "conversation/rewind"
CONVERSATION_UNDO: Final = "conversation/undo"
CONVERSATION_CHECKPOINTS: Final = "conversation/checkpoints"
CONVERSATION_DIFF: Final = "conversation/diff"
CONVERSATION_TREE: Final = "conversation/tree"
CONVERSATION_EXPORT: Final = "conversation/export"
CONVERSATION_IMPORT: Final = "conversation/import"
CONVERSATION_COMPACT: Final = "conversation/compact"
CONVERSATION_CONTEXT: Final = "conversation/context"
CONVERSATION_PIN: Final = "conversation/pin"
CONVERSATION_UNPIN: Final = "conversation/unpin"
CONVERSATION_REPLACED: Final = "conversation/replaced"
CONVERSATION_SET_MODEL: Final = "conversation/setModel"
CONVERSATION_SET_AGENT: Final = "conversation/setAgent"
CONVERSATION_SET_CWD: Final = "conversation/setCwd"
CONVERSATION_SET_PERMISSION_MODE: Final = "conversation/setPermissionMode"
INPUT_SEND: Final = "input/send"
INPUT_EDIT: Final = "input/edit"
INPUT_WITHDRAW: Final = "input/withdraw"
INPUT_STEER: Final = "input/steer"
INPUT_JUMP: Final = "input/jump"
TURN_INTERRUPT: Final = "turn/interrupt"
TURN_RESUME: Final = "turn/resume"
APPROVAL_RESPOND: Final = "approval/respond"
AGENTS_LIST: Final = "agents/list"
MODELS_LIST: Final = "models/list"
MCP_LIST: Final = "mcp/list"
MCP_GET_PROMPT: Final = "mcp/getPrompt"
MCP_READ_RESOURCE: Final = "mcp/readResource"
SESSIONS_LIST: Final = "sessions/list"
CONVERSATION_INIT: Final = "conversation/init"
MEMORY_READ: Final = "memory/read"
MEMORY_REMEMBER: Final = "memory/remember"
MEMORY_WRITE: Final = "memory/write"
SHELL_RUN: Final = "shell/run"
DIRECTORIES_LIST: Final = "directories/list"
COMMANDS_LIST: Final = "commands/list"
COMMANDS_EXPAND: Final = "commands/expand"
FILES_HOST: Final = "files/host"
FILES_RESPOND: Final = "files/respond"
FILES_OUTPUT: Final = "files/output"
CONVERSATION_SET_MCP_SERVERS: Final = "conversation/setMcpServers"

REQUESTS: Final = frozenset(
    {
        INITIALIZE,
        CONVERSATION_LIST,
        CONVERSATION_CREATE,
        CONVERSATION_SUBSCRIBE,
        CONVERSATION_UNSUBSCRIBE,
        CONVERSATION_WATCH_LIST,
        CONVERSATION_UNWATCH_LIST,
        CONVERSATION_READ,
        CONVERSATION_RENAME,
        CONVERSATION_ARCHIVE,
        CONVERSATION_UNARCHIVE,
        CONVERSATION_DELETE,
        CONVERSATION_USAGE,
        CONVERSATION_FORK,
        CONVERSATION_REWIND,
        CONVERSATION_UNDO,
        CONVERSATION_CHECKPOINTS,
        CONVERSATION_DIFF,
        CONVERSATION_TREE,
        CONVERSATION_EXPORT,
        CONVERSATION_IMPORT,
        CONVERSATION_COMPACT,
        CONVERSATION_CONTEXT,
        CONVERSATION_PIN,
        CONVERSATION_UNPIN,
        CONVERSATION_REPLACED,
        CONVERSATION_SET_MODEL,
        CONVERSATION_SET_AGENT,
        CONVERSATION_SET_CWD,
        CONVERSATION_SET_PERMISSION_MODE,
        INPUT_SEND,
        INPUT_EDIT,
        INPUT_WITHDRAW,
        INPUT_STEER,
        INPUT_JUMP,
        TURN_INTERRUPT,
        TURN_RESUME,
        APPROVAL_RESPOND,
        AGENTS_LIST,
        MODELS_LIST,
        MCP_LIST,
        MCP_GET_PROMPT,
        MCP_READ_RESOURCE,
        SESSIONS_LIST,
        CONVERSATION_INIT,
        MEMORY_READ,
        MEMORY_REMEMBER,
        MEMORY_WRITE,
        SHELL_RUN,
        DIRECTORIES_LIST,
        COMMANDS_LIST,
        COMMANDS_EXPAND,
        FILES_HOST,
        FILES_RESPOND,
        FILES_OUTPUT,
        CONVERSATION_SET_MCP_SERVERS,
    }
)

# -- notifications of a conversation (they carry conversationId and seq) ----------------------
CONVERSATION_UPDATED: Final = "conversation/updated"
CONVERSATION_DELETED: Final = "conversation/deleted"
SESSION_UPDATED: Final = "session/updated"
SESSION_STARTED: Final = "session/started"
TURN_STARTED: Final = "turn/started"
TURN_ENDED: Final = "turn/ended"
ITEM_STARTED: Final = "item/started"
ITEM_DELTA: Final = "item/delta"
ITEM_COMPLETED: Final = "item/completed"
ITEM_DISCARDED: Final = "item/discarded"
INBOX_UPDATED: Final = "inbox/updated"
USAGE_UPDATED: Final = "usage/updated"
RETRY_SCHEDULED: Final = "retry/scheduled"
COMPACTION_STARTED: Final = "compaction/started"
COMPACTION_COMPLETED: Final = "compaction/completed"
COMPACTION_FAILED: Final = "compaction/failed"
APPROVAL_REQUESTED: Final = "approval/requested"
APPROVAL_RESOLVED: Final = "approval/resolved"
PLAN_UPDATED: Final = "plan/updated"
PINS_UPDATED: Final = "pins/updated"

# -- notifications of the whole daemon (no conversationId, no seq) ----------------------------
# To the connections that called conversation/watchList.
CONVERSATION_LIST_CHANGED: Final = "conversation/listChanged"
# To every connection.
CONFIG_RELOADED: Final = "config/reloaded"
CONFIG_ERROR: Final = "config/error"
# To every connection: an MCP server's state changed (started, failed, listed again).
MCP_STATUS_CHANGED: Final = "mcp/statusChanged"
# To the one connection that hosts a conversation's files (files/host): read or write one.
FILES_REQUESTED: Final = "files/requested"

NOTIFICATIONS: Final = frozenset(
    {
        CONVERSATION_UPDATED,
        CONVERSATION_DELETED,
        SESSION_UPDATED,
        SESSION_STARTED,
        TURN_STARTED,
        TURN_ENDED,
        ITEM_STARTED,
        ITEM_DELTA,
        ITEM_COMPLETED,
        ITEM_DISCARDED,
        INBOX_UPDATED,
        USAGE_UPDATED,
        RETRY_SCHEDULED,
        COMPACTION_STARTED,
        COMPACTION_COMPLETED,
        COMPACTION_FAILED,
        APPROVAL_REQUESTED,
        APPROVAL_RESOLVED,
        PLAN_UPDATED,
        PINS_UPDATED,
        CONVERSATION_LIST_CHANGED,
        CONFIG_RELOADED,
        CONFIG_ERROR,
        MCP_STATUS_CHANGED,
        FILES_REQUESTED,
    }
)
