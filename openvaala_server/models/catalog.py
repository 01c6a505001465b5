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


_HTTP_FIELDS: Final = ("base_url", "api_key_env")
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
