"""The model providers of the configured models: which model and agent a name means, and one
provider per model, kept while its configuration holds (docs/design.md "Runtime split by
responsibility")."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from openvaala_server import errors
from openvaala_server.config import Config, ModelConfig
from openvaala_server.models.base import Provider

log = logging.getLogger(__name__)


def model_config(config: Config, name: str) -> ModelConfig:
    """The configuration of model `name`; a missing one is `model_missing`."""
    model = config.models.get(name)
    if model is None:
        raise errors.ModelMissing(
            # Also the text of a turn's failure notice, which every client shows as it is:
            # no protocol method names (the kind and `available` say it to a program).
            f"model {name!r} is not configured on this machine: choose another model for "
            f"this conversation (available: {', '.join(config.models)})",
            model=name,
            available=list(config.models),
        )
    return model


def require_agent(config: Config, name: str) -> None:
    """An agent the conversation names but this machine lacks (after a move or a config
    edit) is refused like a missing model: running it would mean no prompt and no tools."""
    if name not in config.agents:
        raise errors.AgentMissing(
            f"agent {name!r} is not configured on this machine: choose another agent for "
            f"this conversation (available: {', '.join(config.agents)})",
            agent=name,
            available=list(config.agents),
        )


class ProviderPool:
    """One provider per model name, with the configuration each was made from (a reload may
    change it)."""

    def __init__(self, make: Callable[[ModelConfig], Provider]) -> None:
        # What makes a configured model's provider: the registry; unit tests pass a scripted one.
        self._make = make
        self._kept: dict[str, tuple[ModelConfig, Provider]] = {}

    def get(self, name: str, model: ModelConfig, current: ModelConfig | None) -> Provider:
        """The provider of `model` (named `name`); `current` is that name's model in the
        configuration in force, the only one whose provider is kept."""
        cached = self._kept.get(name)
        if cached is not None and cached[0] == model:
            return cached[1]
        provider = self._make(model)
        if model == current:
            self._kept[name] = (model, provider)
            if cached is not None:  # made from an older config: its connections go
                cached[1].retire()
        else:  # a running turn's older model: not kept, its connection closes after this call
            provider.retire()
        return provider

    def kept(self) -> list[Provider]:
        return [provider for _, provider in self._kept.values()]

    def retire_stale(self, config: Config) -> None:
        """Providers whose model changed or went away in `config` release their connections
        (once the turns still streaming from them are done)."""
        for name, (model, provider) in list(self._kept.items()):
            if config.models.get(name) != model:
                del self._kept[name]
                provider.retire()

    async def aclose(self) -> None:
        """Close every kept provider's connections (the daemon stops)."""
        providers = self.kept()
        self._kept.clear()
        await asyncio.gather(*(provider.aclose() for provider in providers))
        log.info("closed the connections of %d model providers", len(providers))
