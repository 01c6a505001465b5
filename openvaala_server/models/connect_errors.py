"""Which failed connections are configuration mistakes (docs/configuration.md, "Fail fast").

A refused connection, an unknown host or a failed TLS handshake repeats on every attempt: the
model's `base_url` is wrong, or its server is not running. Retrying them for minutes (the retry
policy's ten attempts) only hides the mistake, so `http.transport_error` fails such a call at
once. A reset, a time-out or a name server that did not answer may pass: those are still retried.
Pure: it reads the exception chain httpx raised (httpx → httpcore → anyio → the OSError).
"""

from __future__ import annotations

import errno
import socket
import ssl


def connect_mistake(exc: BaseException) -> str | None:
    """What a failed connection says about the configuration: "connection refused" (nothing
    listens at base_url's port), "unknown host", a TLS failure; None for a passing failure (a
    reset, a timeout, a name server that did not answer) that a retry may get past."""
    causes = _causes(exc)
    for cause in causes:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"its TLS certificate was refused ({cause.verify_message})"
        if isinstance(cause, ssl.SSLError):
            return f"TLS failed ({cause.reason or type(cause).__name__}; http:// server?)"
        if isinstance(cause, socket.gaierror) and cause.errno != socket.EAI_AGAIN:
            return "unknown host"
    # All the addresses tried (IPv6 and IPv4 of "localhost") refused the connection.
    refused = [c for c in causes if isinstance(c, ConnectionRefusedError)]
    others = [c for c in causes if isinstance(c, OSError) and c.errno not in (None, *_REFUSED)]
    if refused and not others:
        return "connection refused (is the server running?)"
    return None


_REFUSED = (errno.ECONNREFUSED,)


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, what caused it, and the members of exception groups among them."""
    found: list[BaseException] = []
    pending = [exc]
    while pending and len(found) < 32:
        cause = pending.pop()
        if any(cause is seen for seen in found):
            continue
        found.append(cause)
        if isinstance(cause, BaseExceptionGroup):
            pending.extend(cause.exceptions)
        for nxt in (cause.__cause__, cause.__context__):
            if nxt is not None:
                pending.append(nxt)
    return found
