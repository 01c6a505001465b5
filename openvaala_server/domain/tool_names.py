"""The names an agent's `tools` may list (docs/configuration.md, `[agents.NAME] tools`).

A leaf: the configuration checks names against it without importing the tools (which import
the configuration), and each tool module takes its own name from here, so the two cannot drift.
"""

from __future__ import annotations

from typing import Final

# The built-in tools, in the order `tools/registry.py` offers them.
SHELL: Final = "shell"
READ_FILE: Final = "read_file"
WRITE_FILE: Final = "write_file"
EDIT_FILE: Final = "edit_file"
LIST_DIR: Final = "list_dir"
GREP: Final = "grep"
GLOB: Final = "glob"
APPLY_PATCH: Final = "apply_patch"
BUILTIN: Final = (SHELL, READ_FILE, WRITE_FILE, EDIT_FILE, LIST_DIR, GREP, GLOB, APPLY_PATCH)

# The daemon's own tools, bound to the conversation that uses them.
UPDATE_PLAN: Final = "update_plan"
SPAWN_AGENT: Final = "spawn_agent"
COLLAB: Final = (
    SPAWN_AGENT,
    "send_message",
    "wait",
    "interrupt_agent",
    "inspect_agent",
    "list_agents",
    "close_agent",
)
SEARCH_HISTORY: Final = "search_history"
REMEMBER: Final = "remember"
# Opt-in (not in the default `tools`): it reaches the network from the daemon itself.
WEB_FETCH: Final = "web_fetch"

KNOWN: Final = (*BUILTIN, UPDATE_PLAN, *COLLAB, SEARCH_HISTORY, REMEMBER, WEB_FETCH)
