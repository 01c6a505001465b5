"""A start ends the turns a crash cut, in every session, before any client opens them: the index
names the conversations that have one (docs/design.md, "Costs that stay flat on real-shaped
data"), so a start need not list every conversation.

The data directory is written as a killed daemon leaves it (turns started, never ended), with
the store's own writer; then a real daemon starts on it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import orjson

from openvaala_server.domain import records as r
from openvaala_server.domain.ids import new_id
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.daemon import Daemon


def item(sid: str, tid: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "itemId": new_id(),
        "type": kind,
        "sessionId": sid,
        "turnId": tid,
        "createdAt": r.utc_now(),
        "status": r.COMPLETED,
        **fields,
    }


async def crashed_conversation(home: Path, cwd: Path, cut_in_subagent: bool) -> tuple[str, str]:
    """A conversation whose root turn completed and then a turn was cut mid-call, in a subagent
    session (the root's last turn stays completed) or in the root session: (its id, the cut
    session's id)."""
    store = await Store.open(DataDir(home))
    try:
        cid, root, child = new_id(), new_id(), new_id()
        await store.create_conversation(
            {
                "conversationId": cid,
                "cwd": str(cwd),
                "agent": "default",
                "model": "demo",
                "title": "cut",
                "titleSource": "user",
                "rootSessionId": root,
                "forkedFrom": None,
                "formatVersion": r.FORMAT_VERSION,
            }
        )
        done, cut = new_id(), new_id()
        cut_sid = child if cut_in_subagent else root
        records: list[dict[str, Any]] = [
            {"type": r.TURN_STARTED, "sessionId": root, "turnId": done},
            {"type": r.TURN_ENDED, "sessionId": root, "turnId": done, "status": "completed"},
            {
                "type": r.SESSION_CREATED,
                "sessionId": child,
                "parentSessionId": root,
                "agent": "default",
                "model": "demo",
                "title": "helper",
            },
            {"type": r.TURN_STARTED, "sessionId": cut_sid, "turnId": cut},
        ]
        await store.append_metadata(cid, records)
        await store.append_items(
            cid,
            root,
            cast(
                "list[r.Item]",
                [
                    item(root, done, r.USER_MESSAGE, text="hello", origin="user"),
                    item(root, done, r.AGENT_MESSAGE, text="hi"),
                ],
            ),
        )
        call = item(cut_sid, cut, r.TOOL_CALL, callId="c1", name="shell", arguments={})
        await store.append_items(cid, cut_sid, cast("list[r.Item]", [call]))
    finally:
        await store.close()
    return cid, cut_sid


def on_disk(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def test_a_start_ends_cut_turns_in_subagent_and_root_sessions(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(start=False)
    cases = [
        await crashed_conversation(daemon.home, daemon.workdir, cut_in_subagent=flag)
        for flag in (True, False)
    ]
    daemon.start()  # healthy once the start's recovery has run
    for cid, sid in cases:
        ended = [
            rec
            for rec in on_disk(daemon.data_dir.metadata_file(cid))
            if rec["type"] == r.TURN_ENDED and rec["status"] != "completed"
        ]
        assert [(rec["status"], rec["error"]["kind"]) for rec in ended] == [
            ("interrupted", "server_stopped")
        ]
        results = [
            rec["item"]
            for rec in on_disk(daemon.data_dir.session_file(cid, sid))
            if rec["item"]["type"] == r.TOOL_RESULT
        ]
        assert [(i["callId"], i["status"]) for i in results] == [("c1", r.INTERRUPTED)]
