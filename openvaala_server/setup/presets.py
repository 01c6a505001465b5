"""The providers `openvaala setup` offers, and what each needs. Pure data."""

from __future__ import annotations

from typing import Final, NamedTuple


class Preset(NamedTuple):  # a NamedTuple: see `discovery.LockInfo` (`setup`'s choices)
    key: str  # what `--provider` takes
    title: str  # what the menu shows
    provider: str  # the `provider` of the model's table
    base_url: str | None  # the default address; None: the user must give one
    key_env: str | None  # the environment variable such keys usually live in
    needs_key: bool  # False: a key is optional (most local servers take none)


PRESETS: Final = (
    Preset("openai", "OpenAI", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY", True),
    Preset(
        "anthropic",
        "Anthropic",
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
        True,
    ),
    Preset(
        "compatible",
        "An OpenAI-compatible server (vLLM, llama.cpp, LM Studio, a proxy...) at a URL",
        "openai",
        None,
        None,
        False,
    ),
    Preset("ollama", "Ollama on this machine", "openai", "http://localhost:11434/v1", None, False),
)
BY_KEY: Final = {preset.key: preset for preset in PRESETS}
