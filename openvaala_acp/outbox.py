"""`session/update`s leave in the order they were made, one at a time.

Daemon events are translated synchronously as they arrive, but sending is awaited; a single
sender keeps them in order, and `flush` lets a request (a prompt's answer, `session/load`) wait
until everything queued before it has been written, as ACP wants updates before the response."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Sender(Protocol):
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None: ...


_Entry = tuple[str, Any] | asyncio.Future[None]


class Outbox:
    def __init__(self) -> None:
        self._queue: asyncio.Queue[_Entry] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self, conn: Sender) -> None:
        self._task = asyncio.create_task(self._run(conn))

    def put(self, session_id: str, update: Any) -> None:
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        if self._task is None or self._task.done():
            return
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(marker)
        await marker

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self, conn: Sender) -> None:
        while True:
            entry = await self._queue.get()
            if isinstance(entry, asyncio.Future):
                if not entry.done():
                    entry.set_result(None)
                continue
            session_id, update = entry
            try:
                await conn.session_update(session_id=session_id, update=update)
            except ConnectionError:  # the editor went away: nothing more to send
                return
            except Exception:
                log.exception("could not send a session/update")
