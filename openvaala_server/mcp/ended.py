"""A server's read stream that says when it ended.

The SDK's session ends its receive loop when the transport's read stream ends (a stdio server's
process exited and its stdout closed; an HTTP transport closed its stream), but signals that to
nobody until the next request fails. `Watched` passes every message through unchanged to the
session and sets `ended` once the stream has ended or was closed, so a connection can wait on
that event instead of polling (docs/design.md, "MCP in editors, and servers that misbehave
quietly")."""

from __future__ import annotations

from types import TracebackType
from typing import Generic, Protocol, Self, TypeVar

import anyio

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Source(Protocol[T_co]):
    """What is read of the transport's stream (an anyio memory stream)."""

    async def receive(self) -> T_co: ...

    async def aclose(self) -> None: ...


class Watched(Generic[T]):
    """`stream` as the session reads it (the SDK's `ReadStream`), with `ended` set when it
    ends."""

    def __init__(self, stream: Source[T]) -> None:
        self._stream = stream
        self.ended = anyio.Event()

    @property
    def last_context(self) -> object:
        # What the SDK's dispatcher reads from a stream that carries the sender's context.
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> T:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended.set()
            raise

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        try:
            await self._stream.aclose()
        finally:
            self.ended.set()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
