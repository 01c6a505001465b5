"""A command the editor's terminal ran and a signal killed is answered with a negative
`exitCode` (how a POSIX process killed by signal N is reported: docs/protocol.md, "Files held by
an editor"); the daemon accepts it and the model reads which signal killed the command. Real
daemon over the real websocket; the model is faked at the wire."""

from __future__ import annotations

from collections.abc import Callable

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import collect_until, completed_items, new_conversation, turn_ended

Factory = Callable[..., Daemon]


async def test_a_command_killed_by_a_signal_reports_a_negative_exit_code(
    daemon_factory: Factory, fake: FakeProvider
) -> None:
    d = daemon_factory(
        fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    )
    fake.enqueue(Reply().tool_call("shell", {"command": "sleep 100"}), Reply().text("killed"))
    client = await d.client()
    try:
        cid = await new_conversation(client, str(d.workdir))
        await client.request(
            "conversation/setPermissionMode", {"conversationId": cid, "mode": "auto-edit"}
        )
        await client.request("files/host", {"conversationId": cid, "terminal": True})
        await client.request("input/send", {"conversationId": cid, "text": "go", "mode": "queue"})
        [asked] = [
            n["params"]
            for n in await collect_until(client, lambda n: n["method"] == "files/requested", 60)
            if n["method"] == "files/requested"
        ]
        assert asked["op"] == "run"
        answer = {"requestId": asked["requestId"], "output": "", "exitCode": -9}
        assert await client.request("files/respond", answer) == {"accepted": True}
        [result] = completed_items(await collect_until(client, turn_ended(), 60), "tool_result")
    finally:
        await client.close()
    assert result["isError"] and "exit code: -9 (killed by SIGKILL)" in result["output"]
