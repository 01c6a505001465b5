"""Which provider class serves a configured model."""

from __future__ import annotations

from openvaala_server.config import ModelConfig
from openvaala_server.models.base import Provider


def make_provider(config: ModelConfig) -> Provider:
    if config.provider == "demo":
        from openvaala_server.models.demo import DemoProvider

        return DemoProvider(config)
    if config.provider == "openai":
        from openvaala_server.models.openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(config)
    if config.provider == "openai_responses":
        from openvaala_server.models.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(config)
    if config.provider == "anthropic":
        from openvaala_server.models.anthropic import AnthropicProvider

        return AnthropicProvider(config)
    raise ValueError(f"unknown provider {config.provider!r}")
