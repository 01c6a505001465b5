"""The client library stands on its own: importing it loads nothing of the runtime, the store,
the HTTP server or the model providers (docs/design.md, "One client library")."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = (
    "openvaala_server.runtime",
    "openvaala_server.store",
    "openvaala_server.api",
    "openvaala_server.server",
    "openvaala_server.models",
    "openvaala_server.tools",
    "openvaala_server.mcp",
)


def test_the_client_library_imports_nothing_of_the_server() -> None:
    code = (
        # The package loads its parts at first use (client/__init__.py): ask for them.
        "import sys\nfrom openvaala_server.client import Client, ensure_server\n"
        "import openvaala_server.client.images, openvaala_server.client.view\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('openvaala'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "openvaala_server.client.connection" in out
    leaked = [m for m in out if m.startswith(FORBIDDEN)]
    assert leaked == [], f"the client library pulls in server modules: {leaked}"
