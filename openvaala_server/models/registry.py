"""Which provider class serves a configured model: the one in its catalog entry
(domain/catalog.py), imported when a model first needs it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from openvaala_server.config import ModelConfig
from openvaala_server.domain import catalog
from openvaala_server.models.base import Provider


def provider_class(name: str) -> Callable[[ModelConfig], Provider]:
    kind = catalog.BY_NAME.get(name)
    if kind is None:
        raise ValueError(f"unknown provider {name!r}")
    module, _, cls = kind.provider_class.partition(":")
    return cast("Callable[[ModelConfig], Provider]", getattr(importlib.import_module(module), cls))


def make_provider(config: ModelConfig) -> Provider:
    return provider_class(config.provider)(config)
