"""Every provider OpenVaala speaks, in one place (docs/configuration.md, "Models").

For each: the `provider` value a model's table names, the class that streams its calls (imported
when a model first needs it), the `ModelConfig` fields it reads besides provider, model and the
token limits, and the options it reads from `ModelConfig.options` with how each is checked. The
configuration checks a model's table against this (`config.py`), `models/registry.py` makes the
provider from it. A leaf: the configuration imports it, and the providers import the
configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Choice:
    """A string option that must be one of `values`."""

    values: tuple[str, ...]


# How an option's value is checked (config.py reads each kind):
# "string", "boolean", "number"; "positive" (a number above 0); "count" (an integer from 1);
# "headers" (a table of strings); a `Choice`.
OptionKind = Literal["string", "boolean", "number", "positive", "count", "headers"] | Choice


@dataclass(frozen=True)
class ProviderKind:
    name: str
    provider_class: str  # "module:Class", a `models.base.Provider` taking the `ModelConfig`
    fields: tuple[str, ...] = ()
    options: Mapping[str, OptionKind] | None = None


_HTTP_FIELDS: Final = ("base_url", "api_key_env", "api_key_file")
_HTTP_OPTIONS: Final[Mapping[str, OptionKind]] = {
    "headers": "headers",
    "read_timeout_s": "positive",
}

KINDS: Final = (
    ProviderKind(
        "openai",
        "openvaala_server.models.openai_chat:OpenAIChatProvider",
        _HTTP_FIELDS,
        {
            **_HTTP_OPTIONS,
            "max_tokens_field": Choice(("max_tokens", "max_completion_tokens")),
            "reasoning_effort": "string",
            "ollama": "boolean",
            "num_ctx": "count",
        },
    ),
    ProviderKind(
        "openai_responses",
        "openvaala_server.models.openai_responses:OpenAIResponsesProvider",
        (*_HTTP_FIELDS, "reasoning_context"),
        {**_HTTP_OPTIONS, "reasoning_effort": "string", "reasoning_summary": "string"},
    ),
    ProviderKind(
        "anthropic",
        "openvaala_server.models.anthropic:AnthropicProvider",
        _HTTP_FIELDS,
        {**_HTTP_OPTIONS, "thinking_budget_tokens": "count"},
    ),
    ProviderKind("demo", "openvaala_server.models.demo:DemoProvider", (), {"pace_ms": "number"}),
)
BY_NAME: Final = {kind.name: kind for kind in KINDS}
NAMES: Final = tuple(BY_NAME)


# --- Well-known models ----------------------------------------------------------------------


@dataclass(frozen=True)
class KnownModel:
    """What a provider publishes about one of its models (docs/configuration.md, "Catalog")."""

    context_window: int  # tokens in and out together
    max_output_tokens: int  # the most one reply may produce
    vision: bool  # accepts images
    reasoning: bool  # thinks before it answers (reasoning effort / extended thinking)


# Model ids by family, matched exactly or as the start of a dated id ("gpt-4o-2024-08-06",
# "claude-sonnet-4-20250514"): the longest matching id wins, so "gpt-4o-mini" is not "gpt-4o".
# The figures are the providers' published limits.
_OPENAI_WIRES: Final = ("openai", "openai_responses")
_ANTHROPIC: Final = ("anthropic",)
_GPT_4O: Final = KnownModel(128_000, 16_384, vision=True, reasoning=False)
_GPT_41: Final = KnownModel(1_047_576, 32_768, vision=True, reasoning=False)
_O_SERIES: Final = KnownModel(200_000, 100_000, vision=True, reasoning=True)
_GPT_5: Final = KnownModel(400_000, 128_000, vision=True, reasoning=True)
_CLAUDE_35: Final = KnownModel(200_000, 8_192, vision=True, reasoning=False)
_CLAUDE_OPUS_4: Final = KnownModel(200_000, 32_000, vision=True, reasoning=True)
_CLAUDE_64K: Final = KnownModel(200_000, 64_000, vision=True, reasoning=True)
KNOWN_MODELS: Final[Mapping[str, tuple[tuple[str, ...], KnownModel]]] = {
    **dict.fromkeys(("gpt-4o", "gpt-4o-mini"), (_OPENAI_WIRES, _GPT_4O)),
    **dict.fromkeys(("gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"), (_OPENAI_WIRES, _GPT_41)),
    **dict.fromkeys(("o1", "o3", "o4-mini"), (_OPENAI_WIRES, _O_SERIES)),
    "o3-mini": (_OPENAI_WIRES, KnownModel(200_000, 100_000, vision=False, reasoning=True)),
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex"), (_OPENAI_WIRES, _GPT_5)),
    **dict.fromkeys(("claude-3-5-haiku", "claude-3-5-sonnet"), (_ANTHROPIC, _CLAUDE_35)),
    **dict.fromkeys(("claude-opus-4", "claude-opus-4-1"), (_ANTHROPIC, _CLAUDE_OPUS_4)),
    **dict.fromkeys(
        (
            "claude-3-7-sonnet",
            "claude-sonnet-4",
            "claude-sonnet-4-5",
            "claude-opus-4-5",
            "claude-haiku-4-5",
        ),
        (_ANTHROPIC, _CLAUDE_64K),
    ),
}


def known_model(provider: str, model: str) -> KnownModel | None:
    """The catalog's entry for `model` served by `provider`, or None for a model it lacks."""
    best = ""
    for name, (providers, _) in KNOWN_MODELS.items():
        if provider not in providers or len(name) <= len(best):
            continue
        rest = model.removeprefix(name)
        # Exact, or a dated or aliased release of it: "-2024-08-06", "-20250514", "-latest".
        if rest == "" or (rest != model and rest[0] == "-" and _is_release(rest[1:])):
            best = name
    return KNOWN_MODELS[best][1] if best else None


def _is_release(suffix: str) -> bool:
    return suffix == "latest" or suffix.replace("-", "").isdigit()


def probed_server(provider: str, base_url: str | None) -> bool:
    """Whether a model not in the catalog is served by a server the daemon asks for its window:
    an OpenAI-compatible one of the user's (Ollama, llama.cpp, vLLM, LM Studio...)."""
    if provider not in _OPENAI_WIRES or not base_url:
        return False
    try:
        host = urlsplit(base_url).hostname
    except ValueError:
        return False
    return host is not None and host != "api.openai.com"
