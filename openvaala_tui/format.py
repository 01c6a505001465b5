"""Short texts the screen shows, computed from wire values. Pure functions, no Textual."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from openvaala_server.protocol import codec
from openvaala_server.protocol.display import format_tokens as tokens

if TYPE_CHECKING:  # a type only: the records' shapes are not on the way to the first screen
    from openvaala_server.client.view import Item
    from openvaala_server.protocol.payloads import RetryScheduledNote, Usage


def fullness(usage: Usage) -> float | None:
    """used / threshold (1.0 = compaction is due), or None when the window is unknown."""
    used = int(usage.get("used") or 0)
    limit = int(usage.get("threshold") or usage.get("contextWindow") or 0)
    if limit <= 0:
        return None
    return used / limit


def meter_level(usage: Usage) -> str:
    """`ok` | `warn` | `full` | `unknown`: the context meter's colour class."""
    ratio = fullness(usage)
    if ratio is None:
        return "unknown"
    if ratio >= 0.9:
        return "full"
    if ratio >= 0.6:
        return "warn"
    return "ok"


def meter(usage: Usage, width: int = 8) -> str:
    used = int(usage.get("used") or 0)
    window = int(usage.get("contextWindow") or 0)
    ratio = fullness(usage)
    if ratio is None or window <= 0:
        return f"ctx {tokens(used)}"
    filled = min(width, round(ratio * width))
    bar = "█" * filled + "░" * (width - filled)
    estimated = "~" if usage.get("source") == "estimated" else ""
    return f"ctx {bar} {estimated}{round(100 * used / window)}%"


def context_report(usage: Usage) -> str:
    """The text of `/context`."""
    used = int(usage.get("used") or 0)
    window = int(usage.get("contextWindow") or 0)
    threshold = int(usage.get("threshold") or 0)
    source = str(usage.get("source") or "estimated")
    if window <= 0:
        return f"Context: {used:,} tokens used ({source}); the model's window is unknown."
    share = 100 * used / window
    return (
        f"Context: {used:,} of {window:,} tokens ({share:.1f}%, {source}); "
        f"compaction at {threshold:,}; {max(0, threshold - used):,} left before it."
    )


def retry_text(retry: RetryScheduledNote, remaining: float | None = None) -> str:
    """ "retrying 3/10 in 12 s: why" — `remaining` seconds (counted down by the caller), else
    the delay the daemon announced."""
    delay = float(retry.get("delaySeconds") or 0) if remaining is None else remaining
    when = "now" if delay <= 0 else f"in {delay:.0f} s" if delay >= 1 else f"in {delay:.1f} s"
    text = f"retrying {retry.get('attempt')}/{retry.get('maxAttempts')} {when}"
    error = retry.get("error")
    reason = str(error.get("message") or "") if isinstance(error, dict) else ""
    return f"{text}: {first_line(reason, 120)}" if reason.strip() else text


def turn_state(status: str, running: bool, compacting: bool) -> str:
    if compacting:
        return "compacting…"
    if status == "awaiting_approval":
        return "waiting for your approval"
    if running:
        return "working…"
    return {"idle": "ready", "waiting": "waiting", "interrupted": "interrupted"}.get(status, status)


def tool_command(call: Item) -> str:
    """What a tool call does, in one line: the shell command, a path, or its arguments."""
    args = call.get("arguments")
    if isinstance(args, dict):
        for key in ("command", "path", "pattern", "query"):
            value = args.get(key)
            if isinstance(value, str):
                return value
        return codec.text(args)[:200]
    return str(call.get("argumentsText") or "")[:200]


def tool_status(call: Item | None, result: Item | None) -> str:
    """`pending` | `running` | `done` | `error` | `interrupted` | `failed`."""
    for item in (result, call):
        if item is not None and item.get("status") in ("interrupted", "failed"):
            return str(item["status"])
    if result is None:
        return "pending"
    if result.get("status") == "in_progress":
        return "running"
    return "error" if result.get("isError") else "done"


def local_time(stamp: str) -> str:
    """An ISO timestamp from the wire as the user's local "YYYY-MM-DD HH:MM" ("" if none)."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def summary_title(item: Item) -> str:
    """The compaction marker's line: why the history was summarized and how much of it."""
    how = "by hand" if item.get("reason") == "manual" else "automatically"
    count = item.get("coveredItems")
    covered = f" ({count} items)" if isinstance(count, int) and count > 0 else ""
    return f"── context compacted {how}{covered} · the summary the model sees ──"
