"""The inbox rules, without an event loop: modes, ordering, editing, and what an interrupt does."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from openvaala_server.domain.inbox import Inbox, Input, InputGone

_ids = itertools.count()


def make(text: str, mode: str = "queue", origin: str = "user") -> Input:
    return Input(f"in{next(_ids)}", text, mode, origin)  # type: ignore[arg-type]


def test_any_mode_starts_a_turn_when_idle() -> None:
    for mode in ("steer", "queue", "jump"):
        assert Inbox().add(make("x", mode), turn_running=False) == "started"


def test_steer_is_read_at_the_next_model_call() -> None:
    inbox = Inbox()
    s = make("look at the tests", "steer")
    q = make("then deploy", "queue")
    assert inbox.add(q, turn_running=True) == "queued"
    assert inbox.add(s, turn_running=True) == "steering"
    assert inbox.take_steering() == [s]
    assert inbox.take_steering() == []
    assert inbox.next_turn() == [q]


def test_unread_steer_becomes_the_next_turn_before_queued_input() -> None:
    inbox = Inbox()
    q = make("queued first", "queue")
    s1, s2 = make("steer one", "steer"), make("steer two", "steer")
    for i in (q, s1, s2):
        inbox.add(i, turn_running=True)
    assert inbox.next_turn() == [s1, s2]
    assert inbox.next_turn() == [q]


def test_queued_inputs_start_turns_in_order() -> None:
    inbox = Inbox()
    items = [make(f"q{i}") for i in range(3)]
    for i in items:
        inbox.add(i, turn_running=True)
    assert [inbox.next_turn() for _ in range(3)] == [[i] for i in items]
    assert inbox.next_turn() == []


def test_jump_goes_first() -> None:
    inbox = Inbox()
    q = make("q")
    j = make("urgent", "jump")
    inbox.add(q, turn_running=True)
    assert inbox.add(j, turn_running=True) == "jumped"
    assert inbox.next_turn() == [j]
    assert inbox.next_turn() == [q]


def test_waiting_input_can_be_edited_withdrawn_steered_and_jumped() -> None:
    inbox = Inbox()
    a, b, c = make("a"), make("b"), make("c")
    for i in (a, b, c):
        inbox.add(i, turn_running=True)
    inbox.edit(a.input_id, "a2")
    assert inbox.withdraw(b.input_id).text == "b"
    inbox.steer(c.input_id)
    assert [i.text for i in inbox.take_steering()] == ["c"]
    assert inbox.next_turn()[0].text == "a2"
    for op in (inbox.edit, inbox.withdraw, inbox.steer, inbox.jump):
        with pytest.raises(InputGone):
            op(a.input_id, *(["x"] if op == inbox.edit else []))


def test_user_input_comes_before_subagent_reports() -> None:
    inbox = Inbox()
    report = make("child finished", "steer", "subagent")
    user = make("user says", "steer")
    inbox.add(report, turn_running=True)
    inbox.add(user, turn_running=True)
    assert inbox.take_steering() == [user, report]


def test_after_a_user_interrupt_reports_wait_for_the_user() -> None:
    inbox = Inbox()
    inbox.on_user_interrupt()
    report = make("child finished", "queue", "subagent")
    assert inbox.add(report, turn_running=False) == "queued"
    assert inbox.next_turn() == []
    assert inbox.take_steering() == []
    user = make("go on")
    assert inbox.add(user, turn_running=False) == "started"
    assert inbox.next_turn() == [report]


def ids(inputs: Sequence[Input] | Sequence[Mapping[str, object]]) -> list[object]:
    return [i.input_id if isinstance(i, Input) else i["inputId"] for i in inputs]


def test_inbox_lists_a_later_steer_before_an_earlier_queued_input() -> None:
    inbox = Inbox()
    q1, s1 = make("Q1", "queue"), make("S1", "steer")
    inbox.add(q1, turn_running=True)
    inbox.add(s1, turn_running=True)
    # S1 is read at the running turn's next model call; Q1 waits for the next turn.
    assert ids(inbox.to_wire()) == [s1.input_id, q1.input_id]
    assert inbox.take_steering() == [s1]
    assert ids(inbox.to_wire()) == [q1.input_id]


def test_inbox_lists_a_jump_first_and_held_reports_last() -> None:
    inbox = Inbox()
    report = make("child finished", "steer", "subagent")
    q1, s1, j1 = make("Q1"), make("S1", "steer"), make("J1", "jump")
    inbox.add(report, turn_running=True)
    for item in (q1, s1, j1):
        inbox.add(item, turn_running=True)
    # The user's messages are handled before subagents': the report waits behind Q1.
    assert ids(inbox.to_wire()) == ids([j1, s1, q1, report])
    inbox.on_user_interrupt()
    assert ids(inbox.to_wire()) == ids([j1, s1, q1, report])


def simulated_order(inbox: Inbox) -> list[Input]:
    """What the agent takes, in order, when the running turn reads steering once more and every
    later turn runs: the order `inbox/updated` promises."""
    inbox = copy.deepcopy(inbox)
    taken = [] if inbox.has_jump() else inbox.take_steering()
    while nxt := inbox.next_turn():
        taken += nxt
        taken += inbox.take_steering()  # a turn reads steering input before its first call
    return taken


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["steer", "queue", "jump"]),
            st.sampled_from(["user", "subagent"]),
            st.sampled_from([None, "steer", "jump", "withdraw"]),
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_inbox_lists_inputs_in_the_order_they_are_taken(
    sends: list[tuple[str, str, str | None]], interrupted: bool
) -> None:
    inbox = Inbox()
    sent = []
    for mode, origin, later in sends:
        item = make("t", mode, origin)
        inbox.add(item, turn_running=True)
        sent.append((item, later))
    if interrupted:
        inbox.on_user_interrupt()
    for item, later in sent:
        if later is not None and item in inbox.waiting:
            if later == "withdraw":
                inbox.withdraw(item.input_id)
            else:
                getattr(inbox, later)(item.input_id)
    listed = ids(inbox.to_wire())
    assert sorted(map(str, listed)) == sorted(i.input_id for i in inbox.waiting)
    taken = ids(simulated_order(inbox))
    assert listed[: len(taken)] == taken


class InboxMachine(RuleBasedStateMachine):
    """Random interleavings: every input is handled exactly once or returned to the user, and
    every handling respects the order the rules give."""

    def __init__(self) -> None:
        super().__init__()
        self.inbox = Inbox()
        self.running = False
        self.sent: dict[str, Input] = {}
        self.handled: list[str] = []
        self.returned: list[str] = []
        self.user_since_interrupt = True
        # Reports the user made jump: the user's own choice, so they may go before user input.
        self.jumped: set[str] = set()

    def _take(self, taken: list[Input]) -> None:
        origins = [i.origin for i in taken]
        assert origins == sorted(origins, key=lambda o: o != "user"), "user input first"
        if any(i.origin == "subagent" and i.input_id not in self.jumped for i in taken):
            assert self.user_since_interrupt, "reports wait after a user interrupt"
            # No user input may be left waiting when a report is handled at a turn boundary.
        self.handled.extend(i.input_id for i in taken)

    @rule(
        mode=st.sampled_from(["steer", "queue", "jump"]),
        origin=st.sampled_from(["user", "subagent"]),
    )
    def send(self, mode: str, origin: str) -> None:
        item = make("t", mode, origin)
        self.sent[item.input_id] = item
        disposition = self.inbox.add(item, turn_running=self.running)
        if origin == "user":
            self.user_since_interrupt = True
        if disposition == "started":
            self.handled.append(item.input_id)
            self.running = True

    def _waiting_id(self, index: int) -> str | None:
        waiting = self.inbox.waiting
        return waiting[index % len(waiting)].input_id if waiting else None

    @rule(index=st.integers(0, 50))
    def edit(self, index: int) -> None:
        if (iid := self._waiting_id(index)) is not None:
            self.inbox.edit(iid, "edited")

    @rule(index=st.integers(0, 50))
    def withdraw(self, index: int) -> None:
        if (iid := self._waiting_id(index)) is not None:
            self.returned.append(self.inbox.withdraw(iid).input_id)

    @rule(index=st.integers(0, 50))
    def steer(self, index: int) -> None:
        if (iid := self._waiting_id(index)) is not None:
            self.inbox.steer(iid)

    @rule(index=st.integers(0, 50))
    def jump(self, index: int) -> None:
        if (iid := self._waiting_id(index)) is not None:
            self.inbox.jump(iid)
            self.jumped.add(iid)
            self.user_since_interrupt = True  # the user's own action
            self.running = False  # the jump interrupts the turn
            self._take(self.inbox.next_turn())
            self.running = True

    @precondition(lambda self: self.running)
    @rule()
    def model_call_boundary(self) -> None:
        self._take(self.inbox.take_steering())

    @precondition(lambda self: self.running)
    @rule()
    def turn_ends(self) -> None:
        nxt = self.inbox.next_turn()
        if any(i.origin == "subagent" and i.input_id not in self.jumped for i in nxt):
            assert not any(i.origin == "user" for i in self.inbox.waiting)
        self._take(nxt)
        self.running = bool(nxt)

    @precondition(lambda self: self.running)
    @rule()
    def user_interrupts(self) -> None:
        self.inbox.on_user_interrupt()
        self.user_since_interrupt = False
        self.turn_ends()

    @invariant()
    def each_input_ends_at_most_once(self) -> None:
        ended = self.handled + self.returned
        assert len(ended) == len(set(ended))
        waiting = {i.input_id for i in self.inbox.waiting}
        assert waiting.isdisjoint(ended)
        assert waiting | set(ended) == set(self.sent)

    def teardown(self) -> None:
        # Drain: the user speaks once more, and turns run until nothing waits.
        self.inbox.subagents_held = False
        self.user_since_interrupt = True
        for _ in range(len(self.sent) + 1):
            self._take(self.inbox.next_turn())
        assert sorted(self.handled + self.returned) == sorted(self.sent)


TestInboxMachine = InboxMachine.TestCase
TestInboxMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_inputs_a_turn_could_not_save_are_first_in_line_again_as_queued() -> None:
    inbox = Inbox()
    later = make("later")
    inbox.add(later, turn_running=True)
    a, b = make("a", "steer"), make("b", "jump")
    inbox.put_back([a, b])
    assert [i.mode for i in (a, b)] == ["queue", "queue"]
    assert [i.text for i in inbox.taking_order()] == ["a", "b", "later"]
    assert inbox.next_turn() == [a]


def test_a_closed_sessions_inputs_are_all_dropped_and_returned() -> None:
    inbox = Inbox()
    waiting = [make("q"), make("r", origin="subagent")]
    for item in waiting:
        inbox.add(item, turn_running=True)
    assert inbox.drop_all() == waiting
    assert inbox.waiting == [] and inbox.next_turn() == []
