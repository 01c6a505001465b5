"""A grant and an `allow` pattern see the words bash sees, through the real daemon and real
bubblewrap (docs/security.md, "Approvals"): with `./gradlew build` allowed for the conversation
outside the sandbox, `./gradlew<VT>build` — one word to bash, so another program, which the
agent just wrote — asks, and cannot be granted (the prompt says why)."""

from __future__ import annotations

import os
from typing import Any

from openvaala_server.client import Client
from tests.e2e.test_grant_scope_e2e import _config, _outside
from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import Note, collect_until, new_conversation, turn_ended

VT = "\x0b"


async def _asked(client: Client) -> Note:
    """The next question; the turn ending first means the call ran unasked."""
    asked = ("approval/requested", "turn/ended")
    note = (await collect_until(client, lambda n: n["method"] in asked))[-1]
    assert note["method"] == "approval/requested", "the call ran without asking"
    params: Note = note["params"]
    return params


async def test_a_grant_does_not_cover_a_vertical_tab_for_a_space(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    d: Daemon = daemon_factory(config=_config(fake_openai))
    marker = d.home.parent / "pwned"  # outside the workspace: only an unsandboxed call writes it
    gradlew = d.workdir / "gradlew"
    gradlew.write_text("#!/bin/sh\necho building\n")
    os.chmod(gradlew, 0o755)
    evil = f"./gradlew{VT}build"
    fake_openai.enqueue(
        _outside("./gradlew build"),
        # Inside the workspace, so the sandbox lets it be written and made executable.
        Reply().tool_call(
            "write_file", {"path": f"gradlew{VT}build", "content": f"#!/bin/sh\ntouch {marker}\n"}
        ),
        Reply().tool_call("shell", {"command": "chmod +x gradlew*"}),
        _outside(evil),
        Reply().text("done"),
    )
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        first = await _asked(client)
        assert first["arguments"]["command"] == "./gradlew build"
        await client.respond_approval(cid, first["approvalId"], "allow_conversation")
        second = await _asked(client)
        assert second["arguments"]["command"] == evil
        assert second["grantScope"] is None and "printable ASCII" in second["noGrantReason"]
        await client.respond_approval(cid, second["approvalId"], "deny")
        await collect_until(client, turn_ended())
    finally:
        await client.close()
    assert not marker.exists(), "another program ran outside the sandbox, unasked"


async def test_an_allow_pattern_does_not_match_a_vertical_tab(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    always = (
        '\n[agents.default]\ndescription = "test"\nmodel = "fake"\napproval = "always"\n'
        'allow = ["./gradlew build"]\n'
    )
    d: Daemon = daemon_factory(config=fake_openai.config_toml("fake") + always)
    marker = d.workdir / "ran"
    (d.workdir / f"gradlew{VT}build").write_text(f"#!/bin/sh\ntouch {marker}\n")
    os.chmod(d.workdir / f"gradlew{VT}build", 0o755)
    command = f"./gradlew{VT}build"
    fake_openai.enqueue(Reply().tool_call("shell", {"command": command}), Reply().text("done"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        asked = await _asked(client)
        assert asked["arguments"]["command"] == command
        await client.respond_approval(cid, asked["approvalId"], "deny")
        await collect_until(client, turn_ended())
    finally:
        await client.close()
    assert not marker.exists()
