"""The local proxy of `web --remote` (remote/web_proxy.py) in front of a real daemon, standing
for the ssh forward's local end: it hands on the requests of the browser that asked for it, and
nothing a page of another site can send through a name pointed at 127.0.0.1 (docs/security.md,
"Another machine, over ssh")."""

from __future__ import annotations

import asyncio

from openvaala_server.remote.web_proxy import Proxy
from tests.support.daemon import Daemon


async def _get(here: str, host: str) -> bytes:
    """`GET /healthz` to the proxy with `host` as the Host, as a browser sends it; the answer."""
    address, _, port = here.rpartition(":")
    reader, writer = await asyncio.open_connection(address, int(port))
    writer.write(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return answer


async def test_the_proxy_refuses_a_rebound_host_the_daemon_would_have_refused(
    daemon: Daemon,
) -> None:
    host, _, port = daemon.address.rpartition(":")
    proxy = Proxy((host, int(port)), daemon.address)
    here = await proxy.start()
    try:
        assert (await _get(here, here)).startswith(b"HTTP/1.1 200")  # the browser's own
        # evil.test resolved to 127.0.0.1 (DNS rebinding): locally the daemon's Host check
        # refuses it; through the proxy, which names the daemon as Host, only the proxy can.
        rebound = await _get(here, f"evil.test:{here.rpartition(':')[2]}")
        assert not rebound.startswith(b"HTTP/1.1 200"), rebound
    finally:
        await proxy.close()
