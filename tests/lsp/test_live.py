"""The same conversation from the editor and from another client at once, and following a
subagent from the transcript."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Gate, Reply
from tests.lsp.harness import capabilities, command, request, start_lsp, stop_lsp
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation, turn_ended
from tests.support.roles import role as _role


def ended_in(cid: str) -> Callable[[Note], bool]:
    return lambda n: n["method"] == "turn/ended" and n["params"]["conversationId"] == cid


async def test_editor_and_python_client_see_each_other_live(daemon: Daemon) -> None:
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    python = await daemon.client("second")
    try:
        # Driven from the editor, watched from Python.
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        await python.subscribe(cid)
        prompt = asyncio.ensure_future(
            request(client, "openvaala/prompt", {"conversationId": cid, "text": "from the editor"})
        )
        notes = await collect_until(python, turn_ended())
        assert (await prompt)["status"] == "completed"
        deltas = "".join(n["params"]["delta"] for n in notes if n["method"] == "item/delta")
        assert "You said: “from the editor”" in deltas
        users = [
            n["params"]["item"]["text"]
            for n in notes
            if n["method"] == "item/completed" and n["params"]["item"]["type"] == "user_message"
        ]
        assert users == ["from the editor"]

        # Driven from Python, watched from the editor (events, usage, the transcript).
        other = await new_conversation(python, str(daemon.workdir))
        await python.request(
            "input/send", {"conversationId": other, "text": "from python", "mode": "queue"}
        )
        await collect_until(python, turn_ended())  # saved, so the editor can open it
        uri = f"openvaala://conversation/{other}"
        watched = await request(client, "openvaala/subscribe", {"conversationId": other})
        assert watched["uri"] == uri and watched["snapshot"]["conversation"]["title"]
        first = await request(client, "openvaala/render", {"uri": uri})
        assert "from python" in first["text"]
        await python.request(
            "input/send", {"conversationId": other, "text": "and again", "mode": "queue"}
        )
        await rec.until(lambda: "turn/ended" in rec.methods(other))
        streamed = "".join(
            e["params"].get("delta", "") for e in rec.events if e["conversationId"] == other
        )
        assert "You said: “and again”" in streamed
        await rec.until(lambda: uri in rec.fallback_refreshed)
        assert "and again" in (await request(client, "openvaala/render", {"uri": uri}))["text"]
        await rec.until(lambda: any(u["conversationId"] == other for u in rec.usage))

        # Unsubscribed: nothing more is forwarded.
        await request(client, "openvaala/unsubscribe", {"conversationId": cid})
        count = len(rec.methods(cid))
        await python.request(
            "input/send", {"conversationId": cid, "text": "unseen", "mode": "queue"}
        )
        # `python` also follows `other`, whose earlier turn/ended it has not read yet.
        await collect_until(python, ended_in(cid))
        # A barrier, not a pause: the daemon sends to the bridge in order, and the bridge
        # forwards in order, so once the editor has the end of a later turn in `other` (still
        # subscribed), anything it would have got for the "unseen" turn has arrived.
        ended = rec.methods(other).count("turn/ended")
        await python.request(
            "input/send", {"conversationId": other, "text": "barrier", "mode": "queue"}
        )
        await rec.until(lambda: rec.methods(other).count("turn/ended") > ended)
        assert len(rec.methods(cid)) == count
    finally:
        await python.close()
        await stop_lsp(client)


def _subagent_config(fake: FakeProvider) -> str:
    return (
        fake.config_toml("main")
        + '\n[agents.default]\ndescription = "root agent"\nmodel = "main"\n'
        + 'instructions = "ROLE: root"\n'
        + '\n[agents.worker]\ndescription = "Explores code"\ninstructions = "ROLE: worker"\n'
    )


async def test_follow_a_subagent_from_its_code_lens(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    daemon: Daemon = daemon_factory(config=_subagent_config(fake_openai))
    gate = Gate()
    fake_openai.enqueue(
        Reply().tool_call("spawn_agent", {"agent": "worker", "task": "TASK explore src"}),
        Reply().text("spawned a worker"),
        when=lambda q: _role(q) == "root",
    )
    fake_openai.enqueue(
        Reply().wait(gate).text("worker answer"), when=lambda q: _role(q) == "worker"
    )
    fake_openai.default_reply = Reply().text("noted")
    client, rec, _ = await start_lsp(daemon, capabilities("visual-studio-code"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        result = await request(client, "openvaala/prompt", {"conversationId": cid, "text": "go"})
        assert result["status"] == "completed"
        started = await rec.until(
            lambda: [e for e in rec.events if e["method"] == "session/started"]
        )
        child = started[0]["params"]["session"]["sessionId"]
        uri = f"openvaala://conversation/{cid}"
        tree = await request(client, "openvaala/agents", {"conversationId": cid})
        assert [c["sessionId"] for c in tree["sessions"][0]["children"]] == [child]

        await request(client, "openvaala/render", {"uri": uri})
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        follow = [
            lens.command for lens in lenses or [] if lens.command and lens.command.title == "Follow"
        ]
        assert len(follow) == 1 and follow[0] is not None
        followed = await command(client, follow[0].command, *(follow[0].arguments or []))
        child_uri = f"{uri}/session/{child}"
        assert followed == {"uri": child_uri, "shown": True}
        assert client.shown_documents[-1].uri == child_uri
        assert client.shown_documents[-1].take_focus is True

        gate.open()
        await rec.until(
            lambda: any(
                e["method"] == "turn/ended" and e["params"]["sessionId"] == child
                for e in rec.events
            )
        )
        text = (await request(client, "openvaala/render", {"uri": child_uri}))["text"]
        assert "(subagent)" in text and "TASK explore src" in text and "worker answer" in text
    finally:
        await stop_lsp(client)


async def test_daemon_restart_the_bridge_reconnects_and_catches_up(daemon: Daemon) -> None:
    client, rec, _ = await start_lsp(daemon, capabilities("neovim"))
    try:
        new = await request(client, "openvaala/conversations/new", {})
        cid = new["conversation"]["conversationId"]
        await request(client, "openvaala/prompt", {"conversationId": cid, "text": "before"})
        uri = f"openvaala://conversation/{cid}"
        await request(client, "openvaala/render", {"uri": uri})

        daemon.restart()  # a new port and a new token
        # The client's reconnect backoff grows to 5 s between attempts: allow several.
        await rec.until(lambda: rec.connection[-2:] == ["reconnecting", "connected"], timeout=30)
        # The daemon could not replay across the restart: a fresh snapshot was forwarded.
        await rec.until(lambda: "conversation/snapshot" in rec.methods(cid))

        result = await request(client, "openvaala/prompt", {"conversationId": cid, "text": "after"})
        assert result["status"] == "completed"
        text = (await request(client, "openvaala/render", {"uri": uri}))["text"]
        assert text.index("before") < text.index("after")
    finally:
        await stop_lsp(client)
