"""The conversation tree through the daemon: forks and rewinds know their parent and branch
point, titles tell them apart, `conversation/tree` returns the whole tree from any member."""

from __future__ import annotations

from typing import Any

import pytest

from openvaala_server.client import RpcError
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn


def _walk(node: Any) -> list[Any]:
    return [node, *(n for child in node["children"] for n in _walk(child))]


async def test_tree_of_forks_and_rewinds(daemon: Daemon) -> None:
    client = await daemon.client()
    try:
        cid = await new_conversation(client, str(daemon.workdir), title="Plan")
        await run_turn(client, cid, "first")
        await run_turn(client, cid, "second")
        items = (await client.request("conversation/read", {"conversationId": cid}))["items"]
        first, second = [i for i in items if i["type"] == "user_message"]
        forked = (await client.request("conversation/fork", {"conversationId": cid}))[
            "conversation"
        ]
        rewound = (
            await client.request(
                "conversation/rewind", {"conversationId": cid, "messageId": second["itemId"]}
            )
        )["conversation"]
        assert forked["title"] == "Plan (fork)" and rewound["title"] == "Plan (rewind)"
        # A rewind of the fork: its title says rewind once, its parent is the fork.
        fid = forked["conversationId"]
        await client.subscribe(fid)
        deeper = (
            await client.request(
                "conversation/rewind", {"conversationId": fid, "messageId": first["itemId"]}
            )
        )["conversation"]
        assert deeper["title"] == "Plan (rewind)"
        unrelated = await new_conversation(client, str(daemon.workdir))
        await run_turn(client, unrelated, "elsewhere")

        for asked in (cid, fid, deeper["conversationId"]):
            tree = await client.request("conversation/tree", {"conversationId": asked})
            assert tree["conversationId"] == asked
            root = tree["root"]
            assert root["conversationId"] == cid and root["kind"] == "root", (
                asked,
                root["conversationId"],
                root["title"],
                cid,
                fid,
                deeper["conversationId"],
                rewound["conversationId"],
                unrelated,
            )
            nodes = {n["conversationId"]: n for n in _walk(root)}
            assert set(nodes) == {cid, fid, rewound["conversationId"], deeper["conversationId"]}
        fork_node = nodes[fid]
        assert fork_node["kind"] == "fork" and fork_node["parentId"] == cid
        assert fork_node["branchPoint"] == items[-1]["itemId"]
        rewind_node = nodes[rewound["conversationId"]]
        assert rewind_node["kind"] == "rewind" and rewind_node["branchPoint"] == first_answer(
            items, second
        )
        assert [c["conversationId"] for c in root["children"]] == [
            fid,
            rewound["conversationId"],
        ]
        assert [c["conversationId"] for c in fork_node["children"]] == [deeper["conversationId"]]
        assert nodes[deeper["conversationId"]]["branchPoint"] is None  # before the first message

        # The parent deleted: the fork heads its own tree, marked.
        await client.request("conversation/delete", {"conversationId": cid})
        tree = await client.request("conversation/tree", {"conversationId": fid})
        assert tree["root"]["conversationId"] == fid and tree["root"]["parentMissing"] is True
        with pytest.raises(RpcError) as missing:
            await client.request("conversation/tree", {"conversationId": cid})
        assert missing.value.kind == "not_found"
    finally:
        await client.close()


def first_answer(items: list[Any], message: Any) -> str:
    """The id of the last item before `message`: where a rewind to it branches."""
    index = next(i for i, item in enumerate(items) if item["itemId"] == message["itemId"])
    return str(items[index - 1]["itemId"])
