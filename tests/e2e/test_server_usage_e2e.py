"""Usage that matches the server, through the real daemon (docs/configuration.md, "Usage"):
a Chat Completions server is asked for usage and its answer is what the meter shows; a llama.cpp
server whose stream reports none is asked to count the request with its own template and
tokenizer; and a reasoning model's thinking, which Chat Completions never sends back, does not
fill the meter of a server that cannot count."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from openvaala_server.client import Client
from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn, snapshot_of
from tests.support.running import running_daemon

Setup = tuple[FakeProvider, FakeProvider, Daemon]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    # `llama` counts tokens when asked; `plain` cannot (404 for both endpoints).
    with FakeProvider(api_key=None) as llama, FakeProvider(api_key=None) as plain:
        llama.json_routes[("POST", "/apply-template")] = shapes.llamacpp_template
        llama.json_routes[("POST", "/tokenize")] = shapes.llamacpp_tokenize
        config = (
            llama.config_toml("llama", context_window=32_000)
            + plain.config_toml("plain", context_window=32_000)
            + '[agents.default]\nmodel = "llama"\ninstructions = "Be brief."\n'
        )
        with running_daemon(tmp_path_factory.mktemp("usage"), config, {}) as d:
            yield llama, plain, d


@pytest.fixture
async def client(setup: Setup) -> AsyncIterator[Client]:
    llama, plain, d = setup
    llama.reset()
    plain.reset()
    c = await d.client()
    yield c
    await c.close()


async def usage_after_turn(client: Client, d: Daemon, model: str) -> dict[str, Any]:
    cid = await new_conversation(client, str(d.workdir), model=model)
    notes = await run_turn(client, cid, "count me please")
    assert notes[-1]["params"]["status"] == "completed"
    await client.unsubscribe(cid)
    snapshot: Any = await snapshot_of(client, cid)
    usage: dict[str, Any] = snapshot["sessions"][0]["usage"]
    return usage


async def test_a_server_asked_for_usage_is_believed(setup: Setup, client: Client) -> None:
    llama, _, d = setup
    llama.enqueue(Reply().text("four words of reply").usage(321, 9))
    usage = await usage_after_turn(client, d, "llama")
    chat = next(r for r in llama.requests if r.wire == "openai")
    assert chat.json["stream_options"] == {"include_usage": True}  # asked
    assert (usage["source"], usage["used"]) == ("reported", 330)
    assert [r.path for r in llama.requests] == [chat.path]  # nothing else asked


async def test_a_llamacpp_server_that_reports_nothing_counts_the_request(
    setup: Setup, client: Client
) -> None:
    llama, _, d = setup
    llama.enqueue(Reply().text("four words of reply").without_usage())
    usage = await usage_after_turn(client, d, "llama")
    chat = next(r for r in llama.requests if r.wire == "openai")
    template = next(r for r in llama.requests if r.path == "/apply-template")
    assert template.json["messages"] == chat.json["messages"]  # what the request carried
    prompt = shapes.llamacpp_template(chat.json)["prompt"]
    assert usage["source"] == "reported"
    assert usage["used"] == shapes.words(prompt) + shapes.words("four words of reply")


async def test_reasoning_never_sent_back_is_not_counted(setup: Setup, client: Client) -> None:
    _, plain, d = setup
    plain.enqueue(Reply().text("ok").without_usage())
    without = await usage_after_turn(client, d, "plain")
    thinking = "hmm " * 10_000  # ~10,000 tokens of thought, which Chat never sends back
    plain.enqueue(Reply().reasoning(thinking).text("ok").without_usage())
    usage = await usage_after_turn(client, d, "plain")
    assert usage["source"] == without["source"] == "estimated"
    assert usage["used"] == without["used"]  # the same next request
    # The server lacks the endpoints: it was asked once, and not again.
    assert [r.path for r in plain.requests if r.wire is None] == ["/apply-template"]
