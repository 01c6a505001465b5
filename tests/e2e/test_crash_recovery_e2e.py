"""After a crash nothing looks pending forever: `kill -9` during a `shell` call, then reopen.

The tool call gets an interrupted result saying the server stopped, and a `server_stopped` notice
in the history tells every client (and the model, next turn) why the turn ended.
"""

from __future__ import annotations

from tests.support.daemon import Daemon
from tests.support.events import collect_until, new_conversation, snapshot_of, tool_started


async def _kill_during_shell(daemon: Daemon) -> str:
    client = await daemon.client(reconnect=False)
    cid = await new_conversation(client, str(daemon.workdir))
    await client.request(
        "input/send", {"conversationId": cid, "text": "run: sleep 30", "mode": "queue"}
    )
    await collect_until(client, tool_started)
    assert daemon.process is not None
    daemon.process.kill()
    await client.close()
    daemon.stop()
    daemon.start()
    return cid


async def test_a_shell_call_cut_by_a_crash_is_interrupted_and_says_why(daemon: Daemon) -> None:
    cid = await _kill_during_shell(daemon)
    client = await daemon.client(reconnect=False)
    try:
        snapshot = await snapshot_of(client, cid)
        [root] = snapshot["sessions"]
        items = root["items"]
        [call] = [i for i in items if i["type"] == "tool_call"]
        results = [i for i in items if i["type"] == "tool_result"]
        assert [(r["callId"], r["status"], r["isError"]) for r in results] == [
            (call["callId"], "interrupted", True)
        ]
        assert "server stopped" in results[0]["output"]
        [notice] = [i for i in items if i["type"] == "notice"]
        assert notice["kind"] == "server_stopped"
        assert notice["turnId"] == call["turnId"]
        assert "server stopped" in notice["text"]
        assert root["status"] == "interrupted"
        assert root["turn"] is None
        # Opening again (another restart) writes nothing twice.
        await client.close()
        daemon.restart()
        client = await daemon.client(reconnect=False)
        page = await client.request("conversation/read", {"conversationId": cid})
        kinds = [(i["type"], i.get("kind")) for i in page["items"]]
        assert kinds.count(("tool_result", None)) == 1
        assert kinds.count(("notice", "server_stopped")) == 1
    finally:
        await client.close()


async def test_the_next_turn_runs_after_recovery(daemon: Daemon) -> None:
    cid = await _kill_during_shell(daemon)
    client = await daemon.client(reconnect=False)
    try:
        await client.subscribe(cid)
        await client.request(
            "input/send", {"conversationId": cid, "text": "hello again", "mode": "queue"}
        )
        notes = await collect_until(client, lambda n: n["method"] == "turn/ended")
        assert notes[-1]["params"]["status"] == "completed"
    finally:
        await client.close()
