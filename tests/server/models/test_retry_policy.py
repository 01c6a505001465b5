"""RetryPolicy: up to 10 retries after the first call, each wait within [1 s, 30 s] with jitter,
Retry-After honoured up to the cap (docs/configuration.md, "Retry")."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from openvaala_server.config import RetryConfig
from openvaala_server.models.base import ModelError
from openvaala_server.models.retry import RetryPolicy

DEFAULT = RetryPolicy()
TRANSIENT = ModelError("provider_unavailable", "busy", retryable=True)
FATAL = ModelError("auth_failed", "bad key")
RANDS = (0.0, 0.001, 0.25, 0.5, 0.75, 0.999, 1.0)


def test_from_config_counts_retries_after_the_first_call() -> None:
    policy = RetryPolicy.from_config(RetryConfig(3, 0.5, 8.0))
    assert policy == RetryPolicy(max_retries=3, base_delay_s=0.5, max_delay_s=8.0)
    assert policy.max_attempts == 4


def test_default_is_ten_retries_after_the_first_call() -> None:
    assert RetryPolicy.from_config(RetryConfig()) == DEFAULT
    assert DEFAULT.max_attempts == 11
    # Failed calls 1..10 are each followed by a retry; after the 11th call the turn fails.
    assert all(DEFAULT.should_retry(TRANSIENT, attempt) for attempt in range(1, 11))
    assert not DEFAULT.should_retry(TRANSIENT, 11)
    assert not DEFAULT.should_retry(FATAL, 1)


def test_zero_retries_means_one_call() -> None:
    policy = RetryPolicy(max_retries=0)
    assert policy.max_attempts == 1
    assert not policy.should_retry(TRANSIENT, 1)


@pytest.mark.parametrize("attempt", range(1, 12))
def test_every_wait_of_the_default_policy_is_between_1_and_30_seconds(attempt: int) -> None:
    for value in RANDS:
        assert 1.0 <= DEFAULT.delay(attempt, rand=constant(value)) <= 30.0


def test_the_first_wait_is_at_least_a_second() -> None:
    assert DEFAULT.delay(1, rand=lambda: 0.0) == 1.0
    assert DEFAULT.delay(1, rand=lambda: 1.0) == 2.0


@pytest.mark.parametrize(
    ("attempt", "low", "high"),
    [
        (1, 1.0, 2.0),
        (2, 2.0, 4.0),
        (3, 4.0, 8.0),
        (4, 8.0, 16.0),
        (5, 15.0, 30.0),
        (10, 15.0, 30.0),
    ],
)
def test_backoff_doubles_with_jitter_up_to_the_cap(attempt: int, low: float, high: float) -> None:
    assert DEFAULT.delay(attempt, rand=lambda: 0.0) == low
    assert DEFAULT.delay(attempt, rand=lambda: 1.0) == high
    assert low < DEFAULT.delay(attempt, rand=lambda: 0.5) < high


def test_jitter_remains_at_the_cap() -> None:
    waits = {DEFAULT.delay(10, rand=constant(value)) for value in RANDS}
    assert len(waits) == len(RANDS)


def test_settable_for_tests() -> None:
    fast = RetryPolicy(max_retries=2, base_delay_s=0.01, max_delay_s=0.05)
    for attempt in (1, 2, 3, 50):
        for value in RANDS:
            assert 0.01 <= fast.delay(attempt, rand=constant(value)) <= 0.05
    assert fast.should_retry(TRANSIENT, 2) and not fast.should_retry(TRANSIENT, 3)


def test_retry_after_is_a_lower_bound() -> None:
    assert DEFAULT.delay(1, retry_after=7.0, rand=lambda: 0.0) == 7.0
    # A shorter Retry-After does not shorten our own backoff.
    assert DEFAULT.delay(3, retry_after=0.5, rand=lambda: 1.0) == 8.0


def test_retry_after_never_exceeds_max_delay() -> None:
    assert DEFAULT.delay(1, retry_after=600.0) == 30.0


def test_odd_inputs() -> None:
    assert DEFAULT.delay(0, rand=lambda: 1.0) == 2.0  # treated as the first attempt
    assert DEFAULT.delay(10_000, rand=lambda: 1.0) == 30.0
    assert DEFAULT.delay(1, rand=lambda: 5.0) == 2.0  # a misbehaving rand is clamped
    assert RetryPolicy(3, 0.0, 0.0).delay(2, retry_after=5.0) == 0.0
    # A cap below the floor wins: the wait never exceeds max_delay_s.
    assert RetryPolicy(3, 5.0, 2.0).delay(1, rand=lambda: 0.0) == 2.0
    assert RetryPolicy(max_retries=-1).max_attempts == 1


def constant(value: float) -> Callable[[], float]:
    return lambda: value
