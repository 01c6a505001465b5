"""The one retry loop of model calls: a turn's call and a compaction's summary both go through it.

When to retry and how long to wait is `models/retry.RetryPolicy` (pure); this module waits,
announces each retry as `retry/scheduled` (docs/protocol.md) and gives up with
`RetriesExhausted` once a temporary error outlasts `[retry] max_retries`. An error that is not
temporary is raised as it is, at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from openvaala_server.models.base import ModelError
from openvaala_server.protocol import methods

if TYPE_CHECKING:
    from openvaala_server.models.retry import RetryPolicy
    from openvaala_server.protocol.payloads import RetryScheduledNote
    from openvaala_server.runtime.hub import Hub

T = TypeVar("T")


class RetriesExhausted(ModelError):
    """A temporary error that lasted through every attempt (`attempts` calls were made)."""

    def __init__(self, error: ModelError, attempts: int) -> None:
        super().__init__(error.kind, error.message, retryable=True, retry_after=error.retry_after)
        self.attempts = attempts


async def with_retries(
    once: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    hub: Hub,
    session_id: str,
    *,
    recover: Callable[[ModelError], Awaitable[bool]] | None = None,
) -> T:
    """`once()` until it succeeds. After each failure `recover` (if any) may repair the cause
    (a turn compacts after `context_overflow`) and return True: the call is then made again at
    once and that failure is not counted as an attempt."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return await once()
        except ModelError as exc:
            if recover is not None and await recover(exc):
                attempt -= 1
                continue
            if not policy.should_retry(exc, attempt):
                if exc.retryable:
                    raise RetriesExhausted(exc, attempt) from None
                raise
            delay = policy.delay(attempt, exc.retry_after)
            note: RetryScheduledNote = {
                "sessionId": session_id,
                "attempt": attempt,
                "maxAttempts": policy.max_attempts,
                "delaySeconds": round(delay, 3),
                "error": {"kind": exc.kind, "message": exc.message},
            }
            hub.publish(methods.RETRY_SCHEDULED, note)
            await asyncio.sleep(delay)
