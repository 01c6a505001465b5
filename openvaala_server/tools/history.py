"""`search_history`: the model searches its conversation's whole history on disk.

Compaction takes older items out of what the model sees, never off the disk (docs/storage.md);
this tool finds them again through the full-text index (store/index.py) and answers with the
matching messages and tool outputs (what the index keeps of them: domain/recall.py), their
position in the history and whether the model still sees them. The turn that asks is left out
while the model sees it: its own message always matches its words. Offered to the root agent of a
conversation (subagents have only their own short history); on by default.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from openvaala_server.domain import recall, tool_names
from openvaala_server.domain.permissions import Access
from openvaala_server.domain.records import Item
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools.base import ToolContext, ToolResult

SEARCH_HISTORY = tool_names.SEARCH_HISTORY
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
EXCERPT_CHARS = 2000

SPEC = ToolSpec(
    name=SEARCH_HISTORY,
    description=(
        "Search this conversation's whole history, including older messages and tool outputs "
        "that a summary replaced in your context. Returns the matching messages and tool "
        "outputs (every word must match, as a prefix) with their position in the history, best "
        "match first."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {
                "type": "integer",
                "description": f"At most this many messages (default {DEFAULT_LIMIT}, up to "
                f"{MAX_LIMIT}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)


class _Agent(Protocol):
    @property
    def tools(self) -> tuple[str, ...]: ...


def offers_search(agent: _Agent) -> bool:
    return SEARCH_HISTORY in agent.tools


@dataclass(frozen=True)
class Found:
    """One match: the item, its 1-based position in the history, and whether it is in context."""

    item: Item
    position: int
    total: int
    in_context: bool


@dataclass(frozen=True)
class HistoryView:
    """The history in order, the ids of the items the model sees now, and those never returned
    (the asking turn's items the model sees: the query's own message)."""

    items: list[Item]
    in_context: set[str]
    asking: set[str]


# What the runtime gives the tool: the matching texts of the index, and the history.
SearchTexts = Callable[[str, int], Awaitable[list[str]]]
History = Callable[[], Awaitable[HistoryView]]


def _text(item: Item) -> str:
    found = recall.searchable(item)
    return found[1] if found else ""


def match_items(texts: Sequence[str], view: HistoryView, limit: int) -> list[Found]:
    """The history's messages and tool results whose indexed text is one of `texts`, in the
    order of `texts`, without the asking turn's."""
    history = view.items
    by_text: dict[str, list[int]] = {}
    for index, item in enumerate(history):
        text = _text(item)
        if text and item["itemId"] not in view.asking:
            by_text.setdefault(text, []).append(index)
    found: list[Found] = []
    for text in dict.fromkeys(texts):
        for index in by_text.get(text, ()):
            item = history[index]
            found.append(Found(item, index + 1, len(history), item["itemId"] in view.in_context))
            if len(found) >= limit:
                return found
    return found


def excerpt(text: str, query: str) -> str:
    """At most `EXCERPT_CHARS` of `text`: from the start, or around the first word of the query
    found past that (a tool's output may hold it near its end)."""
    if len(text) <= EXCERPT_CHARS:
        return text
    lowered = text.lower()
    hits = [at for word in query.lower().split() if (at := lowered.find(word)) >= 0]
    at = min(hits) if hits else 0
    start = (
        0
        if at < EXCERPT_CHARS * 3 // 4
        else min(at - EXCERPT_CHARS // 4, len(text) - EXCERPT_CHARS)
    )
    end = start + EXCERPT_CHARS
    before = f"[… {start} characters] " if start else ""
    after = f" [… {len(text) - end} more characters]" if end < len(text) else ""
    return before + text[start:end] + after


def _who(item: Item) -> str:
    kind = item.get("type")
    if kind == "user_message":
        return "user"
    if kind == "tool_result":
        return f"output of {item.get('name', 'a tool')}"
    return "assistant"


def render(query: str, found: Sequence[Found]) -> str:
    if not found:
        return f"No message or tool output of this conversation matches {query!r}."
    blocks = []
    for f in found:
        item = f.item
        who = _who(item)
        where = "in your context" if f.in_context else "not in your context (summarized)"
        text = excerpt(_text(item), query)
        blocks.append(
            f"[item {f.position} of {f.total}, {who}, {item.get('createdAt', '')}, {where}, "
            f"id {item['itemId']}]\n{text}"
        )
    return "\n\n".join(blocks)


class SearchHistoryTool:
    def __init__(self, search: SearchTexts, history: History) -> None:
        self._search = search
        self._history = history

    @property
    def spec(self) -> ToolSpec:
        return SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        # Reads only this conversation's own journal: nothing the sandbox guards.
        return Access(summary=f"search history: {arguments.get('query', '')}")

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult('"query" must be a non-empty string of words to look for.', True)
        limit = arguments.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            return ToolResult(f'"limit" must be a whole number from 1 to {MAX_LIMIT}.', True)
        texts = await self._search(query, limit * 4)
        view = await self._history()
        return ToolResult(render(query, match_items(texts, view, limit)))
