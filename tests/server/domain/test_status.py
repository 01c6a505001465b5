"""Declared turn and session states (domain/status.py)."""

from __future__ import annotations

import pytest

from openvaala_server.domain.status import (
    TURN_OUTCOMES,
    BadTransition,
    end_turn,
    last_status,
    session_status,
)


@pytest.mark.parametrize("outcome", TURN_OUTCOMES)
def test_a_running_turn_ends_once(outcome: str) -> None:
    ended = end_turn("running", outcome)  # type: ignore[arg-type]
    assert ended == outcome
    with pytest.raises(BadTransition):
        end_turn(ended, "completed")


def test_a_session_keeps_how_its_last_turn_ended_but_a_completed_one_leaves_it_idle() -> None:
    assert last_status("completed") == "idle"
    assert last_status("interrupted") == "interrupted"
    assert last_status("failed") == "failed"
    assert last_status("from-a-newer-journal") == "idle"


def test_a_session_status_has_one_order_of_precedence() -> None:
    base = {"closed": False, "awaiting_approval": False, "running": False, "waiting": False}
    assert session_status(**base, last="failed") == "failed"
    assert session_status(**{**base, "waiting": True}, last="failed") == "waiting"
    assert session_status(**{**base, "waiting": True, "running": True}, last="idle") == "running"
    both = {**base, "running": True, "awaiting_approval": True}
    assert session_status(**both, last="idle") == "awaiting_approval"
    assert session_status(**{**both, "closed": True}, last="idle") == "closed"
