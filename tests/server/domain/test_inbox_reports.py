"""A report waiting when a user's waiting message starts a turn is not read into that turn: each of
the user's messages has its own turn first (domain/inbox.py, without an event loop)."""

from __future__ import annotations

from openvaala_server.domain.inbox import Inbox
from tests.server.domain.test_inbox import make


def test_a_report_waits_for_each_queued_message_to_have_its_turn() -> None:
    inbox = Inbox()
    first, second = make("first"), make("second")
    report = make("child finished", "steer", "subagent")
    for item in (first, second, report):
        inbox.add(item, turn_running=True)
    assert inbox.taking_order() == [first, second, report]
    assert inbox.next_turn() == [first]
    assert inbox.take_steering() == []
    assert inbox.next_turn() == [second]
    assert inbox.take_steering() == []  # before: read with the second message
    assert inbox.next_turn() == [report]


def test_a_report_arriving_during_the_users_turn_is_read_by_it() -> None:
    inbox = Inbox()
    user = make("only")
    inbox.add(user, turn_running=True)
    assert inbox.next_turn() == [user]
    report = make("child finished", "steer", "subagent")
    inbox.add(report, turn_running=True)
    assert inbox.take_steering() == [report]
