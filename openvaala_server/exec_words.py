"""What `openvaala exec` checks and says on its own, before and around the turn (pure): the tool
an `--allow` rule names, and the one-line stderr note of a tool call (docs/design.md,
"openvaala exec")."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Final

from openvaala_server.domain.tool_names import KNOWN

# Tools outside `KNOWN` that a rule may name: the MCP resource reader; MCP tools by prefix.
_OTHER_TOOLS: Final = ("read_mcp_resource",)
MCP_PREFIX: Final = "mcp__"
# Characters of the detail a tool line shows (the command, the path): one terminal line.
DETAIL_MAX: Final = 120


def unknown_tool(tool: str) -> str | None:
    """Why `tool` is no tool a rule can name (None: it is one)."""
    names = (*KNOWN, *_OTHER_TOOLS)
    if tool == "*" or tool in names or (tool.startswith(MCP_PREFIX) and len(tool) > 5):
        return None
    close = difflib.get_close_matches(tool, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"no tool is named {tool!r}{hint}; tools: {', '.join(names)}, "
        f"or an MCP server's {MCP_PREFIX}SERVER__TOOL"
    )


def tool_line(name: str, arguments: object) -> str:
    """`tool shell: ls -la`: the call's command or path, on one line, bounded."""
    args = arguments if isinstance(arguments, Mapping) else {}
    detail = next(
        (
            args[key]
            for key in ("command", "path", "pattern", "url")
            if isinstance(args.get(key), str)
        ),
        "",
    )
    detail = " ".join(str(detail).split())
    if len(detail) > DETAIL_MAX:
        detail = detail[: DETAIL_MAX - 1] + "…"
    return f"tool {name}: {detail}" if detail else f"tool {name}"


def cwd_gone(cwd: str) -> str:
    return (
        f"the conversation's directory {cwd} does not exist: pass --cwd DIR to point it at "
        "another one (with --resume ID or --continue)"
    )


def config_warning(status: object) -> str | None:
    """The warning for `initialize`'s `config` when the daemon ignored a bad edit."""
    if not isinstance(status, Mapping) or status.get("state") != "error":
        return None
    message = str(status.get("message") or "the file has an error")
    return (
        f"warning: the last edit of the config file was ignored ({message}); "
        "this run uses the configuration from before it"
    )


_SLASH = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s+(.*))?", re.DOTALL)


def slash_call(prompt: str) -> tuple[str, str] | None:
    """`/name arguments`: a custom command to expand (`/usr/bin is…` is a message)."""
    match = _SLASH.fullmatch(prompt.strip())
    if match is None:
        return None
    return match[1].lower(), (match[2] or "").strip()
