"""The provider catalog (domain/catalog.py) is the one list of providers: the configuration
accepts exactly its names and options, and the registry makes each one's class from it."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

from openvaala_server import config as cfg
from openvaala_server.domain import catalog
from openvaala_server.models.registry import make_provider, provider_class


def test_the_configuration_takes_its_providers_and_options_from_the_catalog() -> None:
    assert cfg.PROVIDERS == catalog.NAMES == ("openai", "openai_responses", "anthropic", "demo")
    for kind in catalog.KINDS:
        assert set(cfg.PROVIDER_OPTIONS[kind.name]) == set(kind.options or {})


@pytest.mark.parametrize("name", catalog.NAMES)
def test_each_provider_class_is_made_from_its_entry(name: str) -> None:
    made = provider_class(name)
    assert inspect.isclass(made)
    assert all(callable(getattr(made, m, None)) for m in ("stream", "retire", "aclose"))
    model = dataclasses.replace(
        cfg.DEMO_MODEL, provider=name, base_url="http://127.0.0.1:9", api_key_env=None
    )
    provider = make_provider(model)
    assert type(provider) is made
    provider.retire()


def test_an_unknown_provider_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'nope'"):
        provider_class("nope")


@pytest.mark.parametrize("kind", catalog.KINDS, ids=lambda k: k.name)
def test_every_option_a_provider_reads_is_declared_in_its_entry(kind: catalog.ProviderKind) -> None:
    """A provider reading an option its entry lacks would see it refused as a typo."""
    module, _, _ = kind.provider_class.partition(":")
    modules = [module]
    if kind.name != "demo":  # the HTTP providers read their transport options in models/http.py
        modules.append("openvaala_server.models.http")
    sources = [Path(importlib.import_module(m).__file__ or "") for m in modules]
    read = {
        m.group(1)
        for path in sources
        for m in re.finditer(r'options\.get\(\s*"(\w+)"', path.read_text(encoding="utf-8"))
    }
    assert read <= set(kind.options or {}), read - set(kind.options or {})
