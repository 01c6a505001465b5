"""Files an MCP tool changes are captured like a shell call's (docs/storage.md, Checkpoints):
undo puts them back. The server is a real one (mcp_test_server.py) writing into the working
directory."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, turn_ended
from tests.support.paths import TESTS

SERVER = (TESTS / "server/mcp").joinpath("mcp_test_server.py")
Factory = Callable[..., Daemon]


@pytest.mark.timeout(180)
async def test_undo_restores_files_an_mcp_tool_changed(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(
        fake.config_toml("fake")
        + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\ntools = ["mcp:t"]\n'
        + "\n[mcp_servers.t]\n"
        + f"command = {json.dumps(sys.executable)}\n"
        + f'args = [{json.dumps(str(SERVER))}, "stdio"]\n'
        + "startup_timeout_s = 45\ntrust = true\n"
    )
    work = d.workdir
    (work / "notes.txt").write_text("mine\n")
    client = await d.client()
    try:
        cid = await new_conversation(client, str(work))
        for text, turn in (("changed by the server\n", "one"), ("changed again\n", "two")):
            fake.enqueue(
                Reply().tool_call(
                    "mcp__t__write_text", {"path": str(work / "notes.txt"), "text": text}
                ),
                Reply().tool_call(
                    "mcp__t__write_text", {"path": str(work / f"new-{turn}.txt"), "text": turn}
                ),
                Reply().text("done"),
            )
            await client.request(
                "input/send", {"conversationId": cid, "text": turn, "mode": "queue"}
            )
            await collect_until(client, turn_ended(), 120)
        assert (work / "notes.txt").read_text() == "changed again\n"
        report = await client.request("conversation/checkpoints", {"conversationId": cid})
        assert [sorted(f["path"] for f in t["files"]) for t in report["turns"]] == [
            ["new-one.txt", "notes.txt"],
            ["new-two.txt", "notes.txt"],
        ]
        await client.request("conversation/undo", {"conversationId": cid})
        assert (work / "notes.txt").read_text() == "changed by the server\n"
        assert not (work / "new-two.txt").exists() and (work / "new-one.txt").exists()
        await client.request("conversation/undo", {"conversationId": cid})
        assert (work / "notes.txt").read_text() == "mine\n"
        assert not (work / "new-one.txt").exists()
    finally:
        await client.close()
