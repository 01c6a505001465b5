"""Short texts every client shows for wire values (the TUI, the editor bridge)."""

from __future__ import annotations

import re
from collections.abc import Mapping

# A protocol method name: a known namespace, a slash, a name ("session/updated"); never a piece of
# a path (`~/.config/openvaala/commands`, `src/session/store.py`), which the user needs as it is.
METHOD = re.compile(
    r"(?<![\w./~-])(?:conversation|conversations|input|turn|approval|session|sessions|item|models|"
    r"agents|retry|compaction|usage|inbox|client|config|mcp)/[A-Za-z]+\b(?![/.\w-])"
)


def scrub(text: str) -> str:
    """`text` with protocol method names replaced by plain words: the daemon's error messages
    name the method to call for a developer; a user reads what to do in their client instead."""
    return METHOD.sub("a request to the daemon", text)


def format_tokens(n: int) -> str:
    """A token count as people read it in a status line: 950, 1.2k, 12k, 1.3M."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n // 1000}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def mcp_server_state(server: Mapping[str, object]) -> str:
    """One MCP server's state from `mcp/list` in words (docs/protocol.md): every client says it
    the same way, each with its own layout around the name."""
    status = str(server.get("status") or "?")
    listed = server.get("tools")
    tools = [str(t) for t in listed] if isinstance(listed, list) else []
    if status == "ready":
        noun = "tool" if len(tools) == 1 else "tools"
        text = f"ready, {len(tools)} {noun}" + (f": {', '.join(tools)}" if tools else "")
        return text + _offers(server)
    if status == "failed":
        text = f"failed: {server.get('error') or 'no reason given'}"
    elif status == "starting":
        text = "starting…"
    elif status == "stopped":
        text = "not started yet (starts when an agent that lists it first needs it)"
    else:
        text = status
    if server.get("toolsLastKnown") and tools:
        noun = "tool" if len(tools) == 1 else "tools"
        text += f"; offers the {len(tools)} {noun} it listed last"
    return text


def _offers(server: Mapping[str, object]) -> str:
    """A ready server's resources (`@NAME:URI`) and prompts (`/mcp__NAME__PROMPT`), if any."""
    name = server.get("name")
    parts: list[str] = []
    resources = server.get("resources")
    if isinstance(resources, list) and resources:
        uris = [f"@{name}:{r.get('uri')}" for r in resources if isinstance(r, dict)]
        parts.append("resources: " + ", ".join(uris))
    prompts = server.get("prompts")
    if isinstance(prompts, list) and prompts:
        names = [f"/mcp__{name}__{p.get('name')}" for p in prompts if isinstance(p, dict)]
        parts.append("prompts: " + ", ".join(names))
    return "".join(f"; {part}" for part in parts)
