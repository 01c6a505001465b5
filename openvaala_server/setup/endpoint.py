"""What `openvaala setup` asks the provider: its models (the key is checked on the way), and one
test turn through the real provider class with the configuration as written."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from openvaala_server.config import ModelConfig
from openvaala_server.domain.records import USER_MESSAGE
from openvaala_server.models import http
from openvaala_server.models.base import ModelError, ModelRequest, TextDelta
from openvaala_server.models.connect_errors import connect_mistake
from openvaala_server.models.registry import make_provider

TIMEOUT = httpx.Timeout(15.0)
ANTHROPIC_VERSION = "2023-06-01"
TEST_PROMPT = "This is a connection test. Reply with the single word: ready"


@dataclass(frozen=True)
class Failure(Exception):
    """The provider said no, or nobody answered; `message` says what to fix."""

    message: str


class Unreachable(Failure):
    """Nobody answered at the address (refused, unknown host, TLS): the address is what to fix."""


class KeyRefused(Failure):
    """The provider answered 401/403: the key is what to fix."""


def _label(config: ModelConfig) -> str:
    return f"the server at {http.host_label(config.base_url or '')}"


async def list_models(config: ModelConfig, key: str | None) -> list[str]:
    """The model ids the provider of `config` lists (`GET /models`), sorted."""
    endpoint = http.Endpoint(_label(config), config, key)
    base = (config.base_url or "").rstrip("/")
    headers: dict[str, str] = {}
    if config.provider == "anthropic":
        url = f"{base}/v1/models"
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
    else:
        url = f"{base}/models"
        if key:
            headers["Authorization"] = f"Bearer {key}"
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            response = await client.get(url, headers=headers)
    except httpx.TransportError as exc:
        what = connect_mistake(exc) or f"{type(exc).__name__} (no answer)"
        raise Unreachable(f"cannot reach {url}: {what}") from None
    status = response.status_code
    if status >= 400:
        _, _, detail = http.error_details(_json(response))
        detail = endpoint.redact(detail or response.text.strip()[:200])
        said = f"{url} answered {status} {httpx.codes.get_reason_phrase(status)}"
        refused = status in (401, 403)
        if refused:
            said += ": the key was refused"
        said = f"{said}: {detail}" if detail else said
        raise KeyRefused(said) if refused else Failure(said)
    body = _json(response)
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise Failure(f"{endpoint.label} did not answer GET {url} with a list of models")
    return sorted(str(m["id"]) for m in data if isinstance(m, dict) and "id" in m)


def _json(response: httpx.Response) -> object:
    try:
        return response.json()
    except ValueError:
        return None


async def test_turn(config: ModelConfig) -> str:
    """One model call with `config` (as loaded from the written file); the reply's text."""
    provider = make_provider(config)
    request = ModelRequest(
        model=config,
        instructions="",
        items=[{"type": USER_MESSAGE, "text": TEST_PROMPT}],
    )
    parts: list[str] = []
    try:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                parts.append(event.text)
    except ModelError as exc:
        raise Failure(exc.message) from None
    finally:
        await provider.aclose()
    return "".join(parts).strip()
