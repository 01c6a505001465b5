"""The Python client library of the OpenVaala protocol, used by the terminal UI, the editor
bridge, the ACP agent, `openvaala exec` and the tests.

It imports nothing of the runtime, the store or the HTTP server (a test checks): it finds the
daemon through `openvaala_server.discovery`, speaks JSON-RPC through `openvaala_server.protocol`
and folds the event stream in `view` (docs/design.md, "One client library")."""

from openvaala_server.client.connection import (
    CONNECTION,
    SNAPSHOT,
    Client,
    ConnectionLost,
    RpcError,
)
from openvaala_server.client.daemon import ensure_server, find_server, start_server_early

__all__ = [
    "CONNECTION",
    "SNAPSHOT",
    "Client",
    "ConnectionLost",
    "RpcError",
    "ensure_server",
    "find_server",
    "start_server_early",
]
