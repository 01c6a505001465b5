"""The usage report a status line shows: used / window, reported or estimated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from openvaala_lsp.replies import UsageReport
from openvaala_server.client.remote import configured
from openvaala_server.protocol.display import format_tokens as tokens
from openvaala_server.protocol.json_types import JsonValue


def report(conversation_id: str, session_id: str, usage: Mapping[str, object]) -> UsageReport:
    """`Usage` from the daemon, plus what a status line needs: `percent` and a short `text`."""
    used = _int(usage.get("used"))
    window = _int(usage.get("contextWindow"))
    source = str(usage.get("source") or "estimated")
    percent = round(100 * used / window) if window else 0
    out: UsageReport = {
        "conversationId": conversation_id,
        "sessionId": session_id,
        "used": used,
        "contextWindow": window,
        "threshold": _json(usage.get("threshold")),
        "maxOutputTokens": _json(usage.get("maxOutputTokens")),
        "source": source,
        "percent": percent,
        "text": f"{tokens(used)}/{tokens(window)} ({percent}%, {source})",
    }
    if usage.get("reportedAt"):
        out["reportedAt"] = _json(usage["reportedAt"])
    # The gauge's two triggers (docs/protocol.md "Context"): the threshold, a refresh countdown.
    threshold = _int(usage.get("threshold"))
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


def for_status_line(out: UsageReport) -> UsageReport:
    """The report a status line shows: over `--remote`, it names the machine the bridge is
    attached to, as the TUI's status line does (docs/remote.md)."""
    remote = configured()
    if remote is not None:
        out["machine"] = remote.host
        out["text"] += f" · on {remote.host}"
    return out


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _json(value: object) -> JsonValue:
    # The usage came off the wire (the daemon's result or the view's copy of a note): JSON.
    return cast("JsonValue", value)
