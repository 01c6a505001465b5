"""The daemon's notifications are checked by method where they are sent (docs/design.md, "Typed
seams"): `Hub.publish` and `Broadcast.publish` take each notification's declared params
(protocol/calls.py `Publish`, `Announce`), so a publisher whose params drift from
protocol/payloads.py, or a method the protocol does not know, is a mypy error in the runtime.
One mypy run on a module checked in place of one of the runtime's own (`--shadow-file`)."""

from __future__ import annotations

from pathlib import Path

from tests.support.mypy_probe import errors_in_place_of

PROBE = """
from openvaala_server.runtime.broadcast import Broadcast
from openvaala_server.runtime.hub import Hub


def publishers(hub: Hub, broadcast: Broadcast, reason: str) -> None:
    seq: int = hub.publish("compaction/started", {"sessionId": "s", "reason": "manual"})
    hub.publish("compaction/started", {"sessionId": "s", "reason": reason})  # line 8
    hub.publish("turn/ended", {"sessionId": "s", "turnId": "t", "status": "done"})  # line 9
    hub.publish("item/delta", {"n": 1})  # line 10: not an ItemDeltaNote
    hub.publish("item/dleta", {})  # line 11: no such notification
    broadcast.publish("config/error", {"path": "p", "state": "error", "message": "m", "key": "k"})
    broadcast.publish("config/error", {"path": "p", "state": "error", "message": "m"})  # line 13
    broadcast.publish("turn/started", {"sessionId": "s", "turnId": "t"})  # line 14: a hub's
"""


def test_a_notification_whose_params_drift_from_its_declaration_is_an_error(
    tmp_path: Path,
) -> None:
    errors = errors_in_place_of("openvaala_server/runtime/list_feed.py", PROBE, tmp_path)
    assert sorted({line for line, _ in errors}) == [8, 9, 10, 11, 13, 14]
