"""The one HTTP request head a bridge forwards, rewritten for the daemon behind it (pure).

A client over ssh does not know the remote daemon's port nor its token: the bridge names the
daemon as `Host` (the daemon accepts only its own address, docs/security.md) and adds the token,
dropping whatever the client put in those two headers."""

from __future__ import annotations

from dataclasses import dataclass

END = b"\r\n\r\n"
LIMIT = 64 * 1024  # a request head longer than this is not one of our clients'


class BadHead(ValueError):
    """The stream did not start with an HTTP request head."""


class WrongHost(BadHead):
    """A browser's request named another host than the proxy's own: a page of another site
    whose name was pointed at 127.0.0.1 (DNS rebinding, docs/security.md)."""


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


@dataclass(frozen=True)
class Forward:
    """A browser's request head as the daemon must see it, and what follows it."""

    head: bytes
    length: int  # the body's bytes after the head
    upgrade: bool  # a websocket: after this head the connection is a plain relay


def for_browser(head: bytes, daemon: str, here: str) -> Forward:
    """A request the browser sent to `here` (the local forward, 127.0.0.1:L), for the daemon at
    `daemon`: its Host, and its Origin when it is `here`'s, become the daemon's own (any other
    Origin is kept, for the daemon to refuse). The Host must be `here` (or localhost:L), once:
    the daemon's own Host check, which this rewriting would otherwise defeat, is made here
    (`WrongHost`). A chunked body is refused: no page of ours sends one."""
    lines = head[: -len(END)].split(b"\r\n")
    port = here.rpartition(":")[2]
    ours = {here.encode(), f"localhost:{port}".encode()}
    hosts = [
        f.partition(b":")[2].strip()
        for f in lines[1:]
        if f.partition(b":")[0].strip().lower() == b"host"
    ]
    if len(hosts) != 1 or hosts[0] not in ours:
        raise WrongHost(f"Host not allowed: {b', '.join(hosts)[:80]!r}")
    fields = []
    length = 0
    upgrade = False
    for field in lines[1:]:
        name, _, value = field.partition(b":")
        key, value = name.strip().lower(), value.strip()
        if key == b"host":
            field = b"Host: " + daemon.encode()
        elif key == b"origin" and value == b"http://" + hosts[0]:
            field = b"Origin: http://" + daemon.encode()
        elif key == b"content-length":
            if not value.isdigit():
                raise BadHead("a malformed Content-Length")
            length = int(value)
        elif key == b"transfer-encoding":
            raise BadHead("a chunked request body")
        elif key == b"upgrade":
            upgrade = True
        fields.append(field)
    return Forward(b"\r\n".join([lines[0], *fields]) + END, length, upgrade)
