"""`search_history`: the model searches its conversation's whole history on disk.

Compaction takes older items out of what the model sees, never off the disk (docs/storage.md);
this tool finds them again through the full-text index (store/index.py) and answers with the
matching messages, their position in the history and whether the model still sees them. Offered
to the root agent of a conversation (subagents have only their own short history); on by default.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from openvaala_server.domain import tool_names
from openvaala_server.domain.permissions import Access
from openvaala_server.domain.records import Item, item_text
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
        "Search this conversation's whole history, including older messages that a summary "
        "replaced in your context. Returns the matching messages (every word must match, as a "
        "prefix) with their position in the history, best match first."
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


# What the runtime gives the tool: the matching texts of the index, the history in order, and
# the ids of the items the model sees now.
SearchTexts = Callable[[str, int], Awaitable[list[str]]]
History = Callable[[], Awaitable[tuple[list[Item], set[str]]]]


def match_items(
    texts: Sequence[str], history: Sequence[Item], in_context: set[str], limit: int
) -> list[Found]:
    """The history's messages whose text is one of `texts`, in the order of `texts`."""
    by_text: dict[str, list[int]] = {}
    for index, item in enumerate(history):
        text = item_text(item)
        if text:
            by_text.setdefault(text, []).append(index)
    found: list[Found] = []
    for text in texts:
        for index in by_text.get(text, ()):
            item = history[index]
            found.append(Found(item, index + 1, len(history), item["itemId"] in in_context))
            if len(found) >= limit:
                return found
    return found


def render(query: str, found: Sequence[Found]) -> str:
    if not found:
        return f"No message of this conversation matches {query!r}."
    blocks = []
    for f in found:
        item = f.item
        who = "user" if item.get("type") == "user_message" else "assistant"
        where = "in your context" if f.in_context else "not in your context (summarized)"
        text = item_text(item)
        if len(text) > EXCERPT_CHARS:
            text = text[:EXCERPT_CHARS] + f" [… {len(text) - EXCERPT_CHARS} more characters]"
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
        history, in_context = await self._history()
        return ToolResult(render(query, match_items(texts, history, in_context, limit)))
