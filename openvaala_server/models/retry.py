"""When and how long to wait before retrying a failed model call. Pure: no I/O, no clock.

A temporary error is retried up to `max_retries` times after the first call (docs/configuration.md,
"Retry"), so a call is made at most ``max_retries + 1`` times (`max_attempts`, the wire's
``maxAttempts``).

Delay for the retry after failed attempt ``n`` (1-based):

    backoff = min(max_delay_s, base_delay_s * 2 ** n)
    delay   = max(base_delay_s, backoff * (0.5 + 0.5 * rand()))   # then capped at max_delay_s

so with the defaults (1 s, 30 s) the waits are drawn from [1, 2], [2, 4], [4, 8], [8, 16] and then
[15, 30] seconds: never under `base_delay_s`, never over `max_delay_s`. Equal jitter (rather than
full jitter) keeps a floor under the wait so a retry never fires at once, while still spreading
out many agents that failed at the same moment — the cap too is reached with jitter left.

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
    max_retries: int = 10  # retries after the first call (0: none)
    base_delay_s: float = RetryConfig.base_delay_s  # the shortest wait
    max_delay_s: float = RetryConfig.max_delay_s  # the longest wait

    @classmethod
    def from_config(cls, config: RetryConfig) -> RetryPolicy:
        return cls(config.max_retries, config.base_delay_s, config.max_delay_s)

    @property
    def max_attempts(self) -> int:
        """Calls made at most: the first one and every retry."""
        return max(self.max_retries, 0) + 1

    def delay(
        self,
        attempt: int,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Seconds to wait after failed attempt number `attempt` (1 = the first call)."""
        exponent = min(max(attempt, 1), _MAX_EXPONENT)
        backoff = min(self.max_delay_s, self.base_delay_s * (2.0**exponent))
        fraction = min(max(rand(), 0.0), 1.0)
        wait = max(self.base_delay_s, backoff * (0.5 + 0.5 * fraction))
        if retry_after is not None and retry_after > wait:
            wait = retry_after
        return max(0.0, min(wait, self.max_delay_s))

    def should_retry(self, error: ModelError, attempt: int) -> bool:
        """Whether to make another call after failed attempt number `attempt` (1-based)."""
        return error.retryable and attempt < self.max_attempts
