"""The shapes of what the bridge answers the editor where it adds to the daemon's results
(docs/editors.md): declared here so the handlers and their tests read one definition."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from openvaala_lsp.edits import LineEdit
from openvaala_server.domain import tree
from openvaala_server.protocol import payloads
from openvaala_server.protocol.json_types import JsonObject, JsonValue


class UsageReport(TypedDict):
    """`$/openvaala/usage` and `openvaala/usage`: the daemon's usage plus a status line's text."""

    conversationId: str
    sessionId: str
    used: int
    contextWindow: int
    threshold: JsonValue
    maxOutputTokens: JsonValue
    source: str
    percent: int
    text: str
    reportedAt: NotRequired[JsonValue]
    autoCompact: NotRequired[bool]
    thresholdPercent: NotRequired[int]
    repliesUntilRefresh: NotRequired[int]
    machine: NotRequired[str]  # over `--remote`: the machine the daemon runs on
    # Only in `$/openvaala/usage`: whether the session is the conversation's root agent.
    root: NotRequired[bool]


class ContextReply(payloads.ContextTrace):
    """`openvaala/context`: the trace, its lines for a hover and the gauge."""

    lines: list[str]
    gauge: UsageReport


class ContextJson(TypedDict):
    body: JsonObject | None
    json: str


class Location(TypedDict):
    uri: str
    line: int


class ReplacedReply(payloads.ReplacedResult):
    location: NotRequired[Location]


class Opened(TypedDict):
    """`openvaala/open`, `openvaala/follow`: the document and whether the editor showed it."""

    uri: str
    shown: bool


class Cancelled(TypedDict):
    cancelled: bool


class ConversationRow(payloads.ConversationSummary):
    """A row of `openvaala/conversations`: the daemon's, with the document's `uri`."""

    uri: str


class ConversationsReply(TypedDict):
    conversations: list[ConversationRow]
    nextCursor: NotRequired[str]


class Subscribed(TypedDict):
    """`openvaala/subscribe`: a snapshot for the editor to draw, and the document's `uri`."""

    conversationId: str
    uri: str
    seq: int
    snapshot: payloads.Snapshot | None
    rootSessionId: str


class Created(TypedDict):
    conversation: payloads.ConversationInfo
    uri: str
    seq: int


class OpenedConversation(payloads.ConversationResult):
    """A fork: the new conversation and its document."""

    uri: str


class RewindReply(payloads.RewindResult):
    uri: str


class Imported(payloads.ImportResult):
    uri: NotRequired[str]


class TreeNode(tree.TreeNode):
    """A node of `openvaala/tree`: the daemon's, with the `uri` the editor opens it with (its
    `children` are nodes of this shape too)."""

    uri: str


class TreeReply(TypedDict):
    conversationId: str
    root: TreeNode


class SessionNode(payloads.SessionInfo):
    """A session of `openvaala/agents`, with its document and its children."""

    uri: str
    children: list[SessionNode]


class SessionTree(TypedDict):
    conversationId: str
    sessions: list[SessionNode]


class McpReply(TypedDict):
    servers: list[payloads.McpServerState]
    text: str


class Prompted(TypedDict):
    """`openvaala/prompt`: how the turn that took the message ended."""

    turnId: str | None
    status: JsonValue
    inputId: str
    # Absent when the message was withdrawn before a turn took it.
    sessionId: NotRequired[JsonValue]
    usage: NotRequired[UsageReport]
    error: NotRequired[JsonValue]


class Expanded(TypedDict):
    """`openvaala/mcp/expand`: the message to send for a composer's text."""

    text: str
    prompt: NotRequired[str]
    attached: list[str]


class Content(TypedDict):
    """`openvaala/render` (and the text of `workspace/textDocumentContent`): the whole text, or
    with `since` only the line edits from that version."""

    uri: str
    version: int
    text: NotRequired[str]
    since: NotRequired[int]
    edits: NotRequired[list[LineEdit]]
