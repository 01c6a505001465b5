"""The Codex app-server v2 shapes the bridge sends, as typed dicts (the generated schema,
`schema.py`, is their contract; only the fields OpenVaala fills are declared).

Codex's names are kept: camelCase keys, `type` tags on unions."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from openvaala_server.protocol.json_types import JsonMapping, JsonObject, JsonValue

TurnStatus = Literal["completed", "interrupted", "failed", "inProgress"]
ToolStatus = Literal["inProgress", "completed", "failed", "declined"]


class ThreadStatus(TypedDict):
    type: Literal["notLoaded", "idle", "systemError", "active"]
    activeFlags: NotRequired[list[Literal["waitingOnApproval", "waitingOnUserInput"]]]


class TurnError(TypedDict):
    message: str
    codexErrorInfo: JsonValue  # a CodexErrorInfo: a string or a one-key object
    additionalDetails: str | None


class Turn(TypedDict):
    id: str
    items: list[ThreadItem]
    itemsView: Literal["notLoaded", "summary", "full"]
    status: TurnStatus
    error: TurnError | None
    startedAt: int | None
    completedAt: int | None
    durationMs: int | None


class Thread(TypedDict):
    id: str
    sessionId: str
    forkedFromId: str | None
    parentThreadId: str | None
    preview: str
    ephemeral: bool
    projectId: str | None
    modelProvider: str
    model: str | None
    createdAt: int
    updatedAt: int
    status: ThreadStatus
    path: str | None
    cwd: str
    cliVersion: str
    source: JsonValue  # a SessionSource: "appServer", or {"subAgent": …} for a subagent
    agentNickname: str | None
    agentRole: str | None
    name: str | None
    turns: list[Turn]


class TextInput(TypedDict):
    type: Literal["text"]
    text: str
    text_elements: list[JsonObject]


class ImageInput(TypedDict):
    type: Literal["image"]
    url: str


class UserMessageItem(TypedDict):
    type: Literal["userMessage"]
    id: str
    clientId: str | None
    content: list[TextInput | ImageInput]


class AgentMessageItem(TypedDict):
    type: Literal["agentMessage"]
    id: str
    text: str
    phase: None


class ReasoningItem(TypedDict):
    type: Literal["reasoning"]
    id: str
    summary: list[str]
    content: list[str]


class PlanItem(TypedDict):
    type: Literal["plan"]
    id: str
    text: str


class CommandExecutionItem(TypedDict):
    type: Literal["commandExecution"]
    id: str
    command: str
    cwd: str
    processId: None
    source: Literal["agent"]
    status: ToolStatus
    commandActions: list[JsonObject]
    aggregatedOutput: str | None
    exitCode: int | None
    durationMs: int | None


class FileUpdateChange(TypedDict):
    path: str
    kind: JsonObject  # {"type": "add"} | {"type": "delete"} | {"type": "update", "move_path": …}
    diff: str


class FileChangeItem(TypedDict):
    type: Literal["fileChange"]
    id: str
    changes: list[FileUpdateChange]
    status: ToolStatus


class McpToolCallItem(TypedDict):
    type: Literal["mcpToolCall"]
    id: str
    server: str
    tool: str
    status: Literal["inProgress", "completed", "failed"]
    arguments: JsonValue
    result: JsonObject | None
    error: JsonObject | None
    durationMs: int | None


class CollabAgentToolCallItem(TypedDict):
    type: Literal["collabAgentToolCall"]
    id: str
    tool: str  # a CollabAgentTool: spawnAgent, sendMessage, wait, …
    status: Literal["inProgress", "completed", "failed", "interrupted"]
    senderThreadId: str
    receiverThreadIds: list[str]
    prompt: str | None
    model: str | None
    agentsStates: dict[str, JsonObject]


class DynamicToolCallItem(TypedDict):
    type: Literal["dynamicToolCall"]
    id: str
    namespace: None
    tool: str
    arguments: JsonValue
    status: Literal["inProgress", "completed", "failed"]
    contentItems: list[JsonObject] | None
    success: bool | None
    durationMs: int | None


class ContextCompactionItem(TypedDict):
    type: Literal["contextCompaction"]
    id: str


ThreadItem = (
    UserMessageItem
    | AgentMessageItem
    | ReasoningItem
    | PlanItem
    | CommandExecutionItem
    | FileChangeItem
    | McpToolCallItem
    | CollabAgentToolCallItem
    | DynamicToolCallItem
    | ContextCompactionItem
)


class Notice(TypedDict):
    """One message the bridge sends a client: a notification, or a request when it has an id."""

    method: str
    params: JsonMapping
