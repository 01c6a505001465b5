"""The Codex app-server v2 shapes the bridge sends, under the names the bridge uses.

Each is a type of `protocol.py`, generated from the pinned release's schema (`gen.py`), so mypy
checks every dict the bridge builds against Codex's own declaration: a required field left out or
a misspelt tag is a type error. Codex's names are kept: camelCase keys, `type` tags on unions."""

from __future__ import annotations

from typing import TypeAlias, TypedDict

from openvaala_server.codex import protocol
from openvaala_server.protocol.json_types import JsonMapping

TurnStatus: TypeAlias = protocol.TurnStatus
ToolStatus: TypeAlias = protocol.PatchApplyStatus  # commandExecution's status is the same set
ThreadStatus: TypeAlias = protocol.ThreadStatus
TurnError: TypeAlias = protocol.TurnError
CodexErrorInfo: TypeAlias = protocol.CodexErrorInfo
Turn: TypeAlias = protocol.Turn
Thread: TypeAlias = protocol.Thread
SessionSource: TypeAlias = protocol.SessionSource
UserInput: TypeAlias = protocol.UserInput
ThreadItem: TypeAlias = protocol.ThreadItem
UserMessageItem: TypeAlias = protocol.UserMessageThreadItem
AgentMessageItem: TypeAlias = protocol.AgentMessageThreadItem
ReasoningItem: TypeAlias = protocol.ReasoningThreadItem
PlanItem: TypeAlias = protocol.PlanThreadItem
CommandExecutionItem: TypeAlias = protocol.CommandExecutionThreadItem
FileUpdateChange: TypeAlias = protocol.FileUpdateChange
PatchChangeKind: TypeAlias = protocol.PatchChangeKind
FileChangeItem: TypeAlias = protocol.FileChangeThreadItem
McpToolCallItem: TypeAlias = protocol.McpToolCallThreadItem
CollabAgentToolCallItem: TypeAlias = protocol.CollabAgentToolCallThreadItem
CollabAgentTool: TypeAlias = protocol.CollabAgentTool
DynamicToolCallItem: TypeAlias = protocol.DynamicToolCallThreadItem
ContextCompactionItem: TypeAlias = protocol.ContextCompactionThreadItem
CommandExecutionApproval: TypeAlias = protocol.CommandExecutionRequestApprovalParams
FileChangeApproval: TypeAlias = protocol.FileChangeRequestApprovalParams
TurnStartParams: TypeAlias = protocol.TurnStartParams


class Notice(TypedDict):
    """One message the bridge sends a client: a notification, or a request when it has an id."""

    method: str
    params: JsonMapping
