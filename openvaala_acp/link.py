"""The agent's one connection to the daemon: a `Link` of the client library, as the editor
bridge's is (docs/editors.md): connect on first use, starting a daemon if none runs; when the
daemon goes away, fail what waited on it with a clear error, connect again (starting a daemon if
none comes back) and resubscribe every open conversation.

Daemon errors become ACP errors with the daemon's code, message and `data.kind`."""

from __future__ import annotations

from acp import RequestError

from openvaala_acp import __version__
from openvaala_server.client import RpcError
from openvaala_server.client.link import DAEMON_LOST, UNAVAILABLE, Link, LinkErrors


def unavailable(message: str) -> RequestError:
    return RequestError(UNAVAILABLE, message, {"kind": "daemon_unavailable"})


def daemon_lost() -> RequestError:
    return RequestError(
        DAEMON_LOST,
        "the OpenVaala daemon stopped during this turn; the turn was cut short"
        " (openvaala acp starts a new daemon and keeps the session: send the message again)",
        {"kind": "daemon_lost"},
    )


def from_rpc(exc: RpcError) -> RequestError:
    return RequestError(exc.code, exc.message, {**exc.data, "kind": exc.kind})


class DaemonLink(Link):
    def __init__(self) -> None:
        super().__init__(
            f"openvaala-acp/{__version__}",
            LinkErrors(unavailable=unavailable, lost=daemon_lost, rpc=from_rpc),
            closing="openvaala acp is shutting down",
        )
