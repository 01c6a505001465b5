"""Asking a local server how large its model's context window is (docs/configuration.md,
"Context window").

A model whose table names no `context_window`, which the catalog does not know and which an
OpenAI-compatible server of the user's serves (`catalog.probed_server`), gets its window from that
server when the daemon loads the configuration. Each kind of server tells it its own way:

- Ollama: ``POST /api/show`` — ``num_ctx`` in ``parameters`` (what its Modelfile runs it with),
  else ``<architecture>.context_length`` in ``model_info`` (what it was trained for);
- llama.cpp: ``GET /props`` — ``default_generation_settings.n_ctx`` (a slot's window);
- vLLM: ``GET /v1/models`` — the model's ``max_model_len``;
- LM Studio: ``GET /api/v0/models/{model}`` — ``loaded_context_length``, else
  ``max_context_length``.

The first answer wins; a server that cannot be reached is asked nothing more. A model no server
told keeps `PENDING_WINDOW`, and its source says so: setting `context_window` fixes it. The parsers
are pure; only `probe` and `resolve_windows` do I/O.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from openvaala_server.config import WINDOW_PENDING, Config, ModelConfig
from openvaala_server.models.base import ModelError
from openvaala_server.models.http import api_key, host_label

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

# A local server answers at once or not at all; the daemon's start waits for these answers.
# Seconds, for every phase (httpx's `timeout=`): a number, so that httpx is imported only when a
# server is asked (docs/design.md, "Start-up imports").
PROBE_TIMEOUT = 3.0
OLLAMA_PORT = 11434


@dataclass(frozen=True)
class Probed:
    context_window: int
    source: str  # "server: Ollama /api/show at localhost:11434"


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def ollama_window(show: object) -> int | None:
    """The window in an Ollama ``/api/show`` answer."""
    if not isinstance(show, dict):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                return _positive(int(value.strip()))
    info = show.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length"):
                return _positive(value)
    return None


def llamacpp_window(props: object) -> int | None:
    """The window in a llama.cpp ``/props`` answer."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return _positive(settings.get("n_ctx"))
    return _positive(props.get("n_ctx"))


def listing_window(listing: object, model: str) -> int | None:
    """The window of `model` in a vLLM ``/v1/models`` answer."""
    data = listing.get("data") if isinstance(listing, dict) else None
    for entry in data if isinstance(data, list) else ():
        if isinstance(entry, dict) and entry.get("id") == model:
            return _positive(entry.get("max_model_len"))
    return None


def lmstudio_window(info: object) -> int | None:
    """The window in an LM Studio ``/api/v0/models/{model}`` answer."""
    if not isinstance(info, dict):
        return None
    return _positive(info.get("loaded_context_length")) or _positive(info.get("max_context_length"))


Ask = Callable[[], Awaitable[int | None]]


async def probe(config: ModelConfig, client: httpx.AsyncClient) -> Probed | None:
    """Ask the server of `config` for its window; None when no way of asking got an answer."""
    import httpx  # loaded: `client` is one

    base = (config.base_url or "").rstrip("/")
    root = base.removesuffix("/v1")
    where = host_label(base)
    headers = {}
    try:
        key = api_key(config, where)
    except ModelError:
        key = None  # the turn will say what is wrong with the key; the window can still be read
    if key:  # vLLM and LM Studio may be started with a key; the probe must not leak it
        headers["Authorization"] = f"Bearer {key}"

    async def get_json(method: str, url: str, body: object = None) -> object:
        response = await client.request(method, url, json=body, headers=headers)
        response.raise_for_status()
        return response.json()

    async def ollama() -> int | None:
        return ollama_window(await get_json("POST", f"{root}/api/show", {"model": config.model}))

    async def llamacpp() -> int | None:
        return llamacpp_window(await get_json("GET", f"{root}/props"))

    async def vllm() -> int | None:
        return listing_window(await get_json("GET", f"{base}/models"), config.model)

    async def lmstudio() -> int | None:
        return lmstudio_window(await get_json("GET", f"{root}/api/v0/models/{config.model}"))

    asks: list[tuple[str, Ask]] = [
        ("llama.cpp /props", llamacpp),
        ("vLLM /v1/models", vllm),
        ("LM Studio /api/v0/models", lmstudio),
        ("Ollama /api/show", ollama),
    ]
    if _is_ollama(config):
        asks.insert(0, asks.pop())
    for label, ask in asks:
        try:
            window = await ask()
        except (httpx.ConnectError, httpx.TimeoutException):
            return None  # nobody there (or not answering): asking again cannot help
        except (httpx.HTTPError, ValueError):
            continue  # not this kind of server
        if window:
            return Probed(window, f"server: {label} at {where}")
    return None


def _is_ollama(config: ModelConfig) -> bool:
    if config.options.get("ollama") is True:
        return True
    import httpx  # loaded: called by `probe`

    try:
        return httpx.URL(config.base_url or "").port == OLLAMA_PORT
    except httpx.InvalidURL:
        return False


def with_window(model: ModelConfig, probed: Probed | None) -> ModelConfig:
    """`model` with the window its server told (or a source saying none did)."""
    if probed is None:
        where = host_label(model.base_url or "")
        source = f"default: the server at {where} did not tell its window (set context_window)"
        log.warning("model %r: %s", model.name, source)
        return replace(model, window_source=source)
    max_out = model.max_output_tokens
    if max_out >= probed.context_window:
        # Room for the conversation: the default output limit must not fill a small window.
        max_out = max(1, probed.context_window // 4)
    return replace(
        model,
        context_window=probed.context_window,
        max_output_tokens=max_out,
        window_source=probed.source,
    )


async def resolve_windows(config: Config) -> Config:
    """`config` with every pending model's window asked of its server (all at once)."""
    pending = [m for m in config.models.values() if m.window_source == WINDOW_PENDING]
    if not pending:
        return config
    import httpx

    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as client:
        found = await asyncio.gather(*(probe(model, client) for model in pending))
    models = dict(config.models)
    for model, probed in zip(pending, found, strict=True):
        models[model.name] = with_window(model, probed)
    return replace(config, models=models)
