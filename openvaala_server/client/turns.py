"""Which turn took an input, and how each turn ended: what `openvaala/prompt` waits on.

Events and request results race (an input's turn can start before `input/send` answers), so both
sides meet on futures keyed by inputId and turnId; settled ones are kept for a while, pending ones
only as long as someone waits."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from typing import Generic, TypeVar

from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject, JsonValue

KEEP = 512
T = TypeVar("T")


class _Futures(Generic[T]):
    def __init__(self) -> None:
        self._map: OrderedDict[str, asyncio.Future[T]] = OrderedDict()

    def get(self, key: str) -> asyncio.Future[T]:
        future = self._map.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._map[key] = future
        return future

    def settle(self, key: str, value: T) -> None:
        future = self.get(key)
        if not future.done():
            future.set_result(value)
        self._map.move_to_end(key)
        while len(self._map) > KEEP:
            oldest, first = next(iter(self._map.items()))
            if not first.done():
                break
            del self._map[oldest]

    def peek(self, key: str) -> T | None:
        future = self._map.get(key)
        if future is None or not future.done() or future.cancelled():
            return None
        return future.result()

    def fail_pending(self, exc: BaseException) -> None:
        for key, future in list(self._map.items()):
            if not future.done():
                future.set_exception(exc)
                del self._map[key]

    def drop_pending(self, key: str) -> None:
        future = self._map.get(key)
        if future is not None and not future.done():
            del self._map[key]
            future.cancel()


class TurnTracker:
    def __init__(self) -> None:
        self._turn_of_input: _Futures[str] = _Futures()
        self._ended: _Futures[JsonObject] = _Futures()  # the `turn/ended` params
        self.epoch = 0  # connections lost so far: turns from an older epoch never end

    def observe(self, method: str, params: Mapping[str, JsonValue]) -> None:
        if method == methods.ITEM_COMPLETED:
            item = params.get("item")
            if not isinstance(item, dict):
                return
            if item.get("type") == "user_message" and item.get("inputId") and item.get("turnId"):
                self._turn_of_input.settle(str(item["inputId"]), str(item["turnId"]))
        elif method == methods.TURN_ENDED and params.get("turnId"):
            self._ended.settle(str(params["turnId"]), dict(params))

    def lose(self, exc: BaseException) -> None:
        """The daemon went away: whoever waits for a turn gets `exc` instead of waiting forever,
        and turns that were running never end (a new daemon does not continue them)."""
        self._turn_of_input.fail_pending(exc)
        self._ended.fail_pending(exc)
        self.epoch += 1

    async def turn_of(self, input_id: str) -> str:
        future = self._turn_of_input.get(input_id)
        try:
            return str(await asyncio.shield(future))
        finally:
            if not future.done():
                self._turn_of_input.drop_pending(input_id)

    def known_turn_of(self, input_id: str) -> str | None:
        turn_id = self._turn_of_input.peek(input_id)
        return str(turn_id) if turn_id is not None else None

    def has_ended(self, turn_id: str) -> bool:
        return self._ended.peek(turn_id) is not None

    async def ended(self, turn_id: str) -> JsonObject:
        future = self._ended.get(turn_id)
        try:
            return await asyncio.shield(future)
        finally:
            if not future.done():
                self._ended.drop_pending(turn_id)
