"""The usage report a status line shows: used / window, reported or estimated."""

from __future__ import annotations

from typing import Any

from openvaala_server.protocol.display import format_tokens as tokens


def report(conversation_id: str, session_id: str, usage: dict[str, Any]) -> dict[str, Any]:
    """`Usage` from the daemon, plus what a status line needs: `percent` and a short `text`."""
    used = int(usage.get("used") or 0)
    window = int(usage.get("contextWindow") or 0)
    source = str(usage.get("source") or "estimated")
    percent = round(100 * used / window) if window else 0
    out: dict[str, Any] = {
        "conversationId": conversation_id,
        "sessionId": session_id,
        "used": used,
        "contextWindow": window,
        "threshold": usage.get("threshold"),
        "maxOutputTokens": usage.get("maxOutputTokens"),
        "source": source,
        "percent": percent,
        "text": f"{tokens(used)}/{tokens(window)} ({percent}%, {source})",
    }
    if usage.get("reportedAt"):
        out["reportedAt"] = usage["reportedAt"]
    return out
