"""The built-in base prompt (docs/configuration.md, "Base prompt"): plain text files shipped
with the package, reviewed like code.

The prompt is `base.md`, written for this daemon's tools and behaviour, followed by the notes
of the model's family (`openai.md`, `anthropic.md`, else `default.md`), chosen from the
model's provider and name by `family_of`. `init.md` is the request `/init` sends in every client
(`conversation/init`). The files are read once, when first used.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Final, Literal

Family = Literal["openai", "anthropic", "default"]
FAMILIES: Final[tuple[Family, ...]] = ("openai", "anthropic", "default")

# OpenAI's reasoning models, by the names they are served under (a proxy may add a prefix).
_OPENAI_REASONING = re.compile(r"(^|[/:])(gpt-5|o\d|codex)", re.IGNORECASE)
_CLAUDE = re.compile(r"claude", re.IGNORECASE)


def family_of(provider: str, model: str) -> Family:
    """The family whose notes follow the base prompt. By provider first; an OpenAI-compatible
    endpoint (a proxy, a router) is told apart by the model's name."""
    if provider == "anthropic" or _CLAUDE.search(model):
        return "anthropic"
    if provider == "openai_responses" or _OPENAI_REASONING.search(model):
        return "openai"
    return "default"


@cache
def _read(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8").strip()


@cache
def base_prompt(family: Family) -> str:
    """The whole built-in prompt for `family`."""
    return _read("base.md") + "\n\n" + _read(f"{family}.md")


def init_request() -> str:
    """What `/init` asks the agent: write or improve the repository's AGENTS.md."""
    return _read("init.md")
