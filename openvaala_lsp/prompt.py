"""`openvaala/prompt`: send a message, then answer when the turn that took it ends.

Cancelling the request interrupts that turn (or withdraws the message if it was still waiting):
the handler keeps running after `$/cancelRequest` and answers with the real outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol, TypeVar

import anyio

from openvaala_lsp.bridge import Bridge, DaemonError, daemon_lost
from openvaala_lsp.params import Params, session_params
from openvaala_lsp.replies import Prompted, UsageReport
from openvaala_server.protocol import methods, payloads

T = TypeVar("T")


class Actions(Protocol):
    """What a prompt uses of the editor actions (actions.Actions, which calls `run`)."""

    @property
    def bridge(self) -> Bridge: ...

    async def send(self, params: Params) -> payloads.SendResult: ...

    async def usage(self, params: Params) -> UsageReport: ...


async def run(actions: Actions, params: Params) -> Prompted:
    cancel = asyncio.Event()
    inner = asyncio.create_task(_prompt(actions, params, cancel))
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError:  # $/cancelRequest: interrupt, then answer anyway
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        cancel.set()
        return await inner


async def _prompt(actions: Actions, params: Params, cancel: asyncio.Event) -> Prompted:
    bridge, turns = actions.bridge, actions.bridge.turns
    sent = await actions.send(params)
    epoch = turns.epoch
    input_id = str(sent["inputId"])
    turn_id = await _unless(turns.turn_of(input_id), cancel)
    ended = None
    if turn_id is not None:
        ended = await _unless(turns.ended(turn_id), cancel)
    if ended is None:  # cancelled
        if turns.epoch != epoch:  # the daemon that had the message is gone
            raise daemon_lost()
        turn_id = turn_id or turns.known_turn_of(input_id)
        if turn_id is None:
            try:
                await bridge.request(methods.INPUT_WITHDRAW, {"inputId": input_id})
                return {"turnId": None, "status": "withdrawn", "inputId": input_id}
            except DaemonError:  # taken into a turn meanwhile
                turn_id = await turns.turn_of(input_id)
        if not turns.has_ended(turn_id):
            await bridge.request(methods.TURN_INTERRUPT, session_params(params))
        if turns.epoch != epoch:
            raise daemon_lost()
        ended = await turns.ended(turn_id)
    sid = ended.get("sessionId")
    result: Prompted = {
        "turnId": turn_id,
        "status": ended.get("status"),
        "inputId": input_id,
        "sessionId": sid,
        "usage": await actions.usage({**params, "sessionId": sid}),
    }
    if ended.get("error"):
        result["error"] = ended["error"]
    return result


async def _unless(work: Awaitable[T], cancel: asyncio.Event) -> T | None:
    """The result of `work`, or None if `cancel` is set first.

    Both waits are tasks of one task group, so neither outlives this call. `work` waits on the
    daemon; it cannot wait forever on one that stopped answering: the connection's keepalive
    closes it then, and the bridge fails every waiter (`TurnTracker.lose`)."""
    outcome: list[T] = []
    failure: list[Exception] = []

    async def finish() -> None:
        try:
            outcome.append(await work)
        except Exception as exc:  # raised as itself below, not inside an exception group
            failure.append(exc)
        group.cancel_scope.cancel()

    async def stop() -> None:
        await cancel.wait()
        group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(finish)
        group.start_soon(stop)
    if failure:
        raise failure[0]
    return outcome[0] if outcome else None
