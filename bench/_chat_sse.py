"""The wire side of a scripted OpenAI Chat Completions server for benches: read one request,
answer with a chunked SSE stream. Each bench's server decides what to stream and when."""

from __future__ import annotations

import asyncio
import json

SSE_HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """The next request's body on a kept-alive connection; None once the client closed it."""
    if not await reader.readline():
        return None
    length = 0
    while (header := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = header.decode().partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return await reader.readexactly(length)


def content_frame(content: str | None) -> dict[str, object]:
    """A delta with `content`, or the closing `finish_reason: stop` frame when None."""
    delta = {"content": content} if content is not None else {}
    finish = None if content is not None else "stop"
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def write_frame(writer: asyncio.StreamWriter, frame: dict[str, object]) -> None:
    data = f"data: {json.dumps(frame)}\n\n".encode()
    writer.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")


def write_done(writer: asyncio.StreamWriter) -> None:
    """`data: [DONE]` and the chunked body's end."""
    done = b"data: [DONE]\n\n"
    writer.write(f"{len(done):X}\r\n".encode() + done + b"\r\n0\r\n\r\n")
