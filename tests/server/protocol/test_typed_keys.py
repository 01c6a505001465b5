"""Which keys of a TypedDict may be left out (protocol/typed_keys.py), as the generated typed
seam (gen_calls: may a method's params be left out?) and the params check (validate.py) read
them. This module postpones its annotations, as payloads.py does: on Python 3.11 the class's own
`__required_keys__` then counts a `NotRequired` key as required."""

from __future__ import annotations

from typing import NotRequired, Required, TypedDict

import pytest

from openvaala_server.errors import InvalidParams
from openvaala_server.protocol import gen_calls, validate
from openvaala_server.protocol.typed_keys import optional_keys, required_keys


class AllOptional(TypedDict):
    limit: NotRequired[int]
    cursor: NotRequired[str]


class SomeRequired(TypedDict, total=False):
    conversationId: Required[str]
    title: str


class Extended(SomeRequired):
    pinned: bool  # a total class's own key: required


def test_every_key_not_required_makes_the_params_optional() -> None:
    assert optional_keys(AllOptional) == {"limit", "cursor"}
    assert required_keys(AllOptional) == frozenset()
    assert gen_calls._optional(AllOptional)  # `= ...` in calls.py: the params may be left out


def test_required_and_total_false_are_read_per_key() -> None:
    assert required_keys(SomeRequired) == {"conversationId"}
    assert optional_keys(SomeRequired) == {"title"}
    assert not gen_calls._optional(SomeRequired)
    assert required_keys(Extended) == {"conversationId", "pinned"}
    assert optional_keys(Extended) == {"title"}


def test_the_params_check_reads_them_alike() -> None:
    validate.check(AllOptional, {})
    validate.check(SomeRequired, {"conversationId": "c"})
    with pytest.raises(InvalidParams) as missing:
        validate.check(Extended, {"conversationId": "c"})
    assert "pinned" in str(missing.value)
