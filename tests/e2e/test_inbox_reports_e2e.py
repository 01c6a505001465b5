""" "Your messages before subagents'" through the real daemon: with the user's messages queued and
a subagent's report waiting, each queued message has a turn of its own before the report is read
(domain/inbox.py). One fake provider scripts the root agent and its worker."""

from __future__ import annotations

from typing import Any

from tests.e2e.test_subagents_e2e import (
    REPORT,
    _send,
    busy_root_with_worker,
    ended,
    item_in,
    requests_of,
    users,
)
from tests.fakes.providers import FakeProvider
from tests.support.events import collect_until


async def test_two_queued_messages_each_get_their_turn_before_a_report(
    daemon_factory: Any, fake_openai: FakeProvider
) -> None:
    busy = await busy_root_with_worker(daemon_factory, fake_openai)
    client, cid, root = busy.client, busy.cid, busy.root
    await _send(client, cid, "FIRST-MSG")
    await _send(client, cid, "SECOND-MSG")
    busy.child_gate.open()
    notes = await collect_until(
        client,
        lambda n: (
            n["method"] == "inbox/updated"
            and n["params"]["sessionId"] == root
            and len(n["params"]["inputs"]) == 3
        ),
    )
    listed = notes[-1]["params"]["inputs"]
    assert [(i["origin"], i["text"][:10]) for i in listed[:2]] == [
        ("user", "FIRST-MSG"),
        ("user", "SECOND-MSG"),
    ]
    assert listed[2]["origin"] == "subagent"
    busy.root_busy.open()
    await collect_until(client, item_in(root, "QUICK-ANSWER"))  # the report, read by a turn
    await collect_until(client, ended(root))

    def new_users(index: int) -> list[str]:
        """The user messages root request `index` has that the one before did not."""
        asked = requests_of(fake_openai, "root")
        return users(asked[index])[len(users(asked[index - 1])) :]

    # Requests 0 and 1 are the first turn's; then one turn each, in order.
    assert new_users(2) == ["FIRST-MSG"]
    assert new_users(3) == ["SECOND-MSG"]
    [report] = new_users(4)
    assert report.startswith(REPORT) and "QUICK-ANSWER" in report
    await client.close()
