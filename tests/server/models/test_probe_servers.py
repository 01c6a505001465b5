"""A local server's window, asked of fake Ollama, llama.cpp, vLLM and LM Studio servers over real
HTTP, each answering in its real JSON shape (models/probe.py)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from openvaala_server.config import PENDING_WINDOW, parse_config
from openvaala_server.models.probe import PROBE_TIMEOUT, probe, resolve_windows
from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider

MODEL = "qwen2.5-coder:1.5b"


def pending(fake: FakeProvider, **extra: object) -> dict[str, object]:
    table: dict[str, object] = {"provider": "openai", "model": MODEL, "base_url": fake.base_url()}
    return {**table, **extra}


async def window_of(fake: FakeProvider, **extra: object) -> tuple[int, str]:
    config = await resolve_windows(parse_config({"models": {"local": pending(fake, **extra)}}))
    model = config.models["local"]
    return model.context_window, model.window_source


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    with FakeProvider(api_key=None) as fake:
        yield fake


async def test_ollama_tells_the_models_trained_window(server: FakeProvider) -> None:
    server.json_routes[("POST", "/api/show")] = shapes.ollama_show(131_072)
    window, source = await window_of(server, ollama=True)
    assert window == 131_072
    assert source == f"server: Ollama /api/show at 127.0.0.1:{server.port}"
    assert server.requests[0].json == {"model": MODEL}  # asked first: it is an Ollama server


async def test_ollama_prefers_the_num_ctx_its_modelfile_runs_with(server: FakeProvider) -> None:
    server.json_routes[("POST", "/api/show")] = shapes.ollama_show(131_072, num_ctx=16_384)
    assert (await window_of(server, ollama=True))[0] == 16_384


async def test_llamacpp_tells_its_slots_window(server: FakeProvider) -> None:
    server.json_routes[("GET", "/props")] = shapes.llamacpp_props(4096)
    window, source = await window_of(server)
    assert window == 4096
    assert source.startswith("server: llama.cpp /props at 127.0.0.1:")


async def test_vllm_tells_max_model_len_in_its_listing(server: FakeProvider) -> None:
    server.json_routes[("GET", "/v1/models")] = shapes.vllm_models(MODEL, 32_768)
    window, source = await window_of(server)
    assert window == 32_768
    assert source.startswith("server: vLLM /v1/models")


async def test_lm_studio_tells_max_context_length(server: FakeProvider) -> None:
    server.json_routes[("GET", f"/api/v0/models/{MODEL}")] = shapes.lmstudio_model(MODEL, 65_536)
    window, source = await window_of(server)
    assert window == 65_536
    assert source.startswith("server: LM Studio")


async def test_an_explicit_window_is_never_asked(server: FakeProvider) -> None:
    server.json_routes[("GET", "/props")] = shapes.llamacpp_props(4096)
    assert await window_of(server, context_window=20_000) == (20_000, "config")
    assert server.requests == []


async def test_a_server_that_cannot_tell_leaves_a_default_saying_so(server: FakeProvider) -> None:
    window, source = await window_of(server)  # every way of asking answers 404
    assert window == PENDING_WINDOW
    assert source.startswith("default: the server at 127.0.0.1:")
    assert "set context_window" in source


async def test_a_server_that_is_down_is_asked_once() -> None:
    with FakeProvider(api_key=None) as fake:
        url = fake.base_url()
    config = parse_config(
        {"models": {"local": {"provider": "openai", "model": MODEL, "base_url": url}}}
    )
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
        assert await probe(config.models["local"], client) is None


async def test_a_default_output_limit_never_fills_a_small_window(server: FakeProvider) -> None:
    server.json_routes[("GET", "/props")] = shapes.llamacpp_props(2048)
    config = parse_config({"models": {"local": pending(server)}})
    model = (await resolve_windows(config)).models["local"]
    assert (model.context_window, model.max_output_tokens) == (2048, 512)
