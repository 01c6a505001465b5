"""Codex 0.171.0's app-server wire types, generated from its schema.

Do not edit: `python -m openvaala_server.codex.gen` writes this file (see that module)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypeAlias, TypedDict

from openvaala_server.protocol.json_types import JsonValue

AbsolutePathBuf: TypeAlias = str


AdditionalContextKind: TypeAlias = Literal["untrusted", "application"]


class AdditionalNetworkPermissions(TypedDict):
    enabled: NotRequired[bool | None]


AgentMessageDelivery: TypeAlias = Literal["async"]


AgentPath: TypeAlias = str


class WellbeingPromptHelplineAnswerReplacement(TypedDict):
    kind: Literal["wellbeingPromptHelpline"]


AnswerReplacement: TypeAlias = WellbeingPromptHelplineAnswerReplacement


ApprovalsReviewer: TypeAlias = Literal["user", "auto_review", "guardian_subagent"]


class Granular(TypedDict):
    mcp_elicitations: bool
    request_permissions: NotRequired[bool]
    rules: bool
    sandbox_approval: bool
    skill_approval: NotRequired[bool]


class GranularAskForApproval(TypedDict):
    granular: Granular


AskForApproval: TypeAlias = Literal["untrusted", "on-request", "never"] | GranularAskForApproval


class AsyncUserInputQuestion(TypedDict):
    options: NotRequired[list[str] | None]
    title: str


class BlockReason1(TypedDict):
    kind: Literal["protection"]
    protectionType: str


class KindBlockReason(TypedDict):
    kind: Literal["cyber"]
    trustedAccess: NotRequired[bool | None]


BlockReason: TypeAlias = BlockReason1 | KindBlockReason


class ByteRange(TypedDict):
    end: int
    start: int


class HttpConnectionFailed(TypedDict):
    httpStatusCode: NotRequired[int | None]


class HttpConnectionFailedCodexErrorInfo(TypedDict):
    """
    This translation layer make sure that we expose codex error code in camel case.

    When an upstream HTTP status is available (for example, from the Responses API or a provider), it is forwarded in `httpStatusCode` on the relevant `codexErrorInfo` variant.
    """

    httpConnectionFailed: HttpConnectionFailed


class ResponseStreamConnectionFailed(TypedDict):
    httpStatusCode: NotRequired[int | None]


class ResponseStreamConnectionFailedCodexErrorInfo(TypedDict):
    """
    Failed to connect to the response SSE stream.
    """

    responseStreamConnectionFailed: ResponseStreamConnectionFailed


class ResponseStreamDisconnected(TypedDict):
    httpStatusCode: NotRequired[int | None]


class ResponseStreamDisconnectedCodexErrorInfo(TypedDict):
    """
    The response SSE stream disconnected in the middle of a turn before completion.
    """

    responseStreamDisconnected: ResponseStreamDisconnected


class ResponseTooManyFailedAttempts(TypedDict):
    httpStatusCode: NotRequired[int | None]


class ResponseTooManyFailedAttemptsCodexErrorInfo(TypedDict):
    """
    Reached the retry limit for responses.
    """

    responseTooManyFailedAttempts: ResponseTooManyFailedAttempts


CollabAgentStatus: TypeAlias = Literal[
    "pendingInit", "running", "interrupted", "completed", "errored", "shutdown", "notFound"
]


CollabAgentTool: TypeAlias = Literal[
    "spawnAgent",
    "sendInput",
    "resumeAgent",
    "wait",
    "closeAgent",
    "sendMessage",
    "followupTask",
    "interruptAgent",
    "listAgents",
]


CollabAgentToolCallStatus: TypeAlias = Literal["inProgress", "completed", "failed", "interrupted"]


ReadCommandActionType: TypeAlias = Literal["read"]


ListFilesCommandActionType: TypeAlias = Literal["listFiles"]


class ListFilesCommandAction(TypedDict):
    command: str
    path: NotRequired[str | None]
    type: ListFilesCommandActionType


SearchCommandActionType: TypeAlias = Literal["search"]


class SearchCommandAction(TypedDict):
    command: str
    path: NotRequired[str | None]
    query: NotRequired[str | None]
    type: SearchCommandActionType


UnknownCommandActionType: TypeAlias = Literal["unknown"]


class UnknownCommandAction(TypedDict):
    command: str
    type: UnknownCommandActionType


class AcceptWithExecpolicyAmendment(TypedDict):
    execpolicy_amendment: list[str]


class AcceptWithExecpolicyAmendmentCommandExecutionApprovalDecision(TypedDict):
    """
    User approved the command, and wants to apply the proposed execpolicy amendment so future matching commands can run without prompting.
    """

    acceptWithExecpolicyAmendment: AcceptWithExecpolicyAmendment


CommandExecutionApprovalKind: TypeAlias = Literal["command", "writeStdin"] | Literal["humanCommand"]


CommandExecutionSource: TypeAlias = Literal[
    "agent", "userShell", "unifiedExecStartup", "unifiedExecInteraction"
]


CommandExecutionStatus: TypeAlias = Literal["inProgress", "completed", "failed", "declined"]


CyberAccessProgram: TypeAlias = Literal["standard", "daybreakBlue", "daybreakRed"]


InputTextDynamicToolCallOutputContentItemType: TypeAlias = Literal["inputText"]


class InputTextDynamicToolCallOutputContentItem(TypedDict):
    text: str
    type: InputTextDynamicToolCallOutputContentItemType


InputImageDynamicToolCallOutputContentItemType: TypeAlias = Literal["inputImage"]


class InputImageDynamicToolCallOutputContentItem(TypedDict):
    imageUrl: str
    type: InputImageDynamicToolCallOutputContentItemType


InputAudioDynamicToolCallOutputContentItemType: TypeAlias = Literal["inputAudio"]


class InputAudioDynamicToolCallOutputContentItem(TypedDict):
    audioUrl: str
    type: InputAudioDynamicToolCallOutputContentItemType


DynamicToolCallOutputContentItem: TypeAlias = (
    InputTextDynamicToolCallOutputContentItem
    | InputImageDynamicToolCallOutputContentItem
    | InputAudioDynamicToolCallOutputContentItem
)


DynamicToolCallStatus: TypeAlias = Literal["inProgress", "completed", "failed"]


class FileChangeRequestApprovalParams(TypedDict):
    grantRoot: NotRequired[str | None]
    itemId: str
    reason: NotRequired[str | None]
    startedAtMs: int
    threadId: str
    turnId: str


FileSystemAccessMode: TypeAlias = Literal["read", "write", "deny"]


PathFileSystemPathType: TypeAlias = Literal["path"]


GlobPatternFileSystemPathType: TypeAlias = Literal["glob_pattern"]


class GlobPatternFileSystemPath(TypedDict):
    pattern: str
    type: GlobPatternFileSystemPathType


SpecialFileSystemPathType: TypeAlias = Literal["special"]


class RootFileSystemSpecialPath(TypedDict):
    kind: Literal["root"]


class MinimalFileSystemSpecialPath(TypedDict):
    kind: Literal["minimal"]


class TmpdirFileSystemSpecialPath(TypedDict):
    kind: Literal["tmpdir"]


class SlashTmpFileSystemSpecialPath(TypedDict):
    kind: Literal["slash_tmp"]


InputTextFunctionCallOutputContentItemType: TypeAlias = Literal["input_text"]


class InputTextFunctionCallOutputContentItem(TypedDict):
    """
    Responses API compatible content items that can be returned by a tool call. This is a subset of ContentItem with the types we support as function call outputs.
    """

    text: str
    type: InputTextFunctionCallOutputContentItemType


InputImageFunctionCallOutputContentItemType: TypeAlias = Literal["input_image"]


InputAudioFunctionCallOutputContentItemType: TypeAlias = Literal["input_audio"]


class AudioUrlFunctionCallOutputContentItem(TypedDict):
    """
    Inline audio data or an uploaded file loaded by the Responses API.
    """

    type: InputAudioFunctionCallOutputContentItemType
    audio_url: str


class FileIdFunctionCallOutputContentItem1(TypedDict):
    """
    Inline audio data or an uploaded file loaded by the Responses API.
    """

    type: InputAudioFunctionCallOutputContentItemType
    file_id: str


InputAudioFunctionCallOutputContentItem: TypeAlias = (
    AudioUrlFunctionCallOutputContentItem | FileIdFunctionCallOutputContentItem1
)


EncryptedContentFunctionCallOutputContentItemType: TypeAlias = Literal["encrypted_content"]


class EncryptedContentFunctionCallOutputContentItem(TypedDict):
    """
    Responses API compatible content items that can be returned by a tool call. This is a subset of ContentItem with the types we support as function call outputs.
    """

    encrypted_content: str
    type: EncryptedContentFunctionCallOutputContentItemType


class GitInfo(TypedDict):
    branch: NotRequired[str | None]
    originUrl: NotRequired[str | None]
    sha: NotRequired[str | None]


HelplineSubject: TypeAlias = Literal["answer", "prompt"]


class HookPromptFragment(TypedDict):
    hookRunId: str
    text: str


ImageDetail: TypeAlias = Literal["auto", "low", "high", "original"]


UsageLimitExceededImageGenerationFailureType: TypeAlias = Literal["usageLimitExceeded"]


class UsageLimitExceededImageGenerationFailure(TypedDict):
    limitId: str
    resetsAt: NotRequired[int | None]
    type: UsageLimitExceededImageGenerationFailureType


ImageGenerationFailure: TypeAlias = UsageLimitExceededImageGenerationFailure


class ImageGenerationInputImage(TypedDict):
    """
    A local image file successfully read for this exact image-generation request.
    """

    path: AbsolutePathBuf
    sha256: str


LegacyAppPathString: TypeAlias = str


McpAppDisplayMode: TypeAlias = Literal["inline", "fullscreen"]


class McpAppUi(TypedDict):
    """
    UI resource and display preference for model invocations, captured from the tool descriptor.
    """

    preferredModelDisplayMode: McpAppDisplayMode
    resourceUri: str


class McpToolCallAppContext(TypedDict):
    actionName: NotRequired[str | None]
    appName: NotRequired[str | None]
    connectorId: str
    linkId: NotRequired[str | None]
    resourceUri: NotRequired[str | None]


class McpToolCallError(TypedDict):
    message: str


class McpToolCallResult(TypedDict):
    content: list[JsonValue]
    structuredContent: NotRequired[JsonValue]


McpToolCallStatus: TypeAlias = Literal["inProgress", "completed", "failed"]


class MemoryCitationEntry(TypedDict):
    lineEnd: int
    lineStart: int
    note: str
    path: str


MessagePhase: TypeAlias = (
    Literal["commentary"] | Literal["partial_answer"] | Literal["final_answer"]
)


class MisalignmentSteer(TypedDict):
    message: str


ModeKind: TypeAlias = Literal["plan", "default"]


class CustomMultiAgentMode(TypedDict):
    """
    Controls the effective multi-agent delegation instructions for a turn. `custom` means the configured mode hint defines the policy instead of a built-in policy.
    """

    custom: str


MultiAgentMode: TypeAlias = Literal["explicitRequestOnly", "proactive"] | CustomMultiAgentMode


NetworkAccess: TypeAlias = Literal["restricted", "enabled"]


NetworkApprovalProtocol: TypeAlias = Literal["http", "https", "socks5Tcp", "socks5Udp"]


NetworkPolicyRuleAction: TypeAlias = Literal["allow", "deny"]


NonSteerableTurnKind: TypeAlias = Literal["review", "compact"]


PatchApplyStatus: TypeAlias = Literal["inProgress", "completed", "failed", "declined"]


AddPatchChangeKindType: TypeAlias = Literal["add"]


class AddPatchChangeKind(TypedDict):
    type: AddPatchChangeKindType


DeletePatchChangeKindType: TypeAlias = Literal["delete"]


class DeletePatchChangeKind(TypedDict):
    type: DeletePatchChangeKindType


UpdatePatchChangeKindType: TypeAlias = Literal["update"]


class UpdatePatchChangeKind(TypedDict):
    move_path: NotRequired[str | None]
    type: UpdatePatchChangeKindType


PatchChangeKind: TypeAlias = AddPatchChangeKind | DeletePatchChangeKind | UpdatePatchChangeKind


Personality: TypeAlias = Literal["none", "friendly", "pragmatic"]


ReasoningEffort: TypeAlias = str


ReasoningSummary: TypeAlias = Literal["auto", "concise", "detailed"] | Literal["none"]


DangerFullAccessSandboxPolicyType: TypeAlias = Literal["dangerFullAccess"]


class DangerFullAccessSandboxPolicy(TypedDict):
    type: DangerFullAccessSandboxPolicyType


ReadOnlySandboxPolicyType: TypeAlias = Literal["readOnly"]


class ReadOnlySandboxPolicy(TypedDict):
    networkAccess: NotRequired[bool]
    type: ReadOnlySandboxPolicyType


ExternalSandboxSandboxPolicyType: TypeAlias = Literal["externalSandbox"]


class ExternalSandboxSandboxPolicy(TypedDict):
    networkAccess: NotRequired[NetworkAccess]
    type: ExternalSandboxSandboxPolicyType


WorkspaceWriteSandboxPolicyType: TypeAlias = Literal["workspaceWrite"]


class WorkspaceWriteSandboxPolicy(TypedDict):
    excludeSlashTmp: NotRequired[bool]
    excludeTmpdirEnvVar: NotRequired[bool]
    networkAccess: NotRequired[bool]
    type: WorkspaceWriteSandboxPolicyType
    writableRoots: NotRequired[list[AbsolutePathBuf]]


SandboxPolicy: TypeAlias = (
    DangerFullAccessSandboxPolicy
    | ReadOnlySandboxPolicy
    | ExternalSandboxSandboxPolicy
    | WorkspaceWriteSandboxPolicy
)


class CustomSessionSource(TypedDict):
    custom: str


class Settings(TypedDict):
    """
    Settings for a collaboration mode.
    """

    developer_instructions: NotRequired[str | None]
    model: str
    reasoning_effort: NotRequired[ReasoningEffort | None]


SubAgentActivityKind: TypeAlias = Literal["started", "interacted", "interrupted", "completed"]


class OtherSubAgentSource(TypedDict):
    other: str


class TextElement(TypedDict):
    byteRange: ByteRange
    placeholder: NotRequired[str | None]


ThreadActiveFlag: TypeAlias = Literal["waitingOnApproval", "waitingOnUserInput"]


class ThreadEnvironment(TypedDict):
    """
    An environment selected by a loaded thread, independent of connection status.
    """

    cwd: LegacyAppPathString
    environmentId: str
    runtimeWorkspaceRoots: list[LegacyAppPathString]


class ThreadExtra(TypedDict):
    """
    Extra app-server data for a thread.
    """


ThreadHistoryMode: TypeAlias = Literal["legacy", "paginated"]


ThreadId: TypeAlias = str


UserMessageThreadItemType: TypeAlias = Literal["userMessage"]


HookPromptThreadItemType: TypeAlias = Literal["hookPrompt"]


class HookPromptThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    fragments: list[HookPromptFragment]
    id: str
    type: HookPromptThreadItemType


AgentMessageThreadItemType: TypeAlias = Literal["agentMessage"]


FunctionCallOutputThreadItemType: TypeAlias = Literal["functionCallOutput"]


PlanThreadItemType: TypeAlias = Literal["plan"]


class PlanThreadItem(TypedDict):
    """
    EXPERIMENTAL - proposed plan item content. The completed plan item is authoritative and may not match the concatenation of `PlanDelta` text.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    text: str
    type: PlanThreadItemType


ReasoningThreadItemType: TypeAlias = Literal["reasoning"]


class ReasoningThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    content: NotRequired[list[str]]
    id: str
    summary: NotRequired[list[str]]
    type: ReasoningThreadItemType


CommandExecutionThreadItemType: TypeAlias = Literal["commandExecution"]


FileChangeThreadItemType: TypeAlias = Literal["fileChange"]


McpToolCallThreadItemType: TypeAlias = Literal["mcpToolCall"]


class McpToolCallThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    appContext: NotRequired[McpToolCallAppContext | None]
    arguments: JsonValue
    durationMs: NotRequired[int | None]
    environmentId: NotRequired[str | None]
    error: NotRequired[McpToolCallError | None]
    id: str
    mcpAppResourceUri: NotRequired[str | None]
    mcpAppUi: NotRequired[McpAppUi | None]
    pluginId: NotRequired[str | None]
    readOnlyHint: NotRequired[bool | None]
    result: NotRequired[McpToolCallResult | None]
    server: str
    status: McpToolCallStatus
    tool: str
    type: McpToolCallThreadItemType


DynamicToolCallThreadItemType: TypeAlias = Literal["dynamicToolCall"]


class DynamicToolCallThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    arguments: JsonValue
    contentItems: NotRequired[list[DynamicToolCallOutputContentItem] | None]
    durationMs: NotRequired[int | None]
    id: str
    namespace: NotRequired[str | None]
    status: DynamicToolCallStatus
    success: NotRequired[bool | None]
    tool: str
    type: DynamicToolCallThreadItemType


CollabAgentToolCallThreadItemType: TypeAlias = Literal["collabAgentToolCall"]


SubAgentActivityThreadItemType: TypeAlias = Literal["subAgentActivity"]


class SubAgentActivityThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    agentPath: str
    agentThreadId: str
    id: str
    kind: SubAgentActivityKind
    model: NotRequired[str | None]
    reasoningEffort: NotRequired[ReasoningEffort | None]
    type: SubAgentActivityThreadItemType


WebSearchThreadItemType: TypeAlias = Literal["webSearch"]


ImageViewThreadItemType: TypeAlias = Literal["imageView"]


class ImageViewThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    path: LegacyAppPathString
    type: ImageViewThreadItemType


SleepThreadItemType: TypeAlias = Literal["sleep"]


class SleepThreadItem(TypedDict):
    """
    Display item emitted by the interruptible `clock.sleep` tool.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    durationMs: int
    id: str
    type: SleepThreadItemType


ImageGenerationThreadItemType: TypeAlias = Literal["imageGeneration"]


class FileIdThreadItem(TypedDict):
    """
    Either inline generated-image data or its durable attachment-store identity.

    `File` must remain first so rollouts written during the migration, which contain both an empty `result` and a `fileId`, retain the file reference when deserialized.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    failure: NotRequired[ImageGenerationFailure | None]
    generationId: NotRequired[str | None]
    id: str
    inputImages: NotRequired[list[ImageGenerationInputImage]]
    revisedPrompt: NotRequired[str | None]
    savedPath: NotRequired[AbsolutePathBuf | None]
    status: str
    transparentBackground: NotRequired[bool | None]
    type: ImageGenerationThreadItemType
    fileId: str


class ResultThreadItem(TypedDict):
    """
    Either inline generated-image data or its durable attachment-store identity.

    `File` must remain first so rollouts written during the migration, which contain both an empty `result` and a `fileId`, retain the file reference when deserialized.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    failure: NotRequired[ImageGenerationFailure | None]
    generationId: NotRequired[str | None]
    id: str
    inputImages: NotRequired[list[ImageGenerationInputImage]]
    revisedPrompt: NotRequired[str | None]
    savedPath: NotRequired[AbsolutePathBuf | None]
    status: str
    transparentBackground: NotRequired[bool | None]
    type: ImageGenerationThreadItemType
    result: str


ImageGenerationThreadItem: TypeAlias = FileIdThreadItem | ResultThreadItem


EnteredReviewModeThreadItemType: TypeAlias = Literal["enteredReviewMode"]


class EnteredReviewModeThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    review: str
    type: EnteredReviewModeThreadItemType


ExitedReviewModeThreadItemType: TypeAlias = Literal["exitedReviewMode"]


class ExitedReviewModeThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    review: str
    type: ExitedReviewModeThreadItemType


ContextCompactionThreadItemType: TypeAlias = Literal["contextCompaction"]


class ContextCompactionThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    type: ContextCompactionThreadItemType


class ThreadSectionAppearance(TypedDict):
    """
    Extensible visual presentation for a custom thread section.
    """

    color: NotRequired[str | None]
    icon: NotRequired[str | None]


ThreadSource: TypeAlias = str


ThreadSourceKind: TypeAlias = Literal[
    "cli",
    "vscode",
    "exec",
    "appServer",
    "subAgent",
    "subAgentReview",
    "subAgentCompact",
    "subAgentThreadSpawn",
    "subAgentOther",
    "unknown",
]


NotLoadedThreadStatusType: TypeAlias = Literal["notLoaded"]


class NotLoadedThreadStatus(TypedDict):
    type: NotLoadedThreadStatusType


IdleThreadStatusType: TypeAlias = Literal["idle"]


class IdleThreadStatus(TypedDict):
    type: IdleThreadStatusType


SystemErrorThreadStatusType: TypeAlias = Literal["systemError"]


class SystemErrorThreadStatus(TypedDict):
    type: SystemErrorThreadStatusType


ActiveThreadStatusType: TypeAlias = Literal["active"]


class ActiveThreadStatus(TypedDict):
    activeFlags: list[ThreadActiveFlag]
    type: ActiveThreadStatusType


ThreadStatus: TypeAlias = (
    NotLoadedThreadStatus | IdleThreadStatus | SystemErrorThreadStatus | ActiveThreadStatus
)


TrustedContacts: TypeAlias = Literal["check", "skip"]


class TurnEnvironmentParams(TypedDict):
    cwd: LegacyAppPathString
    environmentId: str
    runtimeWorkspaceRoots: NotRequired[list[LegacyAppPathString] | None]


TurnItemsView: TypeAlias = Literal["notLoaded"] | Literal["summary"] | Literal["full"]


TurnStatus: TypeAlias = Literal["completed", "interrupted", "failed", "inProgress"]


TextUserInputType: TypeAlias = Literal["text"]


class TextUserInput(TypedDict):
    text: str
    text_elements: NotRequired[list[TextElement]]
    type: TextUserInputType


ImageUserInputType: TypeAlias = Literal["image"]


class UrlUserInput(TypedDict):
    detail: NotRequired[ImageDetail | None]
    type: ImageUserInputType
    url: str


class FileIdUserInput(TypedDict):
    detail: NotRequired[ImageDetail | None]
    type: ImageUserInputType
    fileId: str


ImageUserInput: TypeAlias = UrlUserInput | FileIdUserInput


LocalImageUserInputType: TypeAlias = Literal["localImage"]


class LocalImageUserInput(TypedDict):
    detail: NotRequired[ImageDetail | None]
    path: str
    type: LocalImageUserInputType


AudioUserInputType: TypeAlias = Literal["audio"]


class UrlUserInput1(TypedDict):
    type: AudioUserInputType
    url: str


class FileIdUserInput1(TypedDict):
    type: AudioUserInputType
    fileId: str


AudioUserInput: TypeAlias = UrlUserInput1 | FileIdUserInput1


LocalAudioUserInputType: TypeAlias = Literal["localAudio"]


class LocalAudioUserInput(TypedDict):
    path: str
    type: LocalAudioUserInputType


SkillUserInputType: TypeAlias = Literal["skill"]


class SkillUserInput(TypedDict):
    name: str
    path: str
    type: SkillUserInputType


MentionUserInputType: TypeAlias = Literal["mention"]


class MentionUserInput(TypedDict):
    name: str
    path: str
    type: MentionUserInputType


UserInput: TypeAlias = (
    TextUserInput
    | ImageUserInput
    | LocalImageUserInput
    | AudioUserInput
    | LocalAudioUserInput
    | SkillUserInput
    | MentionUserInput
)


SearchWebSearchActionType: TypeAlias = Literal["search"]


class SearchWebSearchAction(TypedDict):
    queries: NotRequired[list[str] | None]
    query: NotRequired[str | None]
    type: SearchWebSearchActionType


OpenPageWebSearchActionType: TypeAlias = Literal["openPage"]


class OpenPageWebSearchAction(TypedDict):
    type: OpenPageWebSearchActionType
    url: NotRequired[str | None]


FindInPageWebSearchActionType: TypeAlias = Literal["findInPage"]


class FindInPageWebSearchAction(TypedDict):
    pattern: NotRequired[str | None]
    type: FindInPageWebSearchActionType
    url: NotRequired[str | None]


OtherWebSearchActionType: TypeAlias = Literal["other"]


class OtherWebSearchAction(TypedDict):
    type: OtherWebSearchActionType


WebSearchAction: TypeAlias = (
    SearchWebSearchAction
    | OpenPageWebSearchAction
    | FindInPageWebSearchAction
    | OtherWebSearchAction
)


class AdditionalContextEntry(TypedDict):
    kind: AdditionalContextKind
    name: NotRequired[str | None]
    value: str


class AgentMessageDisplay2(TypedDict):
    """
    How Chat should present a recovered answer.
    """

    mode: Literal["hide"]
    replacement: AnswerReplacement
    version: Literal[1]


class AgentMessageDisplay3(TypedDict):
    """
    How Chat should present a recovered answer.
    """

    mode: Literal["block"]
    reason: BlockReason
    version: Literal[1]


class AnswerAnnotation1(TypedDict):
    kind: Literal["wellbeingHelpline"]
    subject: HelplineSubject


AnswerAnnotation: TypeAlias = AnswerAnnotation1


class ActiveTurnNotSteerable(TypedDict):
    turnKind: NonSteerableTurnKind


class ActiveTurnNotSteerableCodexErrorInfo(TypedDict):
    """
    Returned when `turn/start` or `turn/steer` is submitted while the current active turn cannot accept same-turn steering, for example `/review` or manual `/compact`.
    """

    activeTurnNotSteerable: ActiveTurnNotSteerable


CodexErrorInfo: TypeAlias = (
    Literal[
        "contextWindowExceeded",
        "sessionBudgetExceeded",
        "usageLimitExceeded",
        "rateLimitExceeded",
        "flexUnavailable",
        "serverOverloaded",
        "modelNotFound",
        "policyCapacityUnavailable",
        "cyberPolicy",
        "bioPolicy",
        "misalignmentPolicyViolation",
        "tooManyDenials",
        "internalServerError",
        "unauthorized",
        "badRequest",
        "threadRollbackFailed",
        "sandboxError",
        "other",
    ]
    | Literal["inferenceHookDenied"]
    | HttpConnectionFailedCodexErrorInfo
    | ResponseStreamConnectionFailedCodexErrorInfo
    | ResponseStreamDisconnectedCodexErrorInfo
    | ResponseTooManyFailedAttemptsCodexErrorInfo
    | ActiveTurnNotSteerableCodexErrorInfo
    | str
    | dict[str, JsonValue]
)


class CollabAgentState(TypedDict):
    message: NotRequired[str | None]
    status: CollabAgentStatus


class CollaborationMode(TypedDict):
    """
    Collaboration mode for a Codex session.
    """

    mode: ModeKind
    settings: Settings


class ReadCommandAction(TypedDict):
    command: str
    name: str
    path: LegacyAppPathString
    type: ReadCommandActionType


CommandAction: TypeAlias = (
    ReadCommandAction | ListFilesCommandAction | SearchCommandAction | UnknownCommandAction
)


class PathFileSystemPath(TypedDict):
    path: LegacyAppPathString
    type: PathFileSystemPathType


class KindFileSystemSpecialPath(TypedDict):
    kind: Literal["project_roots"]
    subpath: NotRequired[LegacyAppPathString | None]


class FileSystemSpecialPath1(TypedDict):
    kind: Literal["unknown"]
    path: str
    subpath: NotRequired[LegacyAppPathString | None]


FileSystemSpecialPath: TypeAlias = (
    RootFileSystemSpecialPath
    | MinimalFileSystemSpecialPath
    | KindFileSystemSpecialPath
    | TmpdirFileSystemSpecialPath
    | SlashTmpFileSystemSpecialPath
    | FileSystemSpecialPath1
)


class FileUpdateChange(TypedDict):
    diff: str
    kind: PatchChangeKind
    path: str


class ImageUrlFunctionCallOutputContentItem(TypedDict):
    """
    Responses API compatible content items that can be returned by a tool call. This is a subset of ContentItem with the types we support as function call outputs.
    """

    detail: NotRequired[ImageDetail | None]
    type: InputImageFunctionCallOutputContentItemType
    image_url: str


class FileIdFunctionCallOutputContentItem(TypedDict):
    """
    Responses API compatible content items that can be returned by a tool call. This is a subset of ContentItem with the types we support as function call outputs.
    """

    detail: NotRequired[ImageDetail | None]
    type: InputImageFunctionCallOutputContentItemType
    file_id: str


InputImageFunctionCallOutputContentItem: TypeAlias = (
    ImageUrlFunctionCallOutputContentItem | FileIdFunctionCallOutputContentItem
)


FunctionCallOutputContentItem: TypeAlias = (
    InputTextFunctionCallOutputContentItem
    | InputImageFunctionCallOutputContentItem
    | InputAudioFunctionCallOutputContentItem
    | EncryptedContentFunctionCallOutputContentItem
)


class MemoryCitation(TypedDict):
    entries: list[MemoryCitationEntry]
    threadIds: list[str]


class MisalignmentErrorDetails(TypedDict):
    detailedExplanation: NotRequired[str | None]
    errorType: NotRequired[str | None]
    reviewTarget: NotRequired[str | None]
    steer: NotRequired[MisalignmentSteer | None]


class NetworkApprovalContext(TypedDict):
    host: str
    protocol: NetworkApprovalProtocol


class NetworkPolicyAmendment(TypedDict):
    action: NetworkPolicyRuleAction
    host: str


class ThreadSpawn(TypedDict):
    agent_nickname: NotRequired[str | None]
    agent_path: NotRequired[AgentPath | None]
    agent_role: NotRequired[str | None]
    depth: int
    parent_thread_id: ThreadId


class ThreadSpawnSubAgentSource(TypedDict):
    thread_spawn: ThreadSpawn


SubAgentSource: TypeAlias = (
    Literal["review", "compact", "memory_consolidation"]
    | ThreadSpawnSubAgentSource
    | OtherSubAgentSource
)


class UserMessageThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    clientId: NotRequired[str | None]
    content: list[UserInput]
    id: str
    type: UserMessageThreadItemType


class CommandExecutionThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    aggregatedOutput: NotRequired[str | None]
    command: str
    commandActions: list[CommandAction]
    cwd: LegacyAppPathString
    durationMs: NotRequired[int | None]
    exitCode: NotRequired[int | None]
    id: str
    pluginId: NotRequired[str | None]
    processId: NotRequired[str | None]
    scriptPath: NotRequired[str | None]
    source: NotRequired[CommandExecutionSource]
    status: CommandExecutionStatus
    type: CommandExecutionThreadItemType


class FileChangeThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    changes: list[FileUpdateChange]
    id: str
    status: PatchApplyStatus
    type: FileChangeThreadItemType


class CollabAgentToolCallThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    agentsStates: dict[str, CollabAgentState]
    id: str
    model: NotRequired[str | None]
    prompt: NotRequired[str | None]
    reasoningEffort: NotRequired[ReasoningEffort | None]
    receiverThreadIds: list[str]
    senderThreadId: str
    status: CollabAgentToolCallStatus
    tool: CollabAgentTool
    type: CollabAgentToolCallThreadItemType


class WebSearchThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    action: NotRequired[WebSearchAction | None]
    id: str
    query: str
    results: NotRequired[list[JsonValue] | None]
    type: WebSearchThreadItemType


class ThreadSection(TypedDict):
    """
    An independently persisted, user-visible thread section.
    """

    appearance: NotRequired[ThreadSectionAppearance | None]
    id: str
    name: str


class TurnError(TypedDict):
    additionalDetails: NotRequired[str | None]
    codexErrorInfo: NotRequired[CodexErrorInfo | None]
    message: str
    misalignment: NotRequired[MisalignmentErrorDetails | None]


class AgentMessageDisplay1(TypedDict):
    """
    How Chat should present a recovered answer.
    """

    annotation: NotRequired[AnswerAnnotation | None]
    mode: Literal["show"]
    trustedContacts: TrustedContacts
    version: Literal[1]


AgentMessageDisplay: TypeAlias = AgentMessageDisplay1 | AgentMessageDisplay2 | AgentMessageDisplay3


class AgentMessageModeration(TypedDict):
    display: NotRequired[AgentMessageDisplay | None]
    moderated: bool


class ApplyNetworkPolicyAmendment(TypedDict):
    network_policy_amendment: NetworkPolicyAmendment


class ApplyNetworkPolicyAmendmentCommandExecutionApprovalDecision(TypedDict):
    """
    User chose a persistent network policy rule (allow/deny) for this host.
    """

    applyNetworkPolicyAmendment: ApplyNetworkPolicyAmendment


CommandExecutionApprovalDecision: TypeAlias = (
    Literal["accept"]
    | Literal["acceptForSession"]
    | AcceptWithExecpolicyAmendmentCommandExecutionApprovalDecision
    | ApplyNetworkPolicyAmendmentCommandExecutionApprovalDecision
    | Literal["decline"]
    | Literal["cancel"]
)


class SpecialFileSystemPath(TypedDict):
    type: SpecialFileSystemPathType
    value: FileSystemSpecialPath


FileSystemPath: TypeAlias = PathFileSystemPath | GlobPatternFileSystemPath | SpecialFileSystemPath


class FileSystemSandboxEntry(TypedDict):
    access: FileSystemAccessMode
    path: FileSystemPath


FunctionCallOutputBody: TypeAlias = str | list[FunctionCallOutputContentItem]


class SubAgentSessionSource(TypedDict):
    subAgent: SubAgentSource


SessionSource: TypeAlias = (
    Literal["cli", "vscode", "exec", "appServer", "unknown"]
    | CustomSessionSource
    | SubAgentSessionSource
)


class AgentMessageThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    delivery: NotRequired[AgentMessageDelivery | None]
    id: str
    memoryCitation: NotRequired[MemoryCitation | None]
    moderation: NotRequired[AgentMessageModeration | None]
    phase: NotRequired[MessagePhase | None]
    questions: NotRequired[list[AsyncUserInputQuestion] | None]
    text: str
    type: AgentMessageThreadItemType


class FunctionCallOutputThreadItem(TypedDict):
    """
    A thread item and its recorded lifecycle times. The payload stays flat on the wire.
    """

    completedAtMs: NotRequired[int | None]
    startedAtMs: NotRequired[int | None]
    id: str
    name: str
    namespace: NotRequired[str | None]
    output: FunctionCallOutputBody
    type: FunctionCallOutputThreadItemType


ThreadItem: TypeAlias = (
    UserMessageThreadItem
    | HookPromptThreadItem
    | AgentMessageThreadItem
    | FunctionCallOutputThreadItem
    | PlanThreadItem
    | ReasoningThreadItem
    | CommandExecutionThreadItem
    | FileChangeThreadItem
    | McpToolCallThreadItem
    | DynamicToolCallThreadItem
    | CollabAgentToolCallThreadItem
    | SubAgentActivityThreadItem
    | WebSearchThreadItem
    | ImageViewThreadItem
    | SleepThreadItem
    | ImageGenerationThreadItem
    | EnteredReviewModeThreadItem
    | ExitedReviewModeThreadItem
    | ContextCompactionThreadItem
)


class Turn(TypedDict):
    completedAt: NotRequired[int | None]
    durationMs: NotRequired[int | None]
    error: NotRequired[TurnError | None]
    id: str
    items: list[ThreadItem]
    itemsView: NotRequired[TurnItemsView]
    rootTurnId: NotRequired[str | None]
    startedAt: NotRequired[int | None]
    status: TurnStatus


class TurnToolOutput(TypedDict):
    name: str
    namespace: NotRequired[str | None]
    output: FunctionCallOutputBody
    retain: NotRequired[bool]


class AdditionalFileSystemPermissions(TypedDict):
    entries: NotRequired[list[FileSystemSandboxEntry] | None]
    globScanMaxDepth: NotRequired[int | None]
    read: NotRequired[list[LegacyAppPathString] | None]
    write: NotRequired[list[LegacyAppPathString] | None]


class AdditionalPermissionProfile(TypedDict):
    fileSystem: NotRequired[AdditionalFileSystemPermissions | None]
    network: NotRequired[AdditionalNetworkPermissions | None]


class CommandExecutionRequestApprovalParams(TypedDict):
    additionalPermissions: NotRequired[AdditionalPermissionProfile | None]
    approvalId: NotRequired[str | None]
    availableDecisions: NotRequired[list[CommandExecutionApprovalDecision] | None]
    command: NotRequired[str | None]
    commandActions: NotRequired[list[CommandAction] | None]
    cwd: NotRequired[LegacyAppPathString | None]
    environmentId: NotRequired[str | None]
    itemId: str
    kind: NotRequired[CommandExecutionApprovalKind]
    networkApprovalContext: NotRequired[NetworkApprovalContext | None]
    proposedExecpolicyAmendment: NotRequired[list[str] | None]
    proposedNetworkPolicyAmendments: NotRequired[list[NetworkPolicyAmendment] | None]
    reason: NotRequired[str | None]
    startedAtMs: int
    threadId: str
    turnId: str


class Thread(TypedDict):
    agentNickname: NotRequired[str | None]
    agentRole: NotRequired[str | None]
    attachedToThreadId: NotRequired[str | None]
    canAcceptDirectInput: NotRequired[bool | None]
    cliVersion: str
    createdAt: int
    cwd: AbsolutePathBuf
    daybreakEnabled: NotRequired[bool | None]
    environments: NotRequired[list[ThreadEnvironment] | None]
    ephemeral: bool
    extra: NotRequired[ThreadExtra | None]
    forkedFromId: NotRequired[str | None]
    gitInfo: NotRequired[GitInfo | None]
    historyMode: NotRequired[ThreadHistoryMode]
    id: str
    model: NotRequired[str | None]
    modelProvider: str
    name: NotRequired[str | None]
    originator: NotRequired[str | None]
    parentThreadId: NotRequired[str | None]
    path: NotRequired[str | None]
    preview: str
    projectId: str | None
    reasoningEffort: NotRequired[ReasoningEffort | None]
    recencyAt: NotRequired[int | None]
    section: NotRequired[ThreadSection | None]
    sectionEnteredAt: NotRequired[int | None]
    sessionId: str
    source: SessionSource
    status: ThreadStatus
    threadSource: NotRequired[ThreadSource | None]
    turns: list[Turn]
    updatedAt: int


class TurnStartParams(TypedDict):
    additionalContext: NotRequired[dict[str, JsonValue] | None]
    approvalPolicy: NotRequired[AskForApproval | None]
    approvalsReviewer: NotRequired[ApprovalsReviewer | None]
    clientUserMessageId: NotRequired[str | None]
    collaborationMode: NotRequired[CollaborationMode | None]
    cwd: NotRequired[str | None]
    cyberAccessProgram: NotRequired[CyberAccessProgram | None]
    disabledPluginIds: NotRequired[list[str] | None]
    effort: NotRequired[ReasoningEffort | None]
    environments: NotRequired[list[TurnEnvironmentParams] | None]
    input: list[UserInput]
    model: NotRequired[str | None]
    multiAgentMode: NotRequired[MultiAgentMode | None]
    outputSchema: NotRequired[JsonValue]
    parentTurnId: NotRequired[str | None]
    permissions: NotRequired[str | None]
    personality: NotRequired[Personality | None]
    responsesapiClientMetadata: NotRequired[dict[str, JsonValue] | None]
    responsesapiClientMetadataPatch: NotRequired[dict[str, JsonValue] | None]
    rootTurnId: NotRequired[str | None]
    runtimeWorkspaceRoots: NotRequired[list[AbsolutePathBuf] | None]
    sandboxPolicy: NotRequired[SandboxPolicy | None]
    serviceTier: NotRequired[str | None]
    serviceTierForTurn: NotRequired[str | None]
    summary: NotRequired[ReasoningSummary | None]
    threadId: str
    toolOutput: NotRequired[TurnToolOutput | None]
    turnTrigger: NotRequired[str | None]


CodexWire: TypeAlias = (
    Thread
    | Turn
    | ThreadItem
    | ThreadStatus
    | TurnError
    | TurnStatus
    | UserInput
    | FileUpdateChange
    | CommandExecutionRequestApprovalParams
    | FileChangeRequestApprovalParams
    | ReasoningEffort
    | AskForApproval
    | SandboxPolicy
    | CollaborationMode
    | TurnStartParams
    | ThreadSourceKind
)
