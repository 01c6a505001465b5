"""The first screen of an empty conversation: where it runs, with what, and how to start.

A new user sees the working directory, the agent and model, the config file that chose them,
and a few prompts the demo model acts on, instead of an empty box.
"""

from __future__ import annotations

import os

from rich.text import Text
from textual.widgets import Static

TIPS = (
    ("run: ls", "the agent runs a shell command"),
    ("think: why?", "reasoning streams before the answer"),
    ("spawn: a task", "a subagent takes it (/agents)"),
    ("@path", "sends a file's content with the message"),
    ("/help", "keys and commands · Ctrl+P the palette"),
)


def short_path(path: str) -> str:
    """`path` with the home directory written `~`."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def welcome_text(cwd: str, agent: str, model: str, config: str, offer: str = "") -> Text:
    text = Text()
    text.append("OpenVaala", style="bold")
    text.append(f" in {short_path(cwd)}\n")
    text.append("agent ", style="dim")
    text.append(agent, style="bold")
    text.append(" · model ", style="dim")
    text.append(model, style="bold")
    text.append("\nconfig ", style="dim")
    text.append(short_path(config))
    text.append("\n\nType a message and press Enter. Try:\n")
    width = max(len(tip) for tip, _ in TIPS)
    for tip, what in TIPS:
        text.append(f"  {tip:<{width}}  ", style="bold")
        text.append(f"{what}\n", style="dim")
    if offer:  # no model but the demo yet: how to set one up (openvaala_tui/setup_actions.py)
        text.append(f"\n{offer}\n", style="bold")
    text.rstrip()
    return text


class Welcome(Static):
    """Shown while the transcript has no item (the app sets its text once it knows)."""
