"""`meta.apply` folds every type of the metadata record union, and a damaged record of any type
is counted, never fatal (a conversation whose metadata has one still opens)."""

from __future__ import annotations

from typing import get_args, get_type_hints

import pytest

from openvaala_server.domain import records as r
from openvaala_server.domain.meta import fold, folded_types

ROOT = "a" * 32
CREATED: dict[str, object] = {
    "type": r.CONVERSATION_CREATED,
    "ts": "t0",
    "conversationId": "c" * 32,
    "cwd": "/w",
    "agent": "default",
    "model": "demo",
    "title": "x",
    "rootSessionId": ROOT,
}


def _union_types() -> set[str]:
    """Every `type` the record union `records.MetadataPayload` declares."""
    types: set[str] = set()
    for record in get_args(r.MetadataPayload):
        types.update(get_args(get_type_hints(record)["type"]))
    return types


def test_every_record_type_of_the_union_but_the_creation_is_folded() -> None:
    assert folded_types() == _union_types() - {r.CONVERSATION_CREATED}


@pytest.mark.parametrize("kind", sorted(_union_types() - {r.CONVERSATION_CREATED}))
def test_a_record_with_only_its_type_does_not_stop_the_conversation_opening(kind: str) -> None:
    meta = fold([CREATED, {"type": kind, "ts": "t1", "sessionId": ROOT}])
    assert meta.model == "demo" and meta.agent == "default" and meta.cwd == "/w"


def test_a_model_change_without_a_model_is_counted_and_changes_nothing() -> None:
    meta = fold([CREATED, {"type": r.SESSION_MODEL_SET, "ts": "t1", "sessionId": ROOT}])
    assert meta.unknown_records == 1
    assert meta.model == "demo" and meta.sessions[ROOT].model == "demo"


def test_an_unknown_type_is_counted() -> None:
    meta = fold([CREATED, {"type": "from_the_future", "ts": "t1"}, {"ts": "t2"}])
    assert meta.unknown_records == 2
