"""RetryPolicy: exponential backoff with equal jitter, Retry-After honoured up to the cap."""

from __future__ import annotations

import pytest

from openvaala_server.config import RetryConfig
from openvaala_server.models.base import ModelError
from openvaala_server.models.retry import RetryPolicy

POLICY = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=30.0)


def test_from_config() -> None:
    assert RetryPolicy.from_config(RetryConfig(3, 0.5, 8.0)) == RetryPolicy(3, 0.5, 8.0)


@pytest.mark.parametrize(("attempt", "full"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (6, 30.0)])
def test_backoff_doubles_up_to_the_cap(attempt: int, full: float) -> None:
    assert POLICY.delay(attempt, rand=lambda: 1.0) == full
    assert POLICY.delay(attempt, rand=lambda: 0.0) == full / 2  # equal jitter: never below half


def test_jitter_stays_within_half_and_full() -> None:
    for value in (0.0, 0.25, 0.5, 0.99):
        assert 4.0 <= POLICY.delay(4, rand=lambda v=value: v) <= 8.0


def test_retry_after_is_a_lower_bound() -> None:
    assert POLICY.delay(1, retry_after=7.0, rand=lambda: 0.0) == 7.0
    # A shorter Retry-After does not shorten our own backoff.
    assert POLICY.delay(4, retry_after=0.5, rand=lambda: 1.0) == 8.0


def test_retry_after_never_exceeds_max_delay() -> None:
    assert POLICY.delay(1, retry_after=600.0) == 30.0


def test_odd_inputs() -> None:
    assert POLICY.delay(0, rand=lambda: 1.0) == 1.0
    assert POLICY.delay(10_000, rand=lambda: 1.0) == 30.0
    assert POLICY.delay(1, rand=lambda: 5.0) == 1.0  # a misbehaving rand is clamped
    assert RetryPolicy(3, 0.0, 0.0).delay(2, retry_after=5.0) == 0.0


def test_should_retry() -> None:
    transient = ModelError("provider_unavailable", "busy", retryable=True)
    fatal = ModelError("auth_failed", "bad key")
    assert POLICY.should_retry(transient, 1)
    assert POLICY.should_retry(transient, 3)
    assert not POLICY.should_retry(transient, 4)  # max_attempts calls made
    assert not POLICY.should_retry(fatal, 1)
