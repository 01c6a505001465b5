"""Context usage arithmetic: what the user sees as "how full is the context".

used = the input+output tokens the provider reported for the last request + an estimate of every
item added since (about four characters per token plus a per-message overhead). With no report
yet, the whole request is estimated — the system prompt and the tool schemas included, as every
request carries them (`domain/context.py`, `estimate_request`). Pure: the runtime feeds it items
and reports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NotRequired, Protocol, TypedDict

from openvaala_server.domain.records import Item

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
# An image costs what its pixels cost, which we do not measure: Anthropic's largest images are
# about 1,600 tokens and OpenAI's 1024×1024 high-detail one ~765, so this errs on the full side.
IMAGE_TOKENS = 1_600


def estimate_text(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_item(item: Item) -> int:
    parts: list[str] = []
    for key in ("text", "output", "argumentsText"):
        value = item.get(key)
        if isinstance(value, str):
            parts.append(value)
    if item.get("type") == "tool_call" and not item.get("argumentsText"):
        parts.append(str(item.get("arguments") or ""))
        parts.append(str(item.get("name") or ""))
    images = item.get("images")
    pictures = IMAGE_TOKENS * len(images) if isinstance(images, list) else 0
    return MESSAGE_OVERHEAD_TOKENS + pictures + sum(estimate_text(p) for p in parts)


# Estimates of finished items by id: a finished item never changes (docs/storage.md: records are
# never rewritten), so the trace of a long session costs a lookup per item, not a recount.
_ESTIMATES: dict[str, int] = {}
_ESTIMATES_MAX = 500_000


def estimate_finished(item: Item) -> int:
    """`estimate_item`, remembered for finished items (by `itemId`)."""
    key = item.get("itemId")
    if not isinstance(key, str) or item.get("status") == "in_progress":
        return estimate_item(item)
    tokens = _ESTIMATES.get(key)
    if tokens is None:
        if len(_ESTIMATES) >= _ESTIMATES_MAX:
            _ESTIMATES.clear()
        tokens = _ESTIMATES[key] = estimate_item(item)
    return tokens


def forget_estimates(items: list[Item]) -> None:
    """Drop the remembered estimates of `items` (a history let go of memory: its ids would
    otherwise stay alive here, and with them the allocator's pages they sit on)."""
    pop = _ESTIMATES.pop
    for item in items:
        key = item.get("itemId")
        if isinstance(key, str):
            pop(key, None)


class ToolSchema(Protocol):
    """What a request says about one tool (`models.base.ToolSpec` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> Mapping[str, object]: ...


# Tool schemas' estimates by name and description, with the schema they were made from: every
# session's usage estimate counts every tool, and writing each schema out again was most of the
# estimates an open of hundreds of subagents makes (docs/design.md, "Subagent sessions paged on
# demand"). Comparing a schema with the one kept costs a fraction of writing it out.
_TOOL_ESTIMATES: dict[tuple[str, str], tuple[Mapping[str, object], int]] = {}
_TOOL_ESTIMATES_SIZE = 1_024


def estimate_tool(tool: ToolSchema) -> int:
    """A tool's schema as every request sends it: name, description, JSON schema."""
    key, parameters = (tool.name, tool.description), tool.parameters
    known = _TOOL_ESTIMATES.get(key)
    if known is not None and (known[0] is parameters or known[0] == parameters):
        return known[1]
    schema = json.dumps(parameters, ensure_ascii=False, separators=(",", ":"), default=str)
    tokens = (
        MESSAGE_OVERHEAD_TOKENS
        + estimate_text(tool.name)
        + estimate_text(tool.description)
        + estimate_text(schema)
    )
    if len(_TOOL_ESTIMATES) >= _TOOL_ESTIMATES_SIZE:
        _TOOL_ESTIMATES.clear()  # many MCP servers' tools come and go: start over
    _TOOL_ESTIMATES[key] = (parameters, tokens)
    return tokens


def threshold(context_window: int, max_output_tokens: int, fraction: float | None = None) -> int:
    """Compaction triggers at min(80% of the window, window − max output); an agent's
    `compact_threshold` (`fraction`) moves it to that fraction of the usable window (window −
    max output), and 0 turns automatic compaction off (docs/configuration.md)."""
    if fraction is None:
        return min(context_window * 8 // 10, context_window - max_output_tokens)
    return int(fraction * max(0, context_window - max_output_tokens))


def early_start(early: int, limit: int, floor: int) -> int:
    """The usage from which a summary is prepared early: `early` (the agent's
    `early_compaction` in tokens) is a share of the way to the threshold `limit`, counted from
    `floor`, what the latest compaction left in the context (0 before the first). A compaction
    keeps the most recent 20% of the window and adds its summary, which can leave more than
    `early`: counted from zero, every idle moment after it would cost a summary call
    (docs/design.md, "When early compaction stops")."""
    if limit <= 0 or floor <= 0:
        return early
    if floor >= limit:
        return limit  # nothing a compaction can win early: the threshold compacts as usual
    return floor + (limit - floor) * early // limit


class CompactionCost(TypedDict):
    calls: int
    inputTokens: int
    outputTokens: int


class EarlyCompaction(TypedDict):
    threshold: int
    state: Literal["idle", "preparing", "ready"]


class Usage(TypedDict):
    """A session's usage on the wire (docs/protocol.md "Usage"); the last four fields are added by
    the runtime from the agent's configuration (runtime/context_view.py)."""

    used: int
    contextWindow: int
    threshold: int
    maxOutputTokens: int
    source: Literal["reported", "estimated"]
    autoCompact: bool
    compaction: CompactionCost
    reportedAt: NotRequired[str]
    earlyCompaction: NotRequired[EarlyCompaction]
    refreshEvery: NotRequired[int]
    repliesUntilRefresh: NotRequired[int]


@dataclass
class UsageTracker:
    """Per session. `report` after each model call; `add` for each item added to the context."""

    context_window: int
    max_output_tokens: int
    reported: int | None = None
    reported_at: str | None = None
    estimated_since: int = 0
    # The agent's `compact_threshold` (None: the spec's default threshold; 0: no automatic
    # compaction), set by the runtime from the agent's configuration.
    compact_fraction: float | None = None
    # What compaction calls cost so far (early, background ones included).
    compaction_calls: int = 0
    compaction_input_tokens: int = 0
    compaction_output_tokens: int = 0

    @property
    def threshold(self) -> int:
        return threshold(self.context_window, self.max_output_tokens, self.compact_fraction)

    def add_compaction_cost(self, input_tokens: int, output_tokens: int) -> None:
        self.compaction_calls += 1
        self.compaction_input_tokens += input_tokens
        self.compaction_output_tokens += output_tokens

    def report(self, input_tokens: int, output_tokens: int, at: str) -> None:
        self.reported = input_tokens + output_tokens
        self.reported_at = at
        self.estimated_since = 0

    def add(self, item: Item) -> None:
        self.estimated_since += estimate_item(item)

    def reset_estimate(self, base_tokens: int) -> None:
        """Forget any report: the whole context is `base_tokens` (e.g. after compaction)."""
        self.reported = None
        self.reported_at = None
        self.estimated_since = base_tokens

    @property
    def used(self) -> int:
        return (self.reported or 0) + self.estimated_since

    def to_wire(self) -> Usage:
        wire: Usage = {
            "used": self.used,
            "contextWindow": self.context_window,
            "threshold": self.threshold,
            "autoCompact": self.compact_fraction != 0,
            "maxOutputTokens": self.max_output_tokens,
            "source": "reported" if self.reported is not None else "estimated",
            "compaction": {
                "calls": self.compaction_calls,
                "inputTokens": self.compaction_input_tokens,
                "outputTokens": self.compaction_output_tokens,
            },
        }
        if self.reported_at:
            wire["reportedAt"] = self.reported_at
        return wire
