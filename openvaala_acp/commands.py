"""Slash commands (`available_commands_update`): /compact, /fork, /rewind, /agents, /usage,
/init, /remember, /memory.

A prompt that starts with one of them runs it on the daemon instead of being sent to the model;
what it did comes back as the agent's message. `/init` is the exception: it is a turn, the
built-in request to write AGENTS.md sent in the prompt's place (agent.py). Fork and rewind make
a new conversation (the original is unchanged, docs/protocol.md): the message names it, and the
editor opens it from its session history (`session/list`, `session/load`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from openvaala_acp.link import DaemonLink
from openvaala_server.protocol import methods

if TYPE_CHECKING:
    from openvaala_server.domain.memory import Scope as MemoryScope
    from openvaala_server.protocol import payloads

COMMANDS = [
    AvailableCommand(name="compact", description="Summarize the history now to free context"),
    AvailableCommand(
        name="fork", description="Copy this conversation into a new one (the session history)"
    ),
    AvailableCommand(
        name="rewind",
        description="Start a new conversation from before one of your messages",
        input=AvailableCommandInput(
            root=UnstructuredCommandInput(hint="how many of your messages back (default 1)")
        ),
    ),
    AvailableCommand(
        name="agents",
        description="List the agents, or switch to one",
        input=AvailableCommandInput(root=UnstructuredCommandInput(hint="agent name (optional)")),
    ),
    AvailableCommand(name="usage", description="How full the context window is"),
    AvailableCommand(
        name="init", description="Ask the agent to write or improve the repository's AGENTS.md"
    ),
    AvailableCommand(
        name="remember",
        description="Keep a note for every later conversation (the project's memory)",
        input=AvailableCommandInput(
            root=UnstructuredCommandInput(hint="the note; start with 'user' for every project")
        ),
    ),
    AvailableCommand(name="memory", description="Show the memory files and where they are"),
]
NAMES = {command.name for command in COMMANDS}


def parse(text: str) -> tuple[str, str] | None:
    """(name, argument) when the prompt is one of these commands."""
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    return (name, argument.strip()) if name in NAMES else None


async def run(link: DaemonLink, cid: str, name: str, argument: str) -> str:
    if name == "compact":
        result = await link.request(methods.CONVERSATION_COMPACT, {"conversationId": cid})
        if result.get("compacted"):
            return (
                "Compacted: the history is summarized, and the model sees the summary from now on."
            )
        return f"Nothing to compact: {result.get('reason') or 'the history is too short'}."
    if name == "fork":
        info = (await link.request(methods.CONVERSATION_FORK, {"conversationId": cid}))[
            "conversation"
        ]
        return _new_conversation("Forked into", info)
    if name == "rewind":
        return await _rewind(link, cid, argument)
    if name == "agents":
        return await _agents(link, cid, argument)
    if name == "remember":
        return await _remember(link, cid, argument)
    if name == "memory":
        return await _memory(link, cid)
    usage = await link.request(methods.CONVERSATION_USAGE, {"conversationId": cid})
    return usage_text(usage)


def usage_text(usage: payloads.Usage) -> str:
    used, window = int(usage.get("used") or 0), int(usage.get("contextWindow") or 0)
    share = f" ({100 * used / window:.0f}%)" if window else ""
    return (
        f"Context: {used:,} of {window:,} tokens{share}; automatic compaction at"
        f" {int(usage.get('threshold') or 0):,} ({usage.get('source', 'estimated')})."
    )


def _new_conversation(verb: str, info: payloads.ConversationInfo) -> str:
    return (
        f"{verb} a new conversation, “{info.get('title')}” (`{info.get('conversationId')}`)."
        " Open it from the session history; this one is unchanged."
    )


async def _rewind(link: DaemonLink, cid: str, argument: str) -> str:
    back = int(argument) if argument.isdigit() and int(argument) > 0 else 1
    read = await link.request(methods.CONVERSATION_READ, {"conversationId": cid, "limit": 500})
    mine = [
        item
        for item in read.get("items") or []
        if item.get("type") == "user_message" and item.get("origin", "user") == "user"
    ]
    if len(mine) < back:
        return f"There are only {len(mine)} messages of yours to rewind to."
    target = mine[-back]
    result = await link.request(
        methods.CONVERSATION_REWIND, {"conversationId": cid, "messageId": target["itemId"]}
    )
    text = str(result.get("composerText") or "")
    quoted = "\n".join(f"> {line}" for line in text.splitlines())
    return _new_conversation("Rewound into", result["conversation"]) + (
        f" Your message, to edit and send again there:\n\n{quoted}" if quoted else ""
    )


async def _agents(link: DaemonLink, cid: str, argument: str) -> str:
    if argument:
        await link.request(
            methods.CONVERSATION_SET_AGENT, {"conversationId": cid, "agent": argument}
        )
        return f"This conversation now uses the agent `{argument}`."
    agents = (await link.request(methods.AGENTS_LIST, {})).get("agents") or []
    lines = [
        f"- `{a['name']}`{' (default)' if a.get('default') else ''}: {a.get('description') or ''}"
        f" — model {a.get('model')}"
        for a in agents
    ]
    return "Agents (switch with `/agents NAME` or the mode selector):\n" + "\n".join(lines)


async def _remember(link: DaemonLink, cid: str, argument: str) -> str:
    word, _, rest = argument.partition(" ")
    scope: MemoryScope = "project"
    if word in ("user", "project"):
        scope = "user" if word == "user" else "project"
    else:
        rest = argument
    if not rest.strip():
        return "Say what to remember: `/remember NOTE` (or `/remember user NOTE`)."
    saved = await link.request(
        methods.MEMORY_REMEMBER, {"conversationId": cid, "scope": scope, "text": rest}
    )
    return f"Remembered in `{saved['path']}`; every later conversation is given it."


async def _memory(link: DaemonLink, cid: str) -> str:
    files = (await link.request(methods.MEMORY_READ, {"conversationId": cid}))["files"]
    parts = []
    for file in files:
        body = file["text"].rstrip() if file["exists"] else "(empty)"
        parts.append(f"Memory ({file['scope']}): `{file['path']}`\n\n{body}")
    return "\n\n".join(parts) + "\n\nThey are plain files: edit them in the editor."
