"""Models without hand-written limits: the catalog of well-known models fills in a model's
window, output limit and vision (domain/catalog.py); the table's own values always win."""

from __future__ import annotations

import pytest

from openvaala_server.config import ConfigError, ModelConfig, parse_config
from openvaala_server.domain import catalog


def model_of(table: dict[str, object]) -> ModelConfig:
    return parse_config({"models": {"m": table}}).models["m"]


@pytest.mark.parametrize(
    ("provider", "model", "entry"),
    [
        ("openai", "gpt-4o", "gpt-4o"),
        ("openai", "gpt-4o-2024-08-06", "gpt-4o"),
        ("openai_responses", "gpt-4o-mini", "gpt-4o-mini"),
        ("openai", "gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic", "claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
    ],
)
def test_a_known_model_is_found_by_its_id_or_a_release_of_it(
    provider: str, model: str, entry: str
) -> None:
    assert catalog.known_model(provider, model) == catalog.KNOWN_MODELS[entry][1]


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-4o-turbo-preview-x"),  # not a release suffix
        ("openai", "llama3.1:8b"),
        ("anthropic", "gpt-4o"),  # another provider's model
        ("openai", "claude-sonnet-4"),
    ],
)
def test_a_model_the_catalog_lacks_is_not_guessed(provider: str, model: str) -> None:
    assert catalog.known_model(provider, model) is None


def test_a_known_model_needs_no_limits_in_its_table() -> None:
    m = model_of({"provider": "anthropic", "model": "claude-sonnet-4-20250514"})
    assert (m.context_window, m.max_output_tokens) == (200_000, 32_000)  # output capped
    assert m.vision and m.reasoning
    assert m.window_source == "catalog"


def test_an_explicit_value_wins_over_the_catalog() -> None:
    m = model_of(
        {
            "provider": "openai",
            "model": "gpt-4o",
            "context_window": 50_000,
            "max_output_tokens": 2_000,
            "vision": False,
        }
    )
    assert (m.context_window, m.max_output_tokens, m.vision) == (50_000, 2_000, False)
    assert m.window_source == "config"


def test_an_unknown_hosted_model_without_a_window_is_an_error_naming_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        model_of({"provider": "openai", "model": "my-fine-tune"})
    assert err.value.key == "models.m.context_window"
    assert "not in the catalog" in err.value.problem


def test_a_local_servers_model_waits_for_the_daemon_to_ask_its_window() -> None:
    m = model_of(
        {"provider": "openai", "model": "llama3.1:8b", "base_url": "http://127.0.0.1:1/v1"}
    )
    assert m.window_source == "pending"
