"""At the wire: a session's requests, assembled from what it appended since its last call
(models/assembly.py), carry exactly the body a provider that assembles everything afresh sends —
in all three wire formats, through tool calls, an interrupted call, reasoning of both kinds,
a compaction summary and a history read back from disk."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, cast

from openvaala_server.domain.records import Item
from openvaala_server.models.anthropic import AnthropicProvider
from openvaala_server.models.base import ModelRequest
from openvaala_server.models.openai_chat import OpenAIChatProvider
from openvaala_server.models.openai_responses import OpenAIResponsesProvider
from openvaala_server.runtime.contexts import ContextMemo
from tests.fakes import FakeProvider, Reply
from tests.server.models.test_wire_cache import (
    TOOLS,
    history_of,
    item,
    steps,
    uncached,
    user,
)

Provider = OpenAIChatProvider | AnthropicProvider | OpenAIResponsesProvider


class Session:
    """Stands for a runtime session: the owner of the provider's prefix."""


async def sent(provider: Provider, fake: FakeProvider, request: ModelRequest) -> Any:
    fake.enqueue(Reply().text("ok"))
    [e async for e in provider.stream(request)]
    return fake.last_request.json


async def run_session(provider: Provider, fake: FakeProvider) -> None:
    fresh = type(provider)
    session, memo, history = Session(), ContextMemo(), list[Item]()

    async def check() -> None:
        request = ModelRequest(provider.config, "SYS", memo.context(history, ()), TOOLS)
        body = await sent(provider, fake, replace(request, owner=session))
        assert body == await sent(fresh(provider.config), fake, request)
        # And the plain conversion, without any cache, encoded as the wire encodes it.
        assert history_of(body) == json.loads(json.dumps(uncached(provider, request)))

    for added in steps():
        history.extend(added)
        await check()
    history.append(item("summary", text="so far", coversUpTo=history[-3]["itemId"]))
    await check()
    history.extend([user("after the summary"), item("agent_message", text="ok"), user("more")])
    await check()
    history = [cast(Item, dict(i)) for i in history]  # read back from disk: other objects
    history.append(user("after reading it back"))
    await check()


async def test_chat_bodies_at_the_wire(fake_openai: FakeProvider) -> None:
    await run_session(OpenAIChatProvider(fake_openai.model_config()), fake_openai)


async def test_responses_bodies_at_the_wire(fake_responses: FakeProvider) -> None:
    await run_session(OpenAIResponsesProvider(fake_responses.model_config()), fake_responses)
    config = fake_responses.model_config(reasoning_context="all_turns")
    await run_session(OpenAIResponsesProvider(config), fake_responses)


async def test_anthropic_bodies_at_the_wire(fake_anthropic: FakeProvider) -> None:
    await run_session(AnthropicProvider(fake_anthropic.model_config()), fake_anthropic)
