"""When and how long to wait before retrying a failed model call. Pure: no I/O, no clock.

Delay for the retry after failed attempt ``n`` (1-based):

    backoff = min(max_delay_s, base_delay_s * 2 ** (n - 1))
    delay   = backoff * (0.5 + 0.5 * rand())          # "equal jitter": within [0.5, 1] x backoff

Equal jitter (rather than full jitter) keeps a floor under the wait so a retry never fires
immediately, while still spreading out many agents that failed at the same moment.

A provider's ``Retry-After`` is a lower bound: the delay is ``max(retry_after, jittered)`` — the
server knows when capacity returns, retrying earlier only earns another 429. It is still capped at
``max_delay_s``: a server asking for minutes must not park a turn silently; with the cap the user
sees retries (and can cancel) at the configured pace.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from openvaala_server.config import RetryConfig
from openvaala_server.models.base import ModelError

# 2**_MAX_EXPONENT * base is far beyond any sane max_delay_s; capping avoids float overflow for
# absurd attempt numbers.
_MAX_EXPONENT = 62


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = RetryConfig.max_attempts
    base_delay_s: float = RetryConfig.base_delay_s
    max_delay_s: float = RetryConfig.max_delay_s

    @classmethod
    def from_config(cls, config: RetryConfig) -> RetryPolicy:
        return cls(config.max_attempts, config.base_delay_s, config.max_delay_s)

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait after failed attempt number `attempt` (1 = the first call)."""
        exponent = min(max(attempt, 1) - 1, _MAX_EXPONENT)
        backoff = min(self.max_delay_s, self.base_delay_s * (2.0**exponent))
        fraction = min(max(rand(), 0.0), 1.0)
        wait = backoff * (0.5 + 0.5 * fraction)
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return max(0.0, min(wait, self.max_delay_s))

    def should_retry(self, error: ModelError, attempt: int) -> bool:
        """Whether to make another call after failed attempt number `attempt` (1-based)."""
        return error.retryable and attempt < self.max_attempts
