"""The Python client library of the OpenVaala protocol, used by the terminal UI, the editor
bridge, the ACP agent, `openvaala exec` and the tests.

It imports nothing of the runtime, the store or the HTTP server (a test checks): it finds the
daemon through `openvaala_server.discovery`, speaks JSON-RPC through `openvaala_server.protocol`
and folds the event stream in `view` (docs/design.md, "One client library")."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

# Imported at first use: the command line imports `client.remote` for every command, the daemon's
# `serve` too, and the connection's websockets client is a good part of a start (docs/design.md,
# "Serving before the runtime is built").
_MODULE_OF = {
    "CONNECTION": "connection",
    "SNAPSHOT": "connection",
    "Client": "connection",
    "ConnectionLost": "connection",
    "RpcError": "connection",
    "ensure_server": "daemon",
    "find_server": "daemon",
    "start_server_early": "daemon",
}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
