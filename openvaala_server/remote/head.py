"""The one HTTP request head a bridge forwards, rewritten for the daemon behind it (pure).

A client over ssh does not know the remote daemon's port nor its token: the bridge names the
daemon as `Host` (the daemon accepts only its own address, docs/security.md) and adds the token,
dropping whatever the client put in those two headers."""

from __future__ import annotations

END = b"\r\n\r\n"
LIMIT = 64 * 1024  # a request head longer than this is not one of our clients'


class BadHead(ValueError):
    """The stream did not start with an HTTP request head."""


def split(buffer: bytes) -> tuple[bytes, bytes] | None:
    """(head including its blank line, what follows) once the head is complete, else None."""
    end = buffer.find(END)
    if end < 0:
        if len(buffer) > LIMIT:
            raise BadHead("request head over 64 KiB")
        return None
    return buffer[: end + len(END)], buffer[end + len(END) :]


def rewrite(head: bytes, address: str, token: str) -> bytes:
    """`head` with `Host: address` and `Authorization: Bearer token` in place of the client's."""
    lines = head[: -len(END)].split(b"\r\n")
    request_line, fields = lines[0], lines[1:]
    if request_line.count(b" ") != 2 or not request_line.endswith((b"HTTP/1.1", b"HTTP/1.0")):
        raise BadHead(f"not an HTTP request: {request_line[:80]!r}")
    kept = [
        f for f in fields if f.split(b":", 1)[0].strip().lower() not in (b"host", b"authorization")
    ]
    added = [b"Host: " + address.encode(), b"Authorization: Bearer " + token.encode()]
    return b"\r\n".join([request_line, *added, *kept]) + END
