"""The text of the context views: the trace of the next request, the gauge's additions, what a
summary replaced (docs/protocol.md "Context"). Pure: dicts in, strings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_tui import format as fmt

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import ContextTrace, ReplacedResult, Usage


def trace_text(result: ContextTrace) -> str:
    """The parts of the next request, one a line, with their tokens; then what was left out."""
    parts = result.get("parts") or []
    width = max([len(str(p.get("label") or "")) for p in parts] + [10])
    width = min(width, 48)
    lines = [f"Next request, about {int(result.get('total') or 0):,} tokens:"]
    for part in parts:
        label = fmt.first_line(str(part.get("label") or ""), width)
        lines.append(f"  {label:<{width}} {int(part.get('tokens') or 0):>9,}")
    for omitted in result.get("omitted") or []:
        count = len(omitted.get("itemIds") or [])
        lines.append(f"Left out: {count} item{'s' * (count != 1)}, {omitted.get('reason')}.")
    window = window_text(result.get("windowSource"))
    if window:
        lines.append(window)
    usage = result.get("usage") or {}
    refresh = refresh_text(usage)
    if refresh:
        lines.append(refresh[:1].upper() + refresh[1:] + ".")
    lines.append("/context json copies the request body · /pin keeps a message verbatim.")
    return "\n".join(lines)


def window_text(source: object) -> str:
    """Where a window nobody wrote in config.toml came from (docs/configuration.md)."""
    if not isinstance(source, str) or source == "config":
        return ""
    if source == "catalog":
        return "The model's window is the catalog's (set context_window to change it)."
    if source.startswith("server: "):
        return f"The model's window was told by its server ({source.removeprefix('server: ')})."
    return f"The model's window: {source.removeprefix('default: ')}."


def refresh_text(usage: Usage) -> str:
    left = usage.get("repliesUntilRefresh")
    if not isinstance(left, int):
        return ""
    if left == 0:
        return "refresh summary at the next message"
    return f"refresh summary in {left} repl{'y' if left == 1 else 'ies'}"


def gauge_suffix(usage: Usage) -> str:
    """What the status meter adds: compaction off, the refresh countdown, a prepared summary."""
    bits = []
    if usage.get("autoCompact") is False:
        bits.append("no auto-compact")
    early = usage.get("earlyCompaction")
    if isinstance(early, dict) and early.get("state") == "ready":
        bits.append("summary ready")
    left = usage.get("repliesUntilRefresh")
    if isinstance(left, int):
        bits.append(f"↻{left}")
    return (" · " + " · ".join(bits)) if bits else ""


def replaced_text(result: ReplacedResult) -> str:
    items = result.get("items") or []
    lines = [f"It replaced {len(items)} item{'s' * (len(items) != 1)}:"]
    for item in items[:12]:
        who = {"user_message": "you", "agent_message": "agent"}.get(str(item.get("type")), "")
        text = str(item.get("text") or item.get("output") or item.get("name") or "")
        lines.append(f"  {who or item.get('type')}: {fmt.first_line(text, 70)}")
    if len(items) > 12:
        lines.append(f"  … and {len(items) - 12} more")
    if result.get("replacesSummary"):
        lines.append("  and the summary before it")
    return "\n".join(lines)
