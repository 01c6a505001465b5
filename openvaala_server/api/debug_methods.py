"""`debug/tasks`: what the daemon is running, for tests of its structure (docs/protocol.md
"Debugging").

Offered only when the daemon was started with `OPENVAALA_DEBUG_TASKS=1` in its environment: a
count of the event loop's tasks is no business of a client otherwise, and an unknown method is
the answer a normal daemon gives.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypedDict

from openvaala_server.api.connection import Connection
from openvaala_server.protocol.params import Params

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

ENV = "OPENVAALA_DEBUG_TASKS"


class TasksResult(TypedDict):
    count: int  # every task of the event loop, this request's own included
    byName: dict[str, int]  # by the name of the coroutine each runs
    activities: list[str]  # the runtime supervisor's activities (turns, MCP servers), by name


Handler = Callable[[Connection, Params], Awaitable[TasksResult]]


def debug_methods(runtime: ConversationManager) -> dict[str, Handler]:
    if os.environ.get(ENV) != "1":
        return {}

    async def tasks(conn: Connection, p: Params) -> TasksResult:
        names = Counter(_coroutine_name(task) for task in asyncio.all_tasks())
        return {
            "count": sum(names.values()),
            "byName": dict(sorted(names.items())),
            "activities": sorted(a.name for a in runtime.tasks.activities),
        }

    return {"debug/tasks": tasks}


def _coroutine_name(task: asyncio.Task[object]) -> str:
    coro = task.get_coro()
    return getattr(coro, "__qualname__", None) or type(coro).__name__
