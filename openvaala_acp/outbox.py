"""`session/update`s leave in the order they were made, one at a time.

Daemon events are translated synchronously as they arrive, but sending is awaited; a single
sender keeps them in order, and `flush` lets a request (a prompt's answer, `session/load`) wait
until everything queued before it has been written, as ACP wants updates before the response."""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Protocol

import anyio
from acp.schema import AvailableCommandsUpdate

from openvaala_acp.stream import Update
from openvaala_server.structured import Activity, Supervisor

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0  # a send under way when the agent closes: its cleanup, bounded


Sent = Update | AvailableCommandsUpdate  # what this agent sends of ACP's `session/update`s


class Sender(Protocol):
    async def session_update(self, session_id: str, update: Sent, **kwargs: object) -> None: ...


_Entry = tuple[str, Sent] | asyncio.Future[None]


class Outbox:
    def __init__(self, tasks: Supervisor) -> None:
        self._tasks = tasks
        self._queue: asyncio.Queue[_Entry] = asyncio.Queue()
        self._task: Activity | None = None

    def start(self, conn: Sender) -> None:
        # The sender is an activity of the agent's supervisor (main.py): it ends with the agent.
        self._task = self._tasks.spawn(partial(self._run, conn), "acp-outbox")

    def put(self, session_id: str, update: Sent) -> None:
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        if self._task is None or self._task.finished:
            return
        marker: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(marker)
        await marker

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with anyio.move_on_after(CLOSE_WAIT_S):
                await self._task.wait()

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
