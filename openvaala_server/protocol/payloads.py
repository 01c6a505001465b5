"""The shapes on the wire (docs/protocol.md): request params and results, notification params.

TypedDicts: a payload is the very dict that is encoded (orjson) or decoded, so declaring it
costs nothing at run time (docs/design.md "Typed core"). Names follow docs/protocol.md: a shape
of its "Shapes" section keeps its name (`ConversationInfo`, `Usage`, `Snapshot`…); the params of
a request are `<Name>Params` and its result `<Name>Result`; a notification's params are
`<Name>Note`. Notification params are shown here without the `conversationId` and `seq` the hub
adds to every one (runtime/hub.py).

`NOTIFICATION_PARAMS` and `REQUEST_PARAMS` map each method (protocol/methods.py) to its
TypedDict: tests/server/protocol/test_protocol_doc.py checks docs/protocol.md against them.
"""

from __future__ import annotations

from typing import Final, Literal, NotRequired, TypedDict

from openvaala_server.domain.approvals import Answer as Decision
from openvaala_server.domain.checkpoints import RestoreConflict, SkippedFile
from openvaala_server.domain.compaction_policy import Reason as CompactionPolicyReason
from openvaala_server.domain.diffs import FileDiff
from openvaala_server.domain.images import ImageRef
from openvaala_server.domain.inbox import InputWire
from openvaala_server.domain.inbox import Mode as InputMode
from openvaala_server.domain.memory import Scope as MemoryScope
from openvaala_server.domain.plan import Plan
from openvaala_server.domain.proposed import ProposedDiff
from openvaala_server.domain.records import ErrorInfo, ForkedFrom, Item
from openvaala_server.domain.snippets import SearchSnippet
from openvaala_server.domain.status import StopReason, TurnOutcome
from openvaala_server.domain.trace import Omitted, TracePart
from openvaala_server.domain.tree import TreeNode
from openvaala_server.domain.usage import Usage as Usage
from openvaala_server.protocol import file_payloads as fp
from openvaala_server.protocol import methods as m
from openvaala_server.protocol.json_types import JsonObject, JsonValue

# Declared next to the code that builds them (domain/ imports nothing of protocol/).
Input = InputWire

SessionStatus = Literal[
    "running", "awaiting_approval", "waiting", "idle", "interrupted", "failed", "closed"
]
CompactionReason = CompactionPolicyReason

# -- shapes (docs/protocol.md "Shapes") --------------------------------------------------------


class ConversationBase(TypedDict):
    """The fields a conversation's summary and its info share, but its id."""

    title: str
    cwd: str
    agent: str
    model: str
    createdAt: str
    updatedAt: str
    archived: bool
    forkedFrom: ForkedFrom | None


class ConversationSummary(ConversationBase):
    """A row of `conversation/list` (from the index)."""

    conversationId: str
    status: str
    messageCount: int
    turnCount: int
    snippet: NotRequired[SearchSnippet]  # with `search`, when a message matched


class ConversationInfo(ConversationBase):
    """What `conversation/create`, `conversation/updated` and the snapshot carry."""

    conversationId: str
    status: str
    persisted: bool
    rootSessionId: str
    cwdExists: bool
    modelAvailable: bool
    agentAvailable: bool
    # The permission mode in force, and those the agent allows, narrowest first (docs/security.md).
    permissionMode: str
    permissionModes: list[str]


class SessionInfo(TypedDict):
    """A session (docs/protocol.md "Session")."""

    sessionId: str
    parentSessionId: str | None
    agent: str
    model: str
    # The user chose `model` for this session; else it is its agent's (conversation/setAgent).
    modelChosen: bool
    status: str
    title: str
    depth: int


class RunningTurn(TypedDict):
    turnId: str
    items: list[Item]


class SessionSnapshot(SessionInfo):
    items: list[Item]
    hasMore: bool
    turn: RunningTurn | None
    inbox: list[Input]
    usage: Usage
    plan: Plan | None
    pinned: list[str]


class ApprovalRequestedNote(TypedDict):
    sessionId: str
    approvalId: str
    tool: str
    summary: str
    arguments: JsonObject
    reason: str
    agent: str
    # What "allow for this conversation" allows, in words (every client shows it before the user
    # answers); None: it cannot be granted, `noGrantReason` says why (docs/security.md).
    grantScope: str | None
    noGrantReason: NotRequired[str]
    # What a write_file / edit_file / apply_patch call would change, one entry per file (empty
    # for other tools and for a call that would fail): the user reviews the change itself.
    diffs: list[ProposedDiff]


class PendingApproval(ApprovalRequestedNote):
    """A pending approval in a snapshot: the `approval/requested` params it was sent with."""

    conversationId: str
    seq: int


class Snapshot(TypedDict):
    conversation: ConversationInfo
    sessions: list[SessionSnapshot]
    approvals: list[PendingApproval]


class ConfigState(TypedDict):
    """The configuration file's state: `initialize.config`, `config/reloaded`, `config/error`."""

    path: str
    state: Literal["ok", "error"]
    message: str
    key: NotRequired[str]


class McpServerState(TypedDict):
    name: str
    status: str  # starting | ready | failed | stopped (| removed: mcp/statusChanged only)
    tools: list[str]
    error: NotRequired[str]
    # True: `tools` is the server's last listing, kept while it is not ready (docs/protocol.md).
    toolsLastKnown: NotRequired[bool]
    # A ready server's resources and prompts (absent: it offers none).
    resources: NotRequired[list[McpResourceInfo]]
    prompts: NotRequired[list[McpPromptInfo]]


class McpResourceInfo(TypedDict):
    uri: str
    name: str


class McpPromptInfo(TypedDict):
    name: str
    description: str
    arguments: list[str]


class AgentInfo(TypedDict):
    name: str
    description: str
    model: str
    default: bool
    sandbox: str  # what the agent's tools may touch (docs/configuration.md)
    network: bool
    approval: str  # when the user is asked


class ModelInfo(TypedDict):
    name: str
    provider: str
    model: str
    contextWindow: int
    # Where the window came from: "config", "catalog", "server: …" or "default: …"
    # (docs/configuration.md, "Context window").
    contextWindowSource: str
    maxOutputTokens: int


# -- notifications -------------------------------------------------------------------------------


class ConversationUpdatedNote(TypedDict):
    conversation: ConversationInfo


class ConversationDeletedNote(TypedDict):
    pass


class SessionNote(TypedDict):
    """`session/updated` and `session/started`."""

    session: SessionInfo


class TurnStartedNote(TypedDict):
    sessionId: str
    turnId: str


class TurnEndedNote(TypedDict):
    sessionId: str
    turnId: str
    status: TurnOutcome
    error: NotRequired[ErrorInfo]
    modelStop: NotRequired[str]
    interruptedBy: NotRequired[StopReason]


class ItemStartedNote(TypedDict):
    sessionId: str
    turnId: str
    item: Item


class ItemDeltaNote(TypedDict):
    sessionId: str
    itemId: str
    field: Literal["text", "output"]
    delta: str


class ItemCompletedNote(TypedDict):
    sessionId: str
    item: Item


class ItemDiscardedNote(TypedDict):
    sessionId: str
    itemId: str


class InboxUpdatedNote(TypedDict):
    sessionId: str
    inputs: list[Input]


class UsageUpdatedNote(TypedDict):
    sessionId: str
    usage: Usage


class RetryScheduledNote(TypedDict):
    sessionId: str
    attempt: int
    maxAttempts: int
    delaySeconds: float
    error: ErrorInfo


class CompactionStartedNote(TypedDict):
    sessionId: str
    reason: CompactionReason


class CompactionCompletedNote(TypedDict):
    sessionId: str
    reason: CompactionReason
    summaryItemId: str


class CompactionFailedNote(TypedDict):
    sessionId: str
    reason: CompactionReason
    error: ErrorInfo


class ApprovalResolvedNote(TypedDict):
    sessionId: str
    approvalId: str
    decision: Decision
    message: NotRequired[str]
    # "allow_conversation" answered for a call nothing can be remembered for: it was allowed
    # once ("decision" says "allow"), and this says why.
    notGranted: NotRequired[str]


class PlanUpdatedNote(TypedDict):
    sessionId: str
    plan: Plan


class PinsUpdatedNote(TypedDict):
    sessionId: str
    itemIds: list[str]


class ListChangedNote(TypedDict):
    """`conversation/listChanged`: a conversation changed, or (`deleted`) went away."""

    conversation: NotRequired[ConversationInfo]
    conversationId: NotRequired[str]
    deleted: NotRequired[bool]


class ConfigErrorNote(TypedDict):
    path: str
    state: Literal["error"]
    message: str
    key: str


class ConfigReloadedNote(TypedDict):
    path: str
    state: Literal["ok"]
    message: str
    changed: list[str]
    restartNeeded: list[str]
    mcpRestarted: list[str]


NOTIFICATION_PARAMS: Final[dict[str, type]] = {
    m.CONVERSATION_UPDATED: ConversationUpdatedNote,
    m.CONVERSATION_DELETED: ConversationDeletedNote,
    m.SESSION_UPDATED: SessionNote,
    m.SESSION_STARTED: SessionNote,
    m.TURN_STARTED: TurnStartedNote,
    m.TURN_ENDED: TurnEndedNote,
    m.ITEM_STARTED: ItemStartedNote,
    m.ITEM_DELTA: ItemDeltaNote,
    m.ITEM_COMPLETED: ItemCompletedNote,
    m.ITEM_DISCARDED: ItemDiscardedNote,
    m.INBOX_UPDATED: InboxUpdatedNote,
    m.USAGE_UPDATED: UsageUpdatedNote,
    m.RETRY_SCHEDULED: RetryScheduledNote,
    m.COMPACTION_STARTED: CompactionStartedNote,
    m.COMPACTION_COMPLETED: CompactionCompletedNote,
    m.COMPACTION_FAILED: CompactionFailedNote,
    m.APPROVAL_REQUESTED: ApprovalRequestedNote,
    m.APPROVAL_RESOLVED: ApprovalResolvedNote,
    m.PLAN_UPDATED: PlanUpdatedNote,
    m.PINS_UPDATED: PinsUpdatedNote,
    m.CONVERSATION_LIST_CHANGED: ListChangedNote,
    m.CONFIG_RELOADED: ConfigReloadedNote,
    m.CONFIG_ERROR: ConfigErrorNote,
    # One server's new state: the params are one entry of `mcp/list`'s `servers`.
    m.MCP_STATUS_CHANGED: McpServerState,
    m.FILES_REQUESTED: fp.FilesRequestedNote,
}

# -- request params ------------------------------------------------------------------------------


class ClientInfo(TypedDict, total=False):
    name: str
    version: str


class InitializeParams(TypedDict, total=False):
    clientInfo: ClientInfo
    protocolVersion: JsonValue


class ReadResourceParams(TypedDict):
    server: str
    uri: str


class GetPromptParams(TypedDict):
    server: str
    name: str
    arguments: NotRequired[dict[str, str]]


class NoParams(TypedDict):
    pass


class ShellRunParams(TypedDict):
    conversationId: str
    command: str


class DirectoriesParams(TypedDict, total=False):
    path: str  # absolute, or ~ / ~/… (the daemon user's home); default "~"
    hidden: bool


class ExpandParams(TypedDict):
    conversationId: str
    name: str
    arguments: NotRequired[str]


class ConversationParams(TypedDict):
    """Every request that names a conversation and nothing else."""

    conversationId: str


class SessionParams(TypedDict):
    """A conversation and one of its sessions (the root when `sessionId` is absent)."""

    conversationId: str
    sessionId: NotRequired[str]


class InputParams(TypedDict):
    inputId: str


class ListParams(TypedDict, total=False):
    archived: bool
    search: str
    limit: int
    cursor: str


class CreateParams(TypedDict):
    cwd: str
    agent: NotRequired[str]
    model: NotRequired[str]
    title: NotRequired[str]


class SubscribeParams(TypedDict):
    conversationId: str
    afterSeq: NotRequired[int]


class ReadParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    beforeItem: NotRequired[str]
    limit: NotRequired[int]


class RenameParams(TypedDict):
    conversationId: str
    title: str


class ForkParams(TypedDict):
    conversationId: str
    upToItemId: NotRequired[str]


class RewindParams(TypedDict):
    conversationId: str
    messageId: str
    restoreFiles: NotRequired[bool]
    force: NotRequired[bool]


class UndoParams(TypedDict):
    conversationId: str
    force: NotRequired[bool]


class ExportParams(TypedDict):
    conversationId: str
    path: str


class ImportParams(TypedDict):
    path: str
    cwd: str  # never the bundle's own (docs/security.md)
    onConflict: NotRequired[Literal["ask", "keep-both", "skip"]]


class ContextParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    includeBody: NotRequired[bool]


class PinParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    itemId: str


class ReplacedParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    summaryItemId: str


class SetModelParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    model: str


class SetAgentParams(TypedDict):
    conversationId: str
    agent: str


class SetCwdParams(TypedDict):
    conversationId: str
    cwd: str


PermissionMode = Literal["plan", "ask", "auto-edit"]


class SetPermissionModeParams(TypedDict):
    conversationId: str
    mode: PermissionMode


class SendParams(TypedDict):
    conversationId: str
    sessionId: NotRequired[str]
    text: NotRequired[str]  # required unless `images` carries an image (docs/protocol.md)
    mode: NotRequired[InputMode]
    images: NotRequired[list[JsonObject]]


class EditParams(TypedDict):
    inputId: str
    text: str


class RememberParams(TypedDict):
    conversationId: str
    text: str
    scope: NotRequired[MemoryScope]


class MemoryWriteParams(TypedDict):
    conversationId: str
    scope: MemoryScope
    text: NotRequired[str]  # default "": the file is emptied


class RespondParams(TypedDict):
    conversationId: str
    approvalId: str
    decision: Decision
    message: NotRequired[str]


REQUEST_PARAMS: Final[dict[str, type]] = {
    m.INITIALIZE: InitializeParams,
    m.CONVERSATION_LIST: ListParams,
    m.CONVERSATION_CREATE: CreateParams,
    m.CONVERSATION_SUBSCRIBE: SubscribeParams,
    m.CONVERSATION_UNSUBSCRIBE: ConversationParams,
    m.CONVERSATION_WATCH_LIST: NoParams,
    m.CONVERSATION_UNWATCH_LIST: NoParams,
    m.CONVERSATION_READ: ReadParams,
    m.CONVERSATION_RENAME: RenameParams,
    m.CONVERSATION_ARCHIVE: ConversationParams,
    m.CONVERSATION_UNARCHIVE: ConversationParams,
    m.CONVERSATION_DELETE: ConversationParams,
    m.CONVERSATION_USAGE: SessionParams,
    m.CONVERSATION_FORK: ForkParams,
    m.CONVERSATION_REWIND: RewindParams,
    m.CONVERSATION_UNDO: UndoParams,
    m.CONVERSATION_CHECKPOINTS: ConversationParams,
    m.CONVERSATION_DIFF: ConversationParams,
    m.CONVERSATION_TREE: ConversationParams,
    m.CONVERSATION_EXPORT: ExportParams,
    m.CONVERSATION_IMPORT: ImportParams,
    m.CONVERSATION_COMPACT: ConversationParams,
    m.CONVERSATION_CONTEXT: ContextParams,
    m.CONVERSATION_PIN: PinParams,
    m.CONVERSATION_UNPIN: PinParams,
    m.CONVERSATION_REPLACED: ReplacedParams,
    m.CONVERSATION_SET_MODEL: SetModelParams,
    m.CONVERSATION_SET_AGENT: SetAgentParams,
    m.CONVERSATION_SET_CWD: SetCwdParams,
    m.CONVERSATION_SET_PERMISSION_MODE: SetPermissionModeParams,
    m.INPUT_SEND: SendParams,
    m.INPUT_EDIT: EditParams,
    m.INPUT_WITHDRAW: InputParams,
    m.INPUT_STEER: InputParams,
    m.INPUT_JUMP: InputParams,
    m.TURN_INTERRUPT: SessionParams,
    m.TURN_RESUME: SessionParams,
    m.APPROVAL_RESPOND: RespondParams,
    m.AGENTS_LIST: NoParams,
    m.MODELS_LIST: NoParams,
    m.MCP_LIST: NoParams,
    m.MCP_GET_PROMPT: GetPromptParams,
    m.MCP_READ_RESOURCE: ReadResourceParams,
    m.SESSIONS_LIST: ConversationParams,
    m.CONVERSATION_INIT: ConversationParams,
    m.SHELL_RUN: ShellRunParams,
    m.DIRECTORIES_LIST: DirectoriesParams,
    m.COMMANDS_LIST: ConversationParams,
    m.COMMANDS_EXPAND: ExpandParams,
    m.MEMORY_READ: ConversationParams,
    m.MEMORY_REMEMBER: RememberParams,
    m.MEMORY_WRITE: MemoryWriteParams,
    m.FILES_HOST: fp.FilesHostParams,
    m.FILES_RESPOND: fp.FilesRespondParams,
    m.FILES_OUTPUT: fp.FilesOutputParams,
    m.CONVERSATION_SET_MCP_SERVERS: fp.SetMcpServersParams,
}

# -- results -------------------------------------------------------------------------------------


class ServerInfo(TypedDict):
    name: str
    version: str
    machine: str  # the daemon's host name: a client over ssh or a browser names where it is


class Capabilities(TypedDict):
    inputModes: list[str]
    maxFrameBytes: int
    methods: list[str]


class InitializeResult(TypedDict):
    config: ConfigState | None
    serverInfo: ServerInfo
    protocolVersion: int
    capabilities: Capabilities


class ListResult(TypedDict):
    # Rows straight from the index are sent as pre-encoded JSON (orjson.Fragment) of this shape.
    conversations: list[ConversationSummary]
    nextCursor: NotRequired[str]


class ConversationResult(TypedDict):
    """`conversation/create`, `conversation/fork`."""

    conversation: ConversationInfo


class SubscribeResult(TypedDict):
    snapshot: Snapshot | None
    seq: int
    replayed: NotRequired[int]


class UnsubscribeResult(TypedDict):
    unsubscribed: bool


class WatchResult(TypedDict):
    watching: bool


class ReadResult(TypedDict):
    items: list[Item]
    hasMore: bool


class EmptyResult(TypedDict):
    pass


class RestoreResult(TypedDict):
    """`conversation/undo`, and the `files` of a `conversation/rewind` with `restoreFiles`."""

    restored: list[str]
    conflicts: list[RestoreConflict]
    turnIds: list[str]
    # Turns to undo whose snapshots are gone (a parent conversation not here, or dropped to
    # stay within the bound): their files were not put back. Only when there are any.
    missingTurnIds: NotRequired[list[str]]
    # Files a restore never writes (inside .git, .hg, .svn, .jj, or an executable under a
    # hooks/ folder: docs/security.md), left as they are. Only when there are any.
    refusedPaths: NotRequired[list[str]]
    # Files of those turns the store could not keep (larger than `max_file_mb`), recorded as
    # skipped when the turn was captured: left as they are. Only when there are any.
    skipped: NotRequired[list[SkippedFile]]


class RewindResult(TypedDict):
    conversation: ConversationInfo
    composerText: str
    composerImages: NotRequired[list[ImageRef]]
    files: NotRequired[RestoreResult]


class CheckpointFile(TypedDict):
    path: str
    change: str


class CheckpointTurn(TypedDict):
    turnId: str
    sessionId: str
    restored: bool
    files: list[CheckpointFile]
    # Files the turn changed that the store could not keep; only when there are any.
    skipped: NotRequired[list[SkippedFile]]
    # A turn a fork copied from an ancestor: the conversation that ran it.
    fromConversationId: NotRequired[str]


class DiffResult(TypedDict):
    """`conversation/diff`: each file the conversation changed, from before its first change
    to now; `skipped`: files it changed that the checkpoints could not keep."""

    files: list[FileDiff]
    skipped: NotRequired[list[SkippedFile]]


class CheckpointsResult(TypedDict):
    enabled: bool
    bytes: int
    limitBytes: int
    skipped: list[str]
    turns: list[CheckpointTurn]


class TreeResult(TypedDict):
    conversationId: str
    root: TreeNode


class ExportSummary(TypedDict):
    """What a bundle export wrote (the HTTP export route answers this)."""

    conversationId: str
    conversations: list[str]
    missingAncestors: list[str]


class ExportResult(ExportSummary):
    path: str
    bytes: int


class ImportResult(TypedDict):
    conversationId: str | None
    imported: list[str]
    skipped: list[str]
    renamed: dict[str, str]
    # "Allow for this conversation" grants the bundle carried, dropped (docs/security.md).
    grantsDropped: int
    # Agents the bundle named that would run wider than the default agent, replaced by it.
    agentsReset: int
    # The working directory the imported conversations were given: the request's, never the
    # bundle's (docs/security.md, "Checkpoints and bundles").
    cwd: str


class CompactResult(TypedDict):
    compacted: bool
    summaryItemId: NotRequired[str]
    reason: NotRequired[str]


class ContextTrace(TypedDict):
    sessionId: str
    parts: list[TracePart]
    total: int
    omitted: list[Omitted]
    usage: Usage
    body: NotRequired[JsonObject | None]
    # Where the model's window came from, as in models/list (docs/configuration.md).
    windowSource: NotRequired[str]


class PinResult(TypedDict):
    pinned: list[str]
    changed: bool


class ReplacedResult(TypedDict):
    summaryItemId: str
    fromItemId: str | None
    toItemId: str | None
    replacesSummary: str | None
    keptPinned: list[str]
    itemIds: list[str]
    items: list[Item]


class DirectoryEntry(TypedDict):
    name: str
    path: str  # absolute


class DirectoryListing(TypedDict):
    """directories/list: the subdirectories the daemon's user can open."""

    path: str  # the directory listed, absolute (`~` expanded)
    parent: str | None  # None at the root
    home: str  # the daemon user's home
    directories: list[DirectoryEntry]
    truncated: bool  # more than the method returns


class CustomCommandInfo(TypedDict):
    name: str
    description: str
    source: Literal["user", "project"]


class CommandsResult(TypedDict):
    commands: list[CustomCommandInfo]


class ExpandResult(TypedDict):
    text: str  # the message to send, as if typed


class ShellRunResult(TypedDict):
    itemId: str  # the user message (`origin: "shell"`) that carries the output
    output: str
    isError: bool


class SendResult(TypedDict):
    inputId: str
    disposition: str


class WithdrawResult(TypedDict):
    text: str
    images: NotRequired[list[ImageRef]]


class InterruptResult(TypedDict):
    interrupted: bool


class ResumeResult(TypedDict):
    turnId: str
    resumedTurnId: str


class RespondResult(TypedDict):
    approvalId: str
    decision: Decision
    notGranted: NotRequired[str]


class AgentsResult(TypedDict):
    agents: list[AgentInfo]


class ModelsResult(TypedDict):
    models: list[ModelInfo]


class McpResult(TypedDict):
    servers: list[McpServerState]


class GetPromptResult(TypedDict):
    text: str


class McpTextResult(TypedDict):
    text: str


class SessionsResult(TypedDict):
    sessions: list[SessionInfo]


class MemoryFile(TypedDict):
    """A memory file of the conversation's user or project (`text` "" when it does not exist)."""

    scope: MemoryScope
    path: str
    text: str
    exists: bool


class MemoryResult(TypedDict):
    files: list[MemoryFile]


REQUEST_RESULTS: Final[dict[str, type]] = {
    m.INITIALIZE: InitializeResult,
    m.CONVERSATION_LIST: ListResult,
    m.CONVERSATION_CREATE: ConversationResult,
    m.CONVERSATION_SUBSCRIBE: SubscribeResult,
    m.CONVERSATION_UNSUBSCRIBE: UnsubscribeResult,
    m.CONVERSATION_WATCH_LIST: WatchResult,
    m.CONVERSATION_UNWATCH_LIST: WatchResult,
    m.CONVERSATION_READ: ReadResult,
    m.CONVERSATION_RENAME: EmptyResult,
    m.CONVERSATION_ARCHIVE: EmptyResult,
    m.CONVERSATION_UNARCHIVE: EmptyResult,
    m.CONVERSATION_DELETE: EmptyResult,
    m.CONVERSATION_USAGE: Usage,
    m.CONVERSATION_FORK: ConversationResult,
    m.CONVERSATION_REWIND: RewindResult,
    m.CONVERSATION_UNDO: RestoreResult,
    m.CONVERSATION_CHECKPOINTS: CheckpointsResult,
    m.CONVERSATION_DIFF: DiffResult,
    m.CONVERSATION_TREE: TreeResult,
    m.CONVERSATION_EXPORT: ExportResult,
    m.CONVERSATION_IMPORT: ImportResult,
    m.CONVERSATION_COMPACT: CompactResult,
    m.CONVERSATION_CONTEXT: ContextTrace,
    m.CONVERSATION_PIN: PinResult,
    m.CONVERSATION_UNPIN: PinResult,
    m.CONVERSATION_REPLACED: ReplacedResult,
    m.CONVERSATION_SET_MODEL: EmptyResult,
    m.CONVERSATION_SET_AGENT: EmptyResult,
    m.CONVERSATION_SET_CWD: EmptyResult,
    m.CONVERSATION_SET_PERMISSION_MODE: EmptyResult,
    m.INPUT_SEND: SendResult,
    m.INPUT_EDIT: EmptyResult,
    m.INPUT_WITHDRAW: WithdrawResult,
    m.INPUT_STEER: EmptyResult,
    m.INPUT_JUMP: EmptyResult,
    m.TURN_INTERRUPT: InterruptResult,
    m.TURN_RESUME: ResumeResult,
    m.APPROVAL_RESPOND: RespondResult,
    m.AGENTS_LIST: AgentsResult,
    m.SHELL_RUN: ShellRunResult,
    m.DIRECTORIES_LIST: DirectoryListing,
    m.COMMANDS_LIST: CommandsResult,
    m.COMMANDS_EXPAND: ExpandResult,
    m.MODELS_LIST: ModelsResult,
    m.MCP_LIST: McpResult,
    m.MCP_GET_PROMPT: GetPromptResult,
    m.MCP_READ_RESOURCE: McpTextResult,
    m.SESSIONS_LIST: SessionsResult,
    m.CONVERSATION_INIT: SendResult,
    m.MEMORY_READ: MemoryResult,
    m.MEMORY_REMEMBER: MemoryFile,
    m.MEMORY_WRITE: MemoryFile,
    m.FILES_HOST: fp.FilesHostResult,
    m.FILES_RESPOND: fp.FilesRespondResult,
    m.FILES_OUTPUT: fp.FilesRespondResult,
    m.CONVERSATION_SET_MCP_SERVERS: McpResult,
}
