"""The inbox: input that arrives while a session's turn runs. Pure state machine, no I/O.

Modes, chosen per input:
- steer — joins the running turn: taken at the next model-call boundary (`take_steering`).
  If the turn ends before that, it becomes the next turn.
- queue — waits and starts a later turn, one queued input per turn, in order.
- jump  — the running turn is interrupted and this input starts the next turn, before anything else.

Ordering: the user's inputs always come before subagents' (reports of child sessions): a report
waiting when a turn starts from the user's waiting input is not read into that turn — each of the
user's messages has a turn of its own first (docs/design.md, "Reports wait for the user's
turns"). After the user interrupts a session, subagent inputs are held until the user sends
something, so a stopped agent is not woken by its children.

Every input ends exactly once: taken into a turn, or withdrawn (its text returned to the user).
Every operation on an input that has already ended raises `InputGone` (the wire's `input_consumed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict

from openvaala_server.domain.images import ImageRef

Mode = Literal["steer", "queue", "jump"]
Origin = Literal["user", "subagent"]
MODES: tuple[Mode, ...] = ("steer", "queue", "jump")


class InputGone(LookupError):
    """The input was already taken into a turn or withdrawn (or never existed)."""


class InputWire(TypedDict):
    """A waiting input on the wire: an element of `inbox/updated.inputs` and of a snapshot's
    `inbox` (docs/protocol.md "Input")."""

    inputId: str
    text: str
    mode: Mode
    origin: Origin
    fromSessionId: NotRequired[str]
    images: NotRequired[list[ImageRef]]


@dataclass
class Input:
    input_id: str
    text: str
    mode: Mode
    origin: Origin = "user"
    # For subagent reports: which child session sent it (shown in clients, kept on the item).
    from_session_id: str | None = None
    # The images sent with it, already in the conversation's attachments (domain/images.py).
    images: list[ImageRef] = field(default_factory=list)

    def to_wire(self) -> InputWire:
        wire: InputWire = {
            "inputId": self.input_id,
            "text": self.text,
            "mode": self.mode,
            "origin": self.origin,
        }
        if self.from_session_id:
            wire["fromSessionId"] = self.from_session_id
        if self.images:
            wire["images"] = self.images
        return wire


@dataclass
class Inbox:
    waiting: list[Input] = field(default_factory=list)
    # True after a user interrupt: subagent inputs wait until the user sends something.
    subagents_held: bool = False
    # Reports that were waiting when the running turn started from the user's waiting input:
    # not read into that turn, they wait for the next (`next_turn` sets it).
    deferred: set[str] = field(default_factory=set)

    # -- what clients do -------------------------------------------------------------------

    def add(self, item: Input, *, turn_running: bool) -> str:
        """Accept an input. Returns its disposition: started | steering | queued | jumped.

        With no turn running, any mode starts a turn at once (`started`): the caller passes it
        to `start_now`. A user input releases held subagent inputs.
        """
        if item.origin == "user":
            self.subagents_held = False
        elif item.mode == "jump":
            item.mode = "steer"  # only the user may interrupt a turn; a report joins it instead
        if not turn_running and (item.origin == "user" or not self.subagents_held):
            return "started"
        if item.mode == "jump":
            self.waiting.insert(0, item)
            return "jumped"
        self.waiting.append(item)
        return "steering" if item.mode == "steer" else "queued"

    def edit(self, input_id: str, text: str) -> Input:
        item = self._find(input_id)
        item.text = text
        return item

    def withdraw(self, input_id: str) -> Input:
        item = self._find(input_id)
        self.waiting.remove(item)
        return item

    def steer(self, input_id: str) -> Input:
        item = self._find(input_id)
        item.mode = "steer"
        return item

    def jump(self, input_id: str) -> Input:
        """Make a waiting input go next; the caller interrupts the running turn.

        The user asked for it, so it counts as the user speaking: held reports are released."""
        item = self._find(input_id)
        self.subagents_held = False
        self.waiting.remove(item)
        item.mode = "jump"
        self.waiting.insert(0, item)
        return item

    # -- what the agent loop does ----------------------------------------------------------

    def take_steering(self) -> list[Input]:
        """At a model-call boundary of a running turn: the steer inputs it reads now."""
        taken = self._steering()
        for item in taken:
            self.waiting.remove(item)
        return taken

    def has_jump(self) -> bool:
        return any(i.mode == "jump" for i in self.waiting)

    def next_turn(self) -> list[Input]:
        """When a turn has ended: the inputs that start the next one (empty: stay idle).

        A jump goes first, alone. Then steer inputs the last turn never read, together (they
        were meant for one turn). Then the first queued user input. Then subagent reports,
        together, unless held.
        """
        ordered = self._ordered()
        jumps = [i for i in ordered if i.mode == "jump"]
        if jumps:
            chosen = [jumps[0]]
        else:
            steers = [i for i in ordered if i.mode == "steer" and i.origin == "user"]
            if steers:
                chosen = steers
            else:
                queued_user = [i for i in ordered if i.origin == "user"]
                if queued_user:
                    chosen = [queued_user[0]]
                elif not self.subagents_held:
                    chosen = [i for i in ordered if i.origin == "subagent"]
                else:
                    chosen = []
        for item in chosen:
            self.waiting.remove(item)
        by_user = any(i.origin == "user" for i in chosen)
        self.deferred = (
            {i.input_id for i in self.waiting if i.origin == "subagent"} if by_user else set()
        )
        return chosen

    def put_back(self, inputs: list[Input]) -> None:
        """Inputs a turn took but could not save: first in line again, in their order, as
        queued (whatever mode they came with: they start the next turn, they steer nothing)."""
        for item in reversed(inputs):
            item.mode = "queue"
            self.waiting.insert(0, item)

    def drop_all(self) -> list[Input]:
        """Forget every waiting input (the session was closed: none will ever run)."""
        dropped, self.waiting = self.waiting, []
        self.deferred = set()
        return dropped

    def on_user_interrupt(self) -> None:
        """The user stopped the turn: hold subagent reports until the user speaks again."""
        self.subagents_held = True

    def to_wire(self) -> list[InputWire]:
        """The waiting inputs in the order they will be taken (what `inbox/updated` lists)."""
        if not self.waiting:  # most sessions, in every snapshot: no order to play out
            return []
        return [i.to_wire() for i in self.taking_order()]

    def taking_order(self) -> list[Input]:
        """The waiting inputs in the order the agent will read them, while a turn runs on.

        A jump is next (it interrupts the turn); the turn reads steering input at its next model
        call, so it comes before queued input even when it arrived later; further jumps wait for
        that turn to end; then queued user input, one turn each; then subagent reports (and
        those held until the user speaks), as `next_turn` takes them.
        """
        # Played out on a copy by the same rules the agent loop follows, so the list cannot
        # drift from what happens.
        sim = Inbox(list(self.waiting), self.subagents_held, set(self.deferred))
        taken = [] if sim.has_jump() else sim.take_steering()
        while nxt := sim.next_turn():
            taken += nxt
            taken += sim.take_steering()  # a turn reads steering input before its first call
        return taken + sim._ordered()  # held reports, until the user speaks

    # -- internals -------------------------------------------------------------------------

    def _steering(self) -> list[Input]:
        """What a running turn reads at its next model call: the user's steer inputs, and
        subagent reports sent as steering only while no user message waits and not into a turn
        that a user's message started while they waited — the user's messages are always
        handled before subagents' (docs/protocol.md, inbox/updated)."""
        ordered = self._ordered()
        steers = [i for i in ordered if i.mode == "steer" and i.origin == "user"]
        if any(i.origin == "user" and i.mode != "steer" for i in self.waiting):
            return steers
        return steers + [
            i
            for i in ordered
            if i.mode == "steer"
            and i.origin == "subagent"
            and self._eligible(i)
            and i.input_id not in self.deferred
        ]

    def _eligible(self, item: Input) -> bool:
        return item.origin == "user" or not self.subagents_held

    def _ordered(self) -> list[Input]:
        # Stable: arrival order within each origin, users' first; a jump leads its origin.
        return [i for i in self.waiting if i.origin == "user"] + [
            i for i in self.waiting if i.origin == "subagent"
        ]

    def _find(self, input_id: str) -> Input:
        for item in self.waiting:
            if item.input_id == input_id:
                return item
        raise InputGone(input_id)
