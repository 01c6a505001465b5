"""The daemon serves before its runtime is built (docs/design.md, "Serving before the runtime is
built"): `/healthz` answers with `"ready": false` while the runtime is built, a websocket opened
then is served once it is ready (not refused), and a start that fails while building still fails
the start with its reason.

The build is held at the wire: a model on a local Ollama whose window the daemon asks at start
(models/probe.py), answered by a server here that keeps the answer open until the test lets it
finish (it sends a space of the JSON body now and then, so the probe's read timeout never ends
it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from openvaala_server.exec import EXIT_NO_DAEMON
from openvaala_server.store.lock import is_locked, read_lock
from tests.fakes import local_servers as shapes
from tests.support.daemon import DEFAULT_CONFIG, Daemon

WAIT_S = 60.0  # generous: the machine may be loaded; nothing here is timed


class HeldOllama:
    """An Ollama whose `/api/show` answer is held until `release()`."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.released = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # for its chunked answer

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/api/show":
                    self.send_error(404)
                    return
                held.asked.set()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                body = json.dumps(shapes.ollama_show(40_960)).encode()
                # A daemon stopped meanwhile hangs up: nothing to answer then.
                with contextlib.suppress(OSError):
                    # Leading spaces are valid JSON; each keeps the probe's read timeout away.
                    while not held.released.wait(0.5):
                        self.wfile.write(b"1\r\n \r\n")
                        self.wfile.flush()
                    self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))

            def do_GET(self) -> None:
                self.send_error(404)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def release(self) -> None:
        self.released.set()


@contextmanager
def held_ollama() -> Iterator[HeldOllama]:
    held = HeldOllama()
    thread = threading.Thread(target=held.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        held.release()
        held.server.shutdown()
        held.server.server_close()


def ollama_config(url: str) -> str:
    return (
        f'[models.local]\nprovider = "openai"\nmodel = "qwen3:8b"\nbase_url = "{url}"\n'
        'ollama = true\n\n[agents.default]\nmodel = "local"\n'
    )


def health(address: str) -> dict[str, Any]:
    answer = httpx.get(f"http://{address}/healthz", timeout=WAIT_S)
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


class RawWebSocket:
    """A websocket client on a plain socket (websockets' sans-I/O protocol), so that the test
    knows its upgrade request has been sent before it goes on."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.protocol: ClientProtocol | None = None

    async def send_upgrade(self, address: str, token: str) -> None:
        self.protocol = ClientProtocol(parse_uri(f"ws://{address}/ws"))
        request = self.protocol.connect()
        request.headers["Authorization"] = f"Bearer {token}"
        self.protocol.send_request(request)
        await self._flush()

    async def _flush(self) -> None:
        assert self.protocol is not None
        self.writer.write(b"".join(self.protocol.data_to_send()))
        await self.writer.drain()

    async def next_event(self) -> Response | Frame:
        assert self.protocol is not None
        while True:
            events = self.protocol.events_received()
            if events:
                event = events[0]
                assert isinstance(event, (Response, Frame))
                return event
            data = await asyncio.wait_for(self.reader.read(65536), WAIT_S)
            assert data, "the daemon closed the connection"
            self.protocol.receive_data(data)

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.protocol is not None
        frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        self.protocol.send_text(json.dumps(frame).encode())
        await self._flush()
        while True:
            event = await self.next_event()
            if isinstance(event, Frame) and event.opcode == Opcode.TEXT:
                message = json.loads(bytes(event.data))
                if message.get("id") == 1:
                    return message["result"]


async def test_a_websocket_opened_while_the_runtime_is_built_is_served_once_ready(
    daemon_factory: Callable[..., Daemon],
) -> None:
    with held_ollama() as ollama:
        d = daemon_factory(config=ollama_config(ollama.url), start=False)
        starting = threading.Thread(target=d.start)  # returns once the daemon is ready
        starting.start()
        try:
            assert await asyncio.to_thread(ollama.asked.wait, WAIT_S)
            info = read_lock(d.data_dir.lock_path)
            assert info is not None and info.address  # the lock names it before it is ready
            address, token = info.address, d.data_dir.token_path.read_text().strip()
            assert await asyncio.to_thread(health, address) == {"status": "ok", "ready": False}

            host, port = address.rsplit(":", 1)
            ws = RawWebSocket(*await asyncio.open_connection(host, int(port)))
            await ws.send_upgrade(address, token)
            # Still building after the upgrade was sent: it was made before the runtime existed.
            assert (await asyncio.to_thread(health, address))["ready"] is False

            ollama.release()
            handshake = await ws.next_event()
            assert isinstance(handshake, Response) and handshake.status_code == 101
            hello = {"clientInfo": {"name": "early", "version": "0"}, "protocolVersion": 1}
            assert "serverInfo" in await ws.request("initialize", hello)
            models = (await ws.request("models/list", {}))["models"]
            # The runtime it reached is the one built with the window the server told.
            assert next(m for m in models if m["name"] == "local")["contextWindow"] == 40_960
            ws.writer.close()
        finally:
            ollama.release()
            await asyncio.to_thread(starting.join, WAIT_S)
        assert (await asyncio.to_thread(health, address)) == {"status": "ok", "ready": True}


def test_exec_reports_a_start_that_fails_while_building(
    daemon_factory: Callable[..., Daemon],
) -> None:
    """The daemon answers `/healthz` before its store is opened: a client that starts it waits
    for `ready`, so an index that cannot be opened is still a failed start, with its reason."""
    d = daemon_factory(DEFAULT_CONFIG, start=False)
    d.data_dir.ensure()
    d.data_dir.metadata_db.mkdir()
    done = d.cli("exec", "hello", timeout=WAIT_S)
    assert done.returncode == EXIT_NO_DAEMON, done.stderr
    assert "could not start the OpenVaala server: the server exited at start (code 1)" in (
        done.stderr
    )
    assert "metadata.db is a directory" in done.stderr


def start_stopped(d: Daemon) -> None:
    """`d.start()` for a daemon the test stops before it is ready."""
    with contextlib.suppress(RuntimeError):  # "daemon exited at start": the test stopped it
        d.start()


async def test_a_stop_while_the_runtime_is_built_is_clean(
    daemon_factory: Callable[..., Daemon],
) -> None:
    """SIGTERM while the runtime is being built: what waited is turned away, the store is closed
    as at any stop (its clean-close mark written), the token removed, the lock released."""
    with held_ollama() as ollama:
        d = daemon_factory(config=ollama_config(ollama.url), start=False)
        starting = threading.Thread(target=start_stopped, args=(d,))
        starting.start()
        try:
            assert await asyncio.to_thread(ollama.asked.wait, WAIT_S)
            info = read_lock(d.data_dir.lock_path)
            assert info is not None and info.address
            host, port = info.address.rsplit(":", 1)
            ws = RawWebSocket(*await asyncio.open_connection(host, int(port)))
            await ws.send_upgrade(info.address, d.data_dir.token_path.read_text().strip())
            assert d.process is not None
            d.process.send_signal(signal.SIGTERM)
            # The waiting upgrade is answered, not left hanging: refused as the server stops.
            with contextlib.suppress(AssertionError, ConnectionError):
                answer = await ws.next_event()
                assert isinstance(answer, Response) and answer.status_code != 101
            ws.writer.close()
            code = await asyncio.to_thread(d.process.wait, WAIT_S)
        finally:
            ollama.release()
            await asyncio.to_thread(starting.join, WAIT_S)
    assert code == 0, d.log()
    assert not d.data_dir.token_path.exists()
    assert not is_locked(d.data_dir.lock_path)
    mark = d.data_dir.metadata_db.with_name(d.data_dir.metadata_db.name + ".closed")
    assert mark.exists(), d.log()
    assert "Traceback" not in d.log()
