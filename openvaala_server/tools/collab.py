"""The collaboration tools: `spawn_agent` and the tools a parent uses with its subagents.

Each tool is bound to the conversation and the session that uses it (the runtime builds them for
every request through `SubagentService.tools_for`); the work itself is done by a `Subagents`
service, the narrow interface declared here, bound to the caller and implemented in
`runtime/subagents.py` (so the tools never import the runtime, docs/design.md "Untangled runtime").
Results are JSON objects the model reads; a misuse or a limit is an error
result (`is_error`) with a message saying what to do instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict

from openvaala_server.domain import tool_names
from openvaala_server.domain.usage import Usage
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonObject, JsonValue
from openvaala_server.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from openvaala_server.config import AgentConfig, SubagentConfig
    from openvaala_server.tools.base import Tool

SPAWN_TOOL = tool_names.SPAWN_AGENT
COLLAB_TOOL_NAMES: tuple[str, ...] = tool_names.COLLAB
INSPECT_ITEMS = 10
INSPECT_ITEMS_MAX = 100

History = Literal["none", "all"] | int


class SubagentError(Exception):
    """A collaboration tool was used wrongly or hit a limit: its message goes to the model."""


class AgentState(TypedDict):
    """A subagent as the tools report it to the model."""

    agent_id: str
    parent_id: str | None
    agent: str
    model: str
    title: str
    status: str
    depth: int
    last_answer: NotRequired[str]


class Interrupted(AgentState):
    interrupted: bool


class ItemBrief(TypedDict):
    type: str
    status: str
    name: NotRequired[str | None]
    arguments: NotRequired[str]
    output: NotRequired[str]
    isError: NotRequired[bool]
    text: NotRequired[str]
    fromSessionId: NotRequired[str | None]


class Inspection(AgentState):
    recent_items: list[ItemBrief]
    item_count: int
    usage: Usage  # domain/usage.UsageTracker.to_wire
    waiting_inputs: int
    subagents: list[str]


class Delivered(TypedDict):
    agent_id: str
    disposition: str


class Closed(TypedDict):
    agent_id: str
    status: str


@dataclass
class WaitResult:
    timed_out: bool
    waited_s: float
    agents: list[AgentState]


class Spawned(TypedDict):
    agent_id: str
    agent: str
    model: str
    status: str


class Subagents(Protocol):
    """What the collaboration tools need of the runtime, for the session that uses them
    (`runtime/subagents.SubagentService.tools_for` binds the conversation and the caller, so the
    tools never see the runtime's session type).

    Every operation raises `SubagentError` for a misuse or a limit; the tool returns its message
    to the model as an error result."""

    @property
    def limits(self) -> SubagentConfig: ...

    @property
    def agents(self) -> Mapping[str, AgentConfig]: ...

    async def spawn(self, agent_name: str, task: str, history: History = "none") -> Spawned: ...

    async def send_message(self, agent_id: str, text: str, interrupt: bool) -> Delivered: ...

    async def wait(
        self, agent_ids: list[str] | None, timeout_s: float | None, until: str = "all"
    ) -> WaitResult: ...

    async def interrupt(self, agent_id: str) -> Interrupted: ...

    async def close(self, agent_id: str) -> list[Closed]: ...

    def inspect(self, agent_id: str, limit: int) -> Inspection: ...

    def list(self) -> list[AgentState]: ...


_AGENT_ID: JsonObject = {
    "type": "string",
    "description": "The subagent's agent_id, as spawn_agent or list_agents returned it.",
}


class _Bound:
    """A collaboration tool bound to the conversation and session that uses it."""

    name = ""

    def __init__(self, service: Subagents) -> None:
        self.service = service

    @property
    def spec(self) -> ToolSpec:
        description, parameters = self.describe()
        return ToolSpec(self.name, description, parameters)

    def describe(self) -> tuple[str, JsonObject]:
        raise NotImplementedError

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return _ok(await self.call(arguments))
        except (SubagentError, _BadArguments) as exc:
            return ToolResult(str(exc), True)

    async def call(self, arguments: Mapping[str, object]) -> object:
        raise NotImplementedError


class _BadArguments(Exception):
    pass


def _ok(value: object) -> ToolResult:
    return ToolResult(codec.text(value, indent=1))


def _schema(properties: JsonObject, required: list[str]) -> JsonObject:
    return {
        "type": "object",
        "properties": properties,
        "required": list[JsonValue](required),
        "additionalProperties": False,
    }


def _string(arguments: Mapping[str, object], key: str, required: bool = True) -> str | None:
    value = arguments.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise _BadArguments(f'"{key}" must be a non-empty string.')
    return value


def _agent_id(arguments: Mapping[str, object]) -> str:
    value = _string(arguments, "agent_id")
    assert value is not None
    return value


class SpawnAgentTool(_Bound):
    name = SPAWN_TOOL

    def describe(self) -> tuple[str, JsonObject]:
        agents = self.service.agents
        listing = "\n".join(
            f"- {a.name}: {a.description or '(no description)'}" for a in agents.values()
        )
        description = (
            "Start a subagent: a new agent with its own context that works on a task in "
            "parallel with you. It returns the subagent's agent_id at once; keep working. "
            "Every time the subagent finishes a turn, its answer and status arrive as a message "
            "from it; use wait to block until it is done, send_message to give it more "
            "instructions, close_agent when you no longer need it.\n"
            "The subagent starts from the task alone, unless `history` asks for a copy of your "
            "finished conversation so far (not the turn you are in now). It uses its agent's "
            "own model when that agent configures one, else yours.\n"
            f"Available agents:\n{listing}"
        )
        return description, _schema(
            {
                "agent": {
                    "type": "string",
                    "enum": list(agents),
                    "description": "Which configured agent to start (see the list above).",
                },
                "task": {
                    "type": "string",
                    "description": "What the subagent should do, with everything it needs to "
                    "know: it sees nothing else of your conversation unless `history` is set.",
                },
                "history": {
                    "type": "string",
                    "description": 'How much of your finished history it gets: "none" '
                    '(default), "all", or a number N for your last N items.',
                },
            },
            ["agent", "task"],
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        agent = _string(arguments, "agent")
        task = _string(arguments, "task")
        assert agent is not None and task is not None
        return await self.service.spawn(agent, task, _history(arguments.get("history")))


def _history(value: object) -> History:
    if value is None or value == "none":
        return "none"
    if value == "all":
        return "all"
    if isinstance(value, bool):
        raise _BadArguments('"history" must be "none", "all" or a number of items.')
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise _BadArguments('"history" must be "none", "all" or a number of items.')


class SendMessageTool(_Bound):
    name = "send_message"

    def describe(self) -> tuple[str, JsonObject]:
        return (
            "Send a message to one of your subagents. If it is working, the message joins its "
            "current turn; if it is idle, it starts a new turn. With interrupt=true its current "
            "turn is stopped and it handles your message next.",
            _schema(
                {
                    "agent_id": _AGENT_ID,
                    "message": {"type": "string", "description": "What to tell it."},
                    "interrupt": {
                        "type": "boolean",
                        "description": "Stop its current turn first (default false).",
                    },
                },
                ["agent_id", "message"],
            ),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        message = _string(arguments, "message")
        assert message is not None
        interrupt = arguments.get("interrupt", False)
        if not isinstance(interrupt, bool):
            raise _BadArguments('"interrupt" must be true or false.')
        return await self.service.send_message(_agent_id(arguments), message, interrupt)


class WaitTool(_Bound):
    name = "wait"

    def describe(self) -> tuple[str, JsonObject]:
        cap = self.service.limits.wait_timeout_s
        return (
            "Wait until subagents finish their current turn, or until the timeout. Returns "
            "each one's status and latest answer, and whether the wait timed out. Without "
            "agent_ids it waits for all your subagents that are working now. "
            f"The timeout is at most {cap:g} seconds (also the default).",
            _schema(
                {
                    "agent_ids": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The subagents to wait for (default: all working ones).",
                    },
                    "until": {
                        "type": "string",
                        "enum": ["all", "any"],
                        "description": 'Return when "all" (default) or "any" of them finished.',
                    },
                    "timeout_s": {
                        "type": "number",
                        "description": f"Seconds to wait at most (≤ {cap:g}).",
                    },
                },
                [],
            ),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        ids = arguments.get("agent_ids")
        if ids is not None and (
            not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)
        ):
            raise _BadArguments('"agent_ids" must be a list of agent ids.')
        until = arguments.get("until", "all")
        if until not in ("all", "any"):
            raise _BadArguments('"until" must be "all" or "any".')
        timeout = arguments.get("timeout_s")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float)
        ):
            raise _BadArguments('"timeout_s" must be a number of seconds.')
        result = await self.service.wait(ids, timeout, until)
        return {
            "timed_out": result.timed_out,
            "waited_s": result.waited_s,
            "agents": result.agents,
        }


class InterruptAgentTool(_Bound):
    name = "interrupt_agent"

    def describe(self) -> tuple[str, JsonObject]:
        return (
            "Stop the current turn of one of your subagents. What it produced so far is kept; "
            "it stays available for send_message.",
            _schema({"agent_id": _AGENT_ID}, ["agent_id"]),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        return await self.service.interrupt(_agent_id(arguments))


class InspectAgentTool(_Bound):
    name = "inspect_agent"

    def describe(self) -> tuple[str, JsonObject]:
        return (
            "Look at one of your subagents: its status, its most recent items (messages, tool "
            "calls and results, including the turn in progress) and its context usage.",
            _schema(
                {
                    "agent_id": _AGENT_ID,
                    "items": {
                        "type": "integer",
                        "description": f"How many recent items to show (default {INSPECT_ITEMS}).",
                    },
                },
                ["agent_id"],
            ),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        limit = arguments.get("items", INSPECT_ITEMS)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise _BadArguments('"items" must be a whole number.')
        return self.service.inspect(_agent_id(arguments), min(limit, INSPECT_ITEMS_MAX))


class ListAgentsTool(_Bound):
    name = "list_agents"

    def describe(self) -> tuple[str, JsonObject]:
        return (
            "List your subagents (and theirs), with their status.",
            _schema({}, []),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        return {"agents": self.service.list()}


class CloseAgentTool(_Bound):
    name = "close_agent"

    def describe(self) -> tuple[str, JsonObject]:
        return (
            "Close one of your subagents for good, with any subagents it started: a running "
            "turn is stopped, and it takes no more messages.",
            _schema({"agent_id": _AGENT_ID}, ["agent_id"]),
        )

    async def call(self, arguments: Mapping[str, object]) -> object:
        return {"closed": await self.service.close(_agent_id(arguments))}


_TOOL_TYPES: tuple[type[_Bound], ...] = (
    SpawnAgentTool,
    SendMessageTool,
    WaitTool,
    InterruptAgentTool,
    InspectAgentTool,
    ListAgentsTool,
    CloseAgentTool,
)


def collab_tools(service: Subagents) -> dict[str, Tool]:
    return {t.name: t(service) for t in _TOOL_TYPES}
