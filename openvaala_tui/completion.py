"""What the composer's popup offers, and what `@path` mentions attach. No Textual here.

`/na` at the start of the message completes a slash command; `@sr` anywhere completes a path
under the conversation's directory (hidden entries only once the user types the dot). When a
message is sent, each `@path` naming a readable text file goes with it: its content is appended
to the message as a fenced block headed by the path, so the model reads the file as the user
saw it when sending (a later edit does not change what was sent).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from openvaala_server.custom_commands import directories, load
from openvaala_tui.commands import COMMANDS

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import McpServerState

MAX_CANDIDATES = 12
MAX_ATTACHED_BYTES = 200_000  # one file; larger ones are named, not attached
MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@]+)")


@dataclass(frozen=True)
class Completion:
    """Replace the text from `start` to the cursor with one of `candidates` (value, help)."""

    start: int
    candidates: list[tuple[str, str]]


@dataclass(frozen=True)
class McpOffers:
    """What the MCP servers offer the composer, from the last `mcp/list`: prompts as slash
    commands (`mcp__SERVER__PROMPT` → help) and resources as mentions (`SERVER:URI`)."""

    prompts: dict[str, str] = field(default_factory=dict)
    resources: tuple[str, ...] = ()


def mcp_offers(servers: Sequence[McpServerState]) -> McpOffers:
    prompts: dict[str, str] = {}
    resources: list[str] = []
    for server in servers:
        name = server.get("name")
        for prompt in server.get("prompts") or ():
            args = " ".join(f"{a}=…" for a in prompt.get("arguments") or ())
            help_text = " ".join(filter(None, [prompt.get("description") or "", args]))
            prompts[f"mcp__{name}__{prompt.get('name')}"] = help_text or "an MCP prompt"
        resources += [f"{name}:{r.get('uri')}" for r in server.get("resources") or ()]
    return McpOffers(prompts, tuple(resources))


def complete(
    text: str,
    cursor: int,
    cwd: str,
    offers: McpOffers | None = None,
    user_commands: Path | None = None,
    *,
    local_files: bool = True,
) -> Completion | None:
    """The completion for the word before `cursor` in `text`, or None. `user_commands`: the
    directory of the user's custom commands (the project's are found from `cwd`). Without
    `local_files` (`--remote`: `cwd` is another machine's) no path is offered."""
    offers = offers or McpOffers()
    before = text[:cursor]
    if before.startswith("/") and " " not in before and "\n" not in before:
        typed = before[1:].lower()
        named = {**COMMANDS, **offers.prompts}
        if user_commands is not None:
            custom = load(directories(user_commands, cwd), set(COMMANDS))
            named |= {name: f"{c.description} (custom)" for name, c in custom.items()}
        hits = [(f"/{n}", h) for n, h in named.items() if n.lower().startswith(typed)]
        # A name typed in full comes first, so Enter sends "/agent" rather than complete it
        # to "/agents".
        hits.sort(key=lambda hit: hit[0] != f"/{typed}")
        return Completion(0, hits) if hits else None
    match = re.search(r"(?:(?<=\s)|^)@([^\s@]*)$", before)
    if match is None:
        return None
    typed = match.group(1)
    hits = [(f"@{r}", "MCP resource") for r in offers.resources if r.startswith(typed)]
    if local_files:
        hits += [(f"@{p}", "") for p in paths(typed, cwd)]
    return Completion(match.start(), hits[:MAX_CANDIDATES]) if hits else None


def paths(typed: str, cwd: str) -> list[str]:
    """Entries of the directory `typed` names (relative to `cwd`) that start with its last
    part; directories end with "/"."""
    folder, _, prefix = typed.rpartition("/")
    base = os.path.join(cwd, os.path.expanduser(folder)) if folder else cwd
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    found: list[str] = []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        if entry.name.startswith(".") and not prefix.startswith("."):
            continue
        slash = "/" if entry.is_dir() else ""
        found.append(f"{folder}/{entry.name}{slash}" if folder else f"{entry.name}{slash}")
        if len(found) >= MAX_CANDIDATES:
            break
    return found


@dataclass(frozen=True)
class Attached:
    text: str  # the message with the files' contents appended
    files: list[str]  # the paths attached
    problems: list[str]  # mentions of files that could not go with it, and why


def attach_mentions(text: str, cwd: str, *, inside_only: bool = False) -> Attached:
    """`text` with the content of each `@path` file it mentions appended (once per file).
    A mention of something that is not a file (an @handle, a directory) is left as it is.
    `inside_only`: text the repository wrote (a project's custom command) attaches files of
    the working directory only, never `@~/.ssh/id_rsa`."""
    blocks: list[str] = []
    files: list[str] = []
    problems: list[str] = []
    root = os.path.realpath(cwd)
    for name in dict.fromkeys(m.group(1).rstrip(".,;:!?)") for m in MENTION.finditer(text)):
        path = os.path.join(cwd, os.path.expanduser(name))
        if not os.path.isfile(path):
            continue
        if inside_only and os.path.commonpath([root, os.path.realpath(path)]) != root:
            problems.append(
                f"@{name} is outside the working directory: a project's command cannot attach it"
            )
            continue
        try:
            if os.path.getsize(path) > MAX_ATTACHED_BYTES:
                problems.append(f"@{name} is over {MAX_ATTACHED_BYTES // 1000} kB: not attached")
                continue
            with open(path, encoding="utf-8") as handle:
                content = handle.read()
        except UnicodeDecodeError:
            problems.append(f"@{name} is not a UTF-8 text file: not attached")
            continue
        except OSError as exc:
            problems.append(f"@{name} could not be read ({exc.strerror}): not attached")
            continue
        blocks.append(fenced(name, content))
        files.append(name)
    if not blocks:
        return Attached(text, [], problems)
    return Attached(text.rstrip() + "\n\n" + "\n\n".join(blocks), files, problems)


def fenced(label: str, content: str) -> str:
    """`content` in a code fence labelled `label`, longer than any backtick run inside it."""
    fence = "`" * max(3, _longest_backtick_run(content) + 1)
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"{fence}{label}\n{body}{fence}"


def _longest_backtick_run(text: str) -> int:
    runs = re.findall(r"`+", text)
    return max((len(r) for r in runs), default=0)
