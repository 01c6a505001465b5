"""A local server's window, through the real daemon: a model table with no `context_window`
served by a (fake) Ollama gets the window Ollama tells, `models/list` says where it came from,
the conversation's usage counts against it, and every request asks Ollama for that window."""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes import local_servers as shapes
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import (
    collect_until,
    method_is,
    new_conversation,
    run_turn,
    snapshot_of,
)


def ollama_table(fake: FakeProvider) -> str:
    return (
        "[models.local]\n"
        'provider = "openai"\n'
        'model = "qwen3:8b"\n'
        f'base_url = "{fake.base_url()}"\n'
        "ollama = true\n\n"
    )


async def test_an_ollama_models_window_comes_from_the_server(
    daemon_factory: Callable[..., Daemon],
) -> None:
    with FakeProvider(api_key=None) as fake:
        fake.json_routes[("POST", "/api/show")] = shapes.ollama_show(40_960)
        d = daemon_factory(config=ollama_table(fake) + '[agents.default]\nmodel = "local"\n')
        client = await d.client()
        try:
            models = (await client.request("models/list", {}))["models"]
            local = next(m for m in models if m["name"] == "local")
            assert local["contextWindow"] == 40_960
            assert local["contextWindowSource"] == (
                f"server: Ollama /api/show at 127.0.0.1:{fake.port}"
            )

            cid = await new_conversation(client, str(d.workdir))
            fake.enqueue(Reply().text("hello"))
            await run_turn(client, cid, "hi")
            chat = [r for r in fake.requests if r.wire is not None]
            assert chat[0].json["options"] == {"num_ctx": 40_960}
            usage = (await snapshot_of(client, cid))["sessions"][0]["usage"]
            assert usage["contextWindow"] == 40_960
            context = await client.request("conversation/context", {"conversationId": cid})
            assert context["windowSource"] == local["contextWindowSource"]
        finally:
            await client.close()


async def test_a_model_added_by_a_reload_gets_its_window_from_the_server(
    daemon_factory: Callable[..., Daemon],
) -> None:
    with FakeProvider(api_key=None) as fake:
        fake.json_routes[("POST", "/api/show")] = shapes.ollama_show(65_536, num_ctx=12_288)
        d = daemon_factory()
        client = await d.client()
        try:
            d.config_path.write_text(d.config_path.read_text() + "\n" + ollama_table(fake))
            await collect_until(client, method_is("config/reloaded"))
            models = (await client.request("models/list", {}))["models"]
            local = next(m for m in models if m["name"] == "local")
            assert (local["contextWindow"], local["contextWindowSource"]) == (
                12_288,
                f"server: Ollama /api/show at 127.0.0.1:{fake.port}",
            )
        finally:
            await client.close()
