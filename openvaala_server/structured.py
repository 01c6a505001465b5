"""Structured concurrency for the daemon's long-lived activities (docs/design.md, "Structured
concurrency").

Every activity that outlives the call that starts it (a turn, an MCP server's session, the accept
loop) runs in a `Supervisor`: an anyio task group entered by whoever owns its lifetime (the
server, a conversation manager), so nothing runs on after its owner has ended. Each spawned
activity gets its own cancel scope: cancelling it is how an interrupt reaches it, and its `done`
event is how others wait for it (with a deadline, as every wait on something outside the process).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Final, Generic, TypeVar

import anyio
from anyio.abc import TaskGroup

log = logging.getLogger(__name__)

T = TypeVar("T")
A = TypeVar("A", bound="Activity")

# How long the owner of a supervisor waits for what is still running once it has cancelled it:
# cancellation reaches every await at once, but cleanup (`finally` blocks writing the end of a
# turn, a child process being reaped) may itself await briefly.
CANCEL_GRACE_S: Final = 5.0


class Activity:
    """One spawned activity: cancel it with `cancel()`, wait for it with `wait()`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.error: Exception | None = None

    def cancel(self) -> None:
        self.scope.cancel()

    @property
    def finished(self) -> bool:
        return self.done.is_set()

    @property
    def cancelled(self) -> bool:
        return self.scope.cancel_called

    async def wait(self) -> None:
        await self.done.wait()


class ActivityCancelled(Exception):
    """A job's result was asked for, but the job was cancelled before it had one."""


class Job(Activity, Generic[T]):
    """An activity with a result that several callers may wait for (`result()`).

    Waiting is not owning: a waiter that is cancelled stops waiting, the job runs on under its
    supervisor (what `asyncio.shield(task)` gave before, with an owner that ends it)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._value: T | None = None
        self._has_value = False

    def set_result(self, value: T) -> None:
        self._value = value
        self._has_value = True

    async def result(self) -> T:
        """Wait for the job; its value, or its exception, or `ActivityCancelled`."""
        await self.wait()
        if self.error is not None:
            raise self.error
        if not self._has_value:
            raise ActivityCancelled(f"{self.name} was cancelled")
        return self._value  # type: ignore[return-value]  # set with _has_value


class Supervisor:
    """A task group that owns activities; `async with` it for as long as they may run.

    Leaving the block cancels what still runs and waits for it (its cleanup is shielded for up to
    `CANCEL_GRACE_S`). An activity's exception is logged and kept on its `Activity`, never
    propagated: one failed turn must not cancel the others.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._group: TaskGroup | None = None
        self._activities: set[Activity] = set()

    async def __aenter__(self) -> Supervisor:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        group, self._group = self._group, None
        assert group is not None
        group.cancel_scope.cancel()
        try:
            return bool(await group.__aexit__(exc_type, exc, tb))
        except BaseExceptionGroup as failed:
            # Activities never raise (see `spawn`): this is the owner's own exception (pygls's
            # `exit` raises SystemExit), passed on as itself rather than inside a group.
            if len(failed.exceptions) == 1:
                raise failed.exceptions[0] from exc
            raise

    @property
    def running(self) -> bool:
        return self._group is not None

    @property
    def activities(self) -> frozenset[Activity]:
        return frozenset(self._activities)

    def spawn(self, run: Callable[[], Awaitable[object]], name: str) -> Activity:
        """Start `run()` as an activity of this supervisor (it must be running)."""
        return self._start(Activity(name), run)

    def start_job(self, run: Callable[[], Awaitable[T]], name: str) -> Job[T]:
        """Start `run()` as a job of this supervisor: an activity whose result can be awaited."""
        job: Job[T] = Job(name)

        async def keep() -> None:
            job.set_result(await run())

        self._start(job, keep)
        return job

    def _start(self, activity: A, run: Callable[[], Awaitable[object]]) -> A:
        name = activity.name
        if self._group is None:
            raise RuntimeError(f"{self.name} is not running: cannot start {name}")
        self._activities.add(activity)

        async def body() -> None:
            try:
                with activity.scope:
                    await run()
            except Exception as exc:
                activity.error = exc
                log.error("%s failed", name, exc_info=exc)
            finally:
                self._activities.discard(activity)
                activity.done.set()

        self._group.start_soon(body, name=name)
        return activity

    async def wait_all(self, timeout: float) -> bool:
        """Wait up to `timeout` s for every activity to end; whether they all did."""
        with anyio.move_on_after(timeout):
            while self._activities:
                await next(iter(self._activities)).wait()
        return not self._activities
