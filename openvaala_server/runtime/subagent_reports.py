"""What a subagent tells its parent: the report of a finished turn and the brief of each item
`inspect_agent` shows (runtime/subagents.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server.domain import records as r

if TYPE_CHECKING:
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.collab import ItemBrief

ANSWER_LIMIT = 20_000  # characters of a subagent's answer carried in a report
ITEM_TEXT_LIMIT = 500  # characters of each item shown by inspect_agent


def last_answer(session: LiveSession) -> str | None:
    """The last agent message of the session's last finished turn (None: it gave none)."""
    running = session.turn.turn_id if session.turn is not None else None
    finished_turn: str | None = None
    for item in reversed(session.items):
        turn_id = item.get("turnId")
        if turn_id is None or turn_id == running:
            continue
        if finished_turn is None:
            finished_turn = turn_id
        elif turn_id != finished_turn:
            return None
        if item.get("type") == r.AGENT_MESSAGE and item.get("text"):
            return str(item["text"])
    return None


def report_text(
    session: LiveSession, status: str, error: r.ErrorInfo | None, answer: str | None
) -> str:
    head = (
        f"[Report from subagent {session.session_id} (agent {session.agent!r}, "
        f"task {session.title!r})] Its turn ended: {status}."
    )
    lines = [head]
    if error:
        lines.append(f"Error ({error.get('kind', 'error')}): {error.get('message', '')}")
    if answer:
        lines.append("Its answer:\n" + cut(answer, ANSWER_LIMIT))
    else:
        lines.append("It gave no answer in that turn.")
    return "\n".join(lines)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def brief(item: r.Item) -> ItemBrief:
    brief: ItemBrief = {"type": str(item.get("type")), "status": str(item.get("status"))}
    kind = item.get("type")
    if kind == r.TOOL_CALL:
        brief["name"] = item.get("name")
        brief["arguments"] = cut(str(item.get("argumentsText") or item.get("arguments")), 200)
    elif kind == r.TOOL_RESULT:
        brief["name"] = item.get("name")
        brief["output"] = cut(str(item.get("output", "")), ITEM_TEXT_LIMIT)
        if item.get("isError"):
            brief["isError"] = True
    elif "text" in item:
        brief["text"] = cut(str(item.get("text", "")), ITEM_TEXT_LIMIT)
    if item.get("origin") == "subagent":
        brief["fromSessionId"] = item.get("fromSessionId")
    return brief
