"""What `search_history` can find of an item: the text the index keeps for it, one definition for
the index (store/index.py) and the tool that maps matched texts back to items (tools/history.py).

Messages are kept whole. A tool result's output is kept too, bounded per item — its first and last
`OUTPUT_EDGE` characters — because what a compaction removes is mostly tool output (a port a
server printed, a test's failure), and the start and end of an output are where those facts sit
(docs/design.md, "What search_history finds").
"""

from __future__ import annotations

from typing import Final

from openvaala_server.domain import records as r

MESSAGE: Final = "message"
TOOL_OUTPUT: Final = "tool_output"
OUTPUT_EDGE: Final = 2000  # characters kept from each end of a tool's output
_CUT: Final = "\n…\n"


def bounded_output(output: str) -> str:
    """A tool's output as the index keeps it: whole up to twice `OUTPUT_EDGE`, else both ends."""
    if len(output) <= 2 * OUTPUT_EDGE:
        return output
    return output[:OUTPUT_EDGE] + _CUT + output[-OUTPUT_EDGE:]


def searchable(item: r.Item) -> tuple[str, str] | None:
    """(kind, text) of what the index keeps of an item, None for nothing (or no text)."""
    kind = item.get("type")
    if kind in (r.USER_MESSAGE, r.AGENT_MESSAGE):
        text = item.get("text")
        return (MESSAGE, text) if isinstance(text, str) and text else None
    if kind == r.TOOL_RESULT:
        output = item.get("output")
        return (TOOL_OUTPUT, bounded_output(output)) if isinstance(output, str) and output else None
    return None
