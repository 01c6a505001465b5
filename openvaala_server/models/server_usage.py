"""Usage from the server when its stream reported none (docs/configuration.md, "Usage").

Every Chat Completions request asks for usage (`stream_options.include_usage`), which OpenAI,
vLLM, current llama.cpp and Ollama answer with a last chunk. A server that still says nothing
leaves the context meter on an estimate, which for a local model may be far from what the server
evaluated. llama.cpp can be asked after the fact: ``POST /apply-template`` renders the request's
messages with the model's own chat template, ``POST /tokenize`` counts the tokens of that prompt
and of the reply. A server without these endpoints is not asked again (`Counter.unsupported`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openvaala_server.models.base import UsageReported
from openvaala_server.models.http_client import KeptClient

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

# Counting must never hold a turn up for long: a local server answers in milliseconds.
COUNT_TIMEOUT = 5.0  # seconds, every phase (httpx's `timeout=`)


@dataclass
class Counter:
    """Counts a request's tokens with a llama.cpp server's tokenizer, when the server has one."""

    root: str  # the server's address without /v1
    unsupported: bool = False  # a server that lacks the endpoints is asked once, not at every call

    async def count(
        self,
        client: KeptClient,
        headers: Mapping[str, str],
        body: Mapping[str, object],
        reply: str,
    ) -> UsageReported | None:
        """The usage of the call whose request was `body` and whose reply text was `reply`."""
        if self.unsupported:
            return None
        request = {key: body[key] for key in ("messages", "tools") if key in body}
        import httpx  # loaded: the call being counted used it

        try:
            async with client.use() as http:
                prompt = await self._post(http, headers, "/apply-template", request)
                rendered = prompt.get("prompt") if isinstance(prompt, dict) else None
                if not isinstance(rendered, str):
                    raise ValueError("no prompt")
                input_tokens = await self._tokens(http, headers, rendered)
                output_tokens = await self._tokens(http, headers, reply) if reply else 0
        except (httpx.HTTPStatusError, ValueError):
            self.unsupported = True  # not a llama.cpp server (or an old one): do not ask again
            return None
        except httpx.HTTPError as exc:
            log.info("counting tokens at %s failed: %s", self.root, type(exc).__name__)
            return None
        return UsageReported(input_tokens=input_tokens, output_tokens=output_tokens)

    async def _post(
        self, http: httpx.AsyncClient, headers: Mapping[str, str], path: str, body: object
    ) -> object:
        response = await http.post(
            f"{self.root}{path}", json=body, headers=dict(headers), timeout=COUNT_TIMEOUT
        )
        response.raise_for_status()
        return response.json()

    async def _tokens(self, http: httpx.AsyncClient, headers: Mapping[str, str], text: str) -> int:
        # No special tokens: the rendered template already holds them.
        answer = await self._post(
            http, headers, "/tokenize", {"content": text, "add_special": False}
        )
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list):
            raise ValueError("no tokens")
        return len(tokens)
