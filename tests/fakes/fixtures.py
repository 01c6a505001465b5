"""Pytest fixtures for the fake provider. Enable with `pytest_plugins = ["tests.fakes.fixtures"]`.

Each fixture yields a started `FakeProvider` (one server per test, stopped afterwards) whose
`model_config()` defaults to its wire format, with the API key already in the environment:

    async def test_hello(fake_anthropic):
        fake_anthropic.enqueue(Reply().text("Hi"))
        provider = AnthropicProvider(fake_anthropic.model_config())

For a daemon in another process: write `fake.config_toml("fake")` into its config.toml and start
it with `env={**os.environ, **fake.env}`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.wire import ANTHROPIC, CHAT, RESPONSES


def _serve(wire: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    fake = FakeProvider(wire=wire).start()
    if fake.api_key:
        monkeypatch.setenv(API_KEY_ENV, fake.api_key)
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """Fake for `provider = "openai"` (Chat Completions)."""
    yield from _serve(CHAT, monkeypatch)


@pytest.fixture
def fake_responses(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """Fake for `provider = "openai_responses"`."""
    yield from _serve(RESPONSES, monkeypatch)


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """Fake for `provider = "anthropic"`."""
    yield from _serve(ANTHROPIC, monkeypatch)


@pytest.fixture(params=[CHAT, RESPONSES, ANTHROPIC])
def fake_provider(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeProvider]:
    """Parametrized over all three wire formats: a test using it runs once per format."""
    yield from _serve(request.param, monkeypatch)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """The Chat Completions fake most daemon tests script: a daemon's config names it with
    `fake.config_toml("fake")`, and its key is in the environment the daemon inherits."""
    with FakeProvider(wire=CHAT) as fake:
        for key, value in fake.env.items():
            monkeypatch.setenv(key, value)
        yield fake
