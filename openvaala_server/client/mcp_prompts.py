"""MCP prompts as slash commands, for every client (the TUI, the ACP agent): the command
`/mcp__SERVER__PROMPT name=value …` read into a call of `mcp/getPrompt` (docs/protocol.md), and
each ready server's prompts as the commands to offer; and the `@SERVER:URI` resource mentions of
a message. Pure: the caller sends the requests."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PROMPT_PREFIX = "mcp__"
# `@docs:notes://today` at the start of a word: the server name, then the URI up to a space.
RESOURCE_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]+):(\S+)")


class PromptInputError(ValueError):
    """A `/mcp__…` command that cannot be sent; the message says why."""


@dataclass(frozen=True)
class PromptCall:
    server: str
    name: str
    arguments: dict[str, str]


@dataclass(frozen=True)
class PromptCommand:
    """One prompt offered as a command: its name without the slash, what it does, its hint."""

    name: str
    description: str
    hint: str  # `name=… other=…`, or "" for a prompt without arguments


def parse_prompt_command(text: str) -> PromptCall | None:
    """`/mcp__SERVER__PROMPT a=1 b="two words"` as a call; None for any other text."""
    head, _, rest = text.strip().partition(" ")
    if not head.startswith("/" + PROMPT_PREFIX):
        return None
    server, sep, name = head[1 + len(PROMPT_PREFIX) :].partition("__")
    if not sep or not server or not name:
        raise PromptInputError(f"{head}: expected /mcp__SERVER__PROMPT")
    arguments: dict[str, str] = {}
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise PromptInputError(f"{head}: {exc}") from None
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise PromptInputError(f"{head}: arguments are name=value, not {word!r}")
        arguments[key] = value
    return PromptCall(server, name, arguments)


def prompt_commands(servers: Iterable[Mapping[str, Any]]) -> list[PromptCommand]:
    """The prompts of the ready servers among `mcp/list`'s `servers`, as commands."""
    out: list[PromptCommand] = []
    for server in servers:
        if server.get("status") != "ready":
            continue
        for prompt in server.get("prompts") or ():
            hint = " ".join(f"{a}=…" for a in prompt.get("arguments") or ())
            out.append(
                PromptCommand(
                    f"{PROMPT_PREFIX}{server.get('name')}__{prompt.get('name')}",
                    str(prompt.get("description") or "") or "an MCP prompt",
                    hint,
                )
            )
    return out


def resource_mentions(text: str) -> list[tuple[str, str]]:
    """The `(server, uri)` of each `@SERVER:URI` in `text`, once each, in order; trailing
    punctuation is not part of the URI."""
    found = dict.fromkeys(
        (m.group(1), m.group(2).rstrip(".,;!?)")) for m in RESOURCE_MENTION.finditer(text)
    )
    return [(server, uri) for server, uri in found if uri]
