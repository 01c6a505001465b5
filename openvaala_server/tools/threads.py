"""Blocking tool work in a thread of its own, so a stuck call cannot starve anything else.

`asyncio.to_thread` shares the loop's default pool with the rest of the daemon: reads stuck on a
dead network mount would fill it and stall every conversation, and the daemon's shutdown would
wait for them. Each call here gets its own daemon thread instead: a stuck one holds only itself,
an interrupted call returns at once (the thread finishes, or not, on its own) and exiting the
daemon never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def run_in_own_thread(work: Callable[[], T], name: str = "openvaala-tool") -> T:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the awaiting call was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]  # None only with an error

    def target() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = work()
        except BaseException as exc:
            error = exc
        # The loop is closed when the daemon stopped while this thread was stuck: drop it.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=target, name=name, daemon=True).start()
    return await future
