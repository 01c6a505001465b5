"""What a client keeps of a reply the daemon was streaming when it crashed (docs/protocol.md,
turn/ended `server_stopped`).

The daemon saves a message when it completes: text streamed before a crash or a kill is not in
the snapshot the restarted daemon sends, and a client that redrew from it alone would wipe what
the user had just read. So when a snapshot ends the turn a client saw running with the
`server_stopped` notice recovery records for a crash, the streamed items it lacks are kept where
they were, marked `interrupted`. A turn that ended otherwise while the client was away saved or
withdrew its items itself (a retried attempt's, a rewound reply's): nothing is brought back.
Pure: lists of items in, a list out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from openvaala_server.domain.records import Item

STREAMED = ("agent_message", "reasoning")


def keep_cut_stream(
    before: list[Item],
    before_turn: str | None,
    after: list[Item],
    after_turn: str | None,
    kept_before: Collection[str] = (),
) -> list[Item]:
    """`after` (a snapshot's items) with the streamed items of `before`'s running turn that it
    lacks, each after the last item before it that `after` still has, marked interrupted.
    `kept_before`: the ids of items kept so at an earlier crash; no daemon has them, so every
    later snapshot (a second crash, a reconnect) lacks them too, and they stay where they were."""
    crashed = before_turn is not None and after_turn != before_turn and _stopped(after, before_turn)
    if not crashed and not kept_before:
        return after  # no turn was cut under this client; it ended in a live daemon, which
        # kept or withdrew what it streamed
    out = list(after)
    known = {str(item.get("itemId")) for item in after}
    anchor: str | None = None
    for item in before:
        item_id = str(item.get("itemId"))
        if item_id in known:
            anchor = item_id
            continue
        if not (crashed and before_turn and _cut(item, before_turn)) and item_id not in kept_before:
            continue
        kept: Item = {**item, "status": "interrupted"}
        at = _after(out, anchor)
        out.insert(at, kept)
        known.add(item_id)
        anchor = item_id
    return out


def _stopped(after: list[Item], turn_id: str) -> bool:
    # Here, not at the top: the terminal UI's first screen loads no record module (docs/design.md,
    # "Start-up time"), and this runs only after a reconnect.
    from openvaala_server.domain.recovery import has_stopped_notice

    return has_stopped_notice(after, turn_id)


def _cut(item: Item, turn_id: str) -> bool:
    return (
        item.get("type") in STREAMED
        and item.get("status") == "in_progress"
        and item.get("turnId") == turn_id
        and bool(item.get("text"))
    )


def _after(items: list[Item], anchor: str | None) -> int:
    if anchor is None:
        return len(items)
    for index, item in enumerate(items):
        if str(item.get("itemId")) == anchor:
            return index + 1
    return len(items)
