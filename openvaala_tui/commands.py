"""Slash commands: their names and help, parsing, and the command-palette provider."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from openvaala_server.custom_commands import CustomCommand


class SlashRunner(Protocol):
    """What the palette needs of the app (`VaalaApp`, through `actions.CommandsMixin`): named by
    this interface, so this module, which the app imports, imports nothing of it back."""

    def run_slash(self, name: str, arg: str) -> None: ...

    def custom_commands(self) -> Mapping[str, CustomCommand]: ...

    def compose_text(self, text: str) -> None: ...


COMMANDS: dict[str, str] = {
    "new": "Start a new conversation in the same directory",
    "resume": "Open an earlier conversation (search, archived)",
    "fork": "Copy this conversation into a new one",
    "rewind": "Go back to one of your earlier messages, files too if you say so (also: Esc Esc)",
    "undo": "Put back the files the last turn changed (again: the turn before)",
    "diff": "What this conversation changed in the working directory (from its checkpoints)",
    "tree": "The forks and rewinds of this conversation: open one",
    "continue": "Resume a turn the daemon's crash cut short",
    "compact": "Summarize the history to free context",
    "context": "What the next request holds (/context json copies it)",
    "pin": "Pin a message: compaction keeps it verbatim",
    "unpin": "Unpin a message",
    "agents": "The agents of this conversation: follow, interrupt, message",
    "model": "Switch the model",
    "setup": "Configure a model: provider, key, model (runs `openvaala setup`)",
    "agent": "Choose this conversation's agent: /agent NAME (alone: the list)",
    "cwd": "Point this conversation at another directory: /cwd PATH",
    "approvals": "Permission mode: plan (read-only) · ask (every write) · auto-edit (Shift+Tab)",
    "mcp": "MCP servers: starting, ready with their tools, or failed and why",
    "init": "Ask the agent to write or improve the repository's AGENTS.md",
    "remember": "Keep a note for later conversations: /remember [user] TEXT (also: # TEXT)",
    "memory": "Show the memory files (/memory edit [user] edits one)",
    "image": "Attach an image to your next message: /image PATH (or paste its path)",
    "rename": "Rename this conversation",
    "archive": "Archive this conversation",
    "delete": "Delete this conversation",
    "status": "Model, agent, sandbox, approvals, permission mode, directory, usage, daemon, config",
    "help": "Keys and commands",
    "exit": "Quit (while a turn runs: stop it, or leave it running in the daemon)",
    "quit": "Quit (while a turn runs: stop it, or leave it running in the daemon)",
}

HELP = "\n".join(
    [
        "Keys: Enter send (steers a running turn) · Tab queue · Ctrl+G jump the queue ·",
        "Shift+Enter / Ctrl+J newline · Esc interrupt · Esc Esc rewind · Ctrl+P palette ·",
        "Ctrl+W waiting inputs · Ctrl+C clears the message (Up brings it back, and what you",
        "sent before), else interrupts the turn, else a second Ctrl+C quits (so do Ctrl+Q,",
        "/exit, /quit; while a turn runs they ask: stop it or leave it running) · @path sends",
        "a file's content with the message · Tab completes / and @ · Shift+Tab cycles the",
        "permission mode (plan: read-only · ask: every write asks · auto-edit: the agent's",
        "configuration; /approvals).",
        "# TEXT keeps a note for later conversations (the project's memory).",
        "!COMMAND runs a shell command yourself, in the agent's sandbox; the model reads its",
        "output with your next message.",
        "/image PATH or a pasted image path attaches an image (PNG, JPEG, GIF, WebP).",
        "MCP: @SERVER:URI sends a server's resource with the message; /mcp__SERVER__PROMPT",
        "name=value … sends a server's prompt (/mcp lists both).",
        "Approvals (the prompt above the composer; it takes the focus when it appears, unless",
        "you are typing: then Ctrl+O reaches it; its keys act a moment after it appears, what",
        "you type before goes to your message): y allow once · a allow for this conversation",
        "(exactly the command or file the prompt names; not offered when nothing can be kept) ·",
        "n deny · d deny with a message the model receives (Enter denies, Esc goes back) ·",
        "Tab back to the composer · Esc interrupts the turn (its approvals are denied).",
        "Commands: " + " · ".join(f"/{name}" for name in COMMANDS),
    ]
)


def parse(text: str) -> tuple[str, str] | None:
    """(`name`, argument) when `text` is a slash command, known or not; None for a message."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    if not head or "/" in head:  # "/usr/bin is…" is a message, not a command
        return None
    return head.lower(), rest.strip()


def resolve_dir(typed: str, current: str) -> str:
    """The absolute directory `/cwd typed` names: `~` expanded, relative to `current`."""
    return os.path.normpath(os.path.join(current, os.path.expanduser(typed)))


class SlashCommands(Provider):
    """The slash commands, in Textual's command palette."""

    @property
    def vaala(self) -> SlashRunner:
        return cast("SlashRunner", self.app)

    def _entries(self) -> list[tuple[str, str, Callable[[], object]]]:
        """(name, help, what choosing it does): the built-in commands run; a custom command
        (docs/configuration.md, "Custom commands") goes into the composer for its arguments."""
        entries: list[tuple[str, str, Callable[[], object]]] = [
            (name, help_text, partial(self.vaala.run_slash, name, ""))
            for name, help_text in COMMANDS.items()
        ]
        for name, custom in sorted(self.vaala.custom_commands().items()):
            entries.append(
                (
                    name,
                    f"(custom) {custom.description}",
                    partial(self.vaala.compose_text, f"/{name} "),
                )
            )
        return entries

    async def discover(self) -> Hits:
        for name, help_text, run in self._entries():
            yield DiscoveryHit(f"/{name}", run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, run in self._entries():
            score = matcher.match(f"/{name} {help_text}")
            if score > 0:
                yield Hit(score, matcher.highlight(f"/{name}"), run, help=help_text)
