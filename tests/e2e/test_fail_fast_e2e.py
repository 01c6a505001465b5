"""Configuration mistakes fail the call at once, through the real daemon, with a message naming
the model's table and the setting to fix: nothing listening at base_url, an unknown host, a TLS
handshake with a plain-HTTP server, a refused key (401), an unknown model (404). A 503 is still
retried. The daemon keeps its default retry policy (10 retries from 1 s): a retried mistake
would show as `retry/scheduled` and as a second request to the fake."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from openvaala_server.client import Client
from tests.fakes.providers import API_KEY_ENV, FakeProvider
from tests.fakes.script import Reply
from tests.support.daemon import Daemon
from tests.support.events import new_conversation, run_turn
from tests.support.running import running_daemon

Setup = tuple[FakeProvider, Daemon]


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A port bound but never listened on, for the module's life: a connection is refused, and
    no daemon another test starts with `--port 0` can take it meanwhile (a port closed again
    could be, and then answered)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@contextlib.contextmanager
def plain_http_server() -> Iterator[int]:
    """A server that answers every connection at once in plain HTTP, whatever was sent: a TLS
    handshake gets bytes that are not TLS. (An HTTP server that first waits for a request line
    would wait on a ClientHello with no newline in it until the client's time-out.)"""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        listener.close()
        thread.join(5)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    with FakeProvider() as fake, plain_http_server() as plain, refusing_port() as refused:
        tables = {
            "refused": {"base_url": f"http://127.0.0.1:{refused}/v1"},
            "nohost": {"base_url": "http://no-such-host.invalid/v1"},
            "tls": {"base_url": f"https://127.0.0.1:{plain}/v1"},
            "badkey": {"api_key_env": "OPENVAALA_TEST_WRONG_KEY"},
            "good": {},
        }
        config = "".join(fake.config_toml(name, **extra) + "\n" for name, extra in tables.items())
        config += '[agents.default]\nmodel = "good"\n'
        config += "[retry]\nbase_delay_s = 0.01\nmax_delay_s = 0.05\n"
        env = {API_KEY_ENV: fake.api_key or "", "OPENVAALA_TEST_WRONG_KEY": "sk-not-the-right-one"}
        with running_daemon(tmp_path_factory.mktemp("fail-fast"), config, env) as d:
            yield fake, d


@pytest.fixture
async def client(setup: Setup) -> AsyncIterator[Client]:
    fake, d = setup
    fake.reset()
    c = await d.client()
    yield c
    await c.close()


async def failed_turn(setup: Setup, client: Client, model: str) -> dict[str, object]:
    """The error of a turn on `model`, after checking it was not retried."""
    _, d = setup
    cid = await new_conversation(client, str(d.workdir), model=model)
    notes = await run_turn(client, cid, "hello")
    assert [n for n in notes if n["method"] == "retry/scheduled"] == []
    ended = notes[-1]["params"]
    assert ended["status"] == "failed"
    error: dict[str, object] = ended["error"]
    return error


async def test_nothing_listening_at_base_url(setup: Setup, client: Client) -> None:
    error = await failed_turn(setup, client, "refused")
    assert "connection refused" in str(error["message"])
    assert "check base_url in [models.refused]" in str(error["message"])


async def test_an_unknown_host(setup: Setup, client: Client) -> None:
    error = await failed_turn(setup, client, "nohost")
    assert "unknown host: check base_url in [models.nohost]" in str(error["message"])


async def test_https_to_a_plain_http_server(setup: Setup, client: Client) -> None:
    fake, _ = setup
    error = await failed_turn(setup, client, "tls")
    assert "TLS failed" in str(error["message"])
    assert "check base_url in [models.tls]" in str(error["message"])
    assert len(fake.requests) <= 1 and all(r.wire is None for r in fake.requests)


async def test_a_refused_key(setup: Setup, client: Client) -> None:
    fake, _ = setup
    error = await failed_turn(setup, client, "badkey")
    assert error["kind"] == "auth_failed"
    assert "OPENVAALA_TEST_WRONG_KEY (api_key_env in [models.badkey])" in str(error["message"])
    assert "sk-not-the-right-one" not in str(error["message"])
    assert len(fake.requests) == 1


async def test_a_model_the_server_does_not_have(setup: Setup, client: Client) -> None:
    fake, _ = setup
    fake.enqueue(Reply.not_found())
    error = await failed_turn(setup, client, "good")
    assert error["kind"] == "model_not_found"
    assert "check model = 'fake-model' and base_url in [models.good]" in str(error["message"])
    assert len(fake.requests) == 1


async def test_a_503_is_still_retried(setup: Setup, client: Client) -> None:
    fake, d = setup
    fake.enqueue(Reply.server_error(503), Reply().text("back"))
    cid = await new_conversation(client, str(d.workdir), model="good")
    notes = await run_turn(client, cid, "hello")
    assert [n["params"]["attempt"] for n in notes if n["method"] == "retry/scheduled"] == [1]
    assert notes[-1]["params"]["status"] == "completed"
    assert [r.status for r in fake.requests] == [503, 200]
