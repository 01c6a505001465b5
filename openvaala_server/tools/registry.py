"""The built-in tools by name, and the selection a conversation's configuration asks for."""

from __future__ import annotations

from collections.abc import Sequence

from openvaala_server.tools.base import Tool
from openvaala_server.tools.files import ListDirTool
from openvaala_server.tools.hosted_files import HostedEditFile, HostedReadFile, HostedWriteFile
from openvaala_server.tools.hosted_patch import HostedApplyPatch
from openvaala_server.tools.hosted_shell import HostedShellTool
from openvaala_server.tools.search import GlobTool, GrepTool


def _by_name(*tools: Tool) -> dict[str, Tool]:
    return {tool.spec.name: tool for tool in tools}


BUILTIN_TOOLS: dict[str, Tool] = _by_name(
    HostedShellTool(),  # in the editor's terminal when one offers it (tools/hosted_shell.py)
    # Through the editor when one holds the conversation's files (tools/hosted_files.py).
    HostedReadFile(),
    HostedWriteFile(),
    HostedEditFile(),
    ListDirTool(),
    GrepTool(),
    GlobTool(),
    HostedApplyPatch(),
)


def tools_for(names: Sequence[str]) -> list[Tool]:
    """The built-in tools among `names`, in that order, each once.

    Names that aren't built in are skipped: the daemon adds its own tools (`spawn_agent`, …)
    itself, and a duplicated spec would make providers reject the request.
    """
    unique = dict.fromkeys(names)
    return [BUILTIN_TOOLS[name] for name in unique if name in BUILTIN_TOOLS]
