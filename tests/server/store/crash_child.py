"""A separate process for the crash and lock tests: ``python -m tests.server.store.crash_child``.

Modes:
  append HOME CONVERSATIONS   create conversations, then append items to all of them at once,
                              printing ``ack <cid> <n>`` after each append is acknowledged
  delete HOME STEPS           create a conversation, print ``ready <cid>``, run STEPS of the
                              delete's three steps, print ``stopped`` and SIGKILL itself
  lock PATH ADDRESS           take the runtime lock, print ``locked``, sleep
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from openvaala_server.store.lock import RuntimeLock
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import created, message


async def append(home: Path, count: int) -> None:
    store = await Store.open(DataDir(home))
    conversations = []
    for n in range(count):
        c = created(f"crash {n}")
        await store.create_conversation(c)
        conversations.append((c["conversationId"], c["rootSessionId"]))
        print(f"created {c['conversationId']} {c['rootSessionId']}", flush=True)

    async def writer(cid: str, sid: str) -> None:
        n = 0
        while True:
            await store.append_items(cid, sid, [message(f"n{n} " + "x" * (n % 300))])
            print(f"ack {cid} {n}", flush=True)
            n += 1

    await asyncio.gather(*(writer(cid, sid) for cid, sid in conversations))


async def delete(home: Path, steps: int) -> None:
    store = await Store.open(DataDir(home))
    c = created("doomed")
    cid = c["conversationId"]
    await store.create_conversation(c)
    await store.append_items(cid, c["rootSessionId"], [message("last words")])
    print(f"ready {cid}", flush=True)
    for step in (store._delete_mark, store._delete_unindex, store._delete_remove)[:steps]:
        await step(cid)
    print("stopped", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def lock(path: Path, address: str) -> None:
    held = RuntimeLock(path)
    held.acquire()
    held.set_address(address)
    print("locked", flush=True)
    time.sleep(60)


if __name__ == "__main__":
    mode, target, arg = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if mode == "append":
        asyncio.run(append(target, int(arg)))
    elif mode == "delete":
        asyncio.run(delete(target, int(arg)))
    else:
        lock(target, arg)
