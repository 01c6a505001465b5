"""The one retry loop of model calls (runtime/retrying.py), on a real hub, without a daemon."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from openvaala_server.models.base import ModelError
from openvaala_server.models.retry import RetryPolicy
from openvaala_server.runtime.hub import Hub
from openvaala_server.runtime.retrying import RetriesExhausted, with_retries

FAST = RetryPolicy(max_retries=2, base_delay_s=0.0, max_delay_s=0.0)


class Frames:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def deliver(self, frame: str) -> None:
        self.frames.append(json.loads(frame))


def _hub() -> tuple[Hub, Frames]:
    hub = Hub("c" * 32, replay_limit=0)
    frames = Frames()
    hub.subscribe(frames)
    return hub, frames


def _failing(
    *errors: ModelError, result: str = "ok"
) -> tuple[list[int], Callable[[], Awaitable[str]]]:
    calls: list[int] = []

    async def once() -> str:
        calls.append(len(calls) + 1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return calls, once


def test_a_temporary_error_is_retried_and_each_retry_announced() -> None:
    hub, frames = _hub()
    calls, once = _failing(ModelError("rate_limited", "slow down", retryable=True))
    assert asyncio.run(with_retries(once, FAST, hub, "s" * 32)) == "ok"
    assert calls == [1, 2]
    [note] = frames.frames
    assert note["method"] == "retry/scheduled"
    params = note["params"]
    assert params["attempt"] == 1 and params["maxAttempts"] == 3
    assert params["error"] == {"kind": "rate_limited", "message": "slow down"}


def test_a_lasting_temporary_error_gives_up_after_every_attempt() -> None:
    hub, frames = _hub()
    error = ModelError("overloaded", "busy", retryable=True)
    calls, once = _failing(error, error, error, error)
    with pytest.raises(RetriesExhausted) as caught:
        asyncio.run(with_retries(once, FAST, hub, "s" * 32))
    assert caught.value.attempts == 3 and caught.value.kind == "overloaded"
    assert calls == [1, 2, 3]
    assert len(frames.frames) == 2


def test_an_error_that_is_not_temporary_is_raised_at_once() -> None:
    hub, frames = _hub()
    calls, once = _failing(ModelError("auth_failed", "bad key"))
    with pytest.raises(ModelError) as caught:
        asyncio.run(with_retries(once, FAST, hub, "s" * 32))
    assert not isinstance(caught.value, RetriesExhausted)
    assert calls == [1] and frames.frames == []


def test_a_recovered_failure_is_not_counted_as_an_attempt() -> None:
    hub, frames = _hub()
    overflow = ModelError("context_overflow", "too long")
    busy = ModelError("overloaded", "busy", retryable=True)
    calls, once = _failing(overflow, busy, busy, result="fits")
    recovered: list[str] = []

    async def recover(exc: ModelError) -> bool:
        recovered.append(exc.kind)
        return exc.kind == "context_overflow"

    result = asyncio.run(with_retries(once, FAST, hub, "s" * 32, recover=recover))
    assert result == "fits"
    assert calls == [1, 2, 3, 4]
    assert recovered == ["context_overflow", "overloaded", "overloaded"]
    # Three retries of which only two counted: attempts 1 and 2 announced, none exhausted.
    assert [f["params"]["attempt"] for f in frames.frames] == [1, 2]
