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
    # The gauge's two triggers (docs/protocol.md "Context"): the threshold, a refresh countdown.
    threshold = int(usage.get("threshold") or 0)
    if usage.get("autoCompact") is False:
        out["autoCompact"] = False
        out["text"] += " · no auto-compact"
    elif threshold and "autoCompact" in usage:
        out["thresholdPercent"] = round(100 * used / threshold)
    left = usage.get("repliesUntilRefresh")
    if isinstance(left, int):
        out["repliesUntilRefresh"] = left
        out["text"] += f" · refresh in {left}"
    return out
