"""`openvaala web --remote HOST`: this machine's browser on the remote daemon's web UI
(docs/remote.md, "The browser").

ssh forwards a Unix socket in a private directory here to the remote daemon's 127.0.0.1:P
(`ssh -N -L`), and a small proxy here (`web_proxy.py`) serves the browser on 127.0.0.1:L,
naming the daemon as its Host and Origin checks want (docs/security.md). The one-time code is
asked for through the bridge (which adds the remote token over there) and goes, as locally, into a
private sign-in file here (`api/login_page.py`): no secret on a command line of either machine.
The command stays in the foreground while the browser uses the forward; Ctrl-C ends it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from openvaala_server.client.backoff import BACKOFF
from openvaala_server.client.http_exchange import exchange
from openvaala_server.client.remote import Dialer, Remote, RemoteUnavailable, forward_command
from openvaala_server.protocol import codec
from openvaala_server.remote.web_proxy import Proxy

FORWARD_READY_S = 30.0


class WebFailed(Exception):
    """The forward or the sign-in could not be set up (the message says which step)."""


def open_web(remote: Remote) -> int:
    try:
        return asyncio.run(_open_web(remote))
    except KeyboardInterrupt:
        return 0


async def _open_web(remote: Remote) -> int:
    local = os.path.join(tempfile.mkdtemp(prefix="openvaala-web-"), "forward.sock")  # 0700
    try:
        return await _serve_web(remote, local)
    finally:
        shutil.rmtree(os.path.dirname(local), ignore_errors=True)


async def _serve_web(remote: Remote, local: str) -> int:
    try:
        tunnel, daemon, sock = await _forward(remote, local)
    except (WebFailed, RemoteUnavailable, OSError) as exc:
        print(f"openvaala: could not open the web UI of {remote.host}: {exc}", file=sys.stderr)
        return 1
    proxy = Proxy(tunnel.socket, daemon)
    stop = _stop_on_signals()
    try:
        here = await proxy.start()
        answer = await exchange(sock, "POST", "/login/code", host="localhost", token=None)
        if answer.status != 200:
            raise WebFailed(f"the daemon refused a sign-in code (HTTP {answer.status})")
        code = str(codec.parse(answer.body)["code"])
        await asyncio.to_thread(_open_browser, remote, here, code)
        while not await _until_stopped(tunnel.process, stop):
            # ssh dropped: forward again, as every client reconnects (docs/remote.md, "When
            # ssh drops"); the browser's own reconnection then finds the daemon again.
            _stop(tunnel.process)
            print(
                f"openvaala: the ssh forward to {remote.host} dropped; opening it again",
                file=sys.stderr,
                flush=True,
            )
            again = await _forward_again(remote, local, stop)
            if again is None:
                break
            tunnel, proxy.daemon = again
    except (WebFailed, OSError, ValueError, KeyError) as exc:
        print(f"openvaala: could not open the web UI of {remote.host}: {exc}", file=sys.stderr)
        return 1
    finally:
        sock.close()
        await proxy.close()
        _stop(tunnel.process)
    return 0


async def _forward_again(
    remote: Remote, local: str, stop: asyncio.Event
) -> tuple[Tunnel, str] | None:
    """A new forward to the daemon there (a new one, when it restarted meanwhile), with the
    clients' backoff until it is up; None once stopped (Ctrl-C) first."""
    delays = BACKOFF.delays()
    while not stop.is_set():
        try:
            tunnel, daemon, sock = await _forward(remote, local)
            sock.close()
            return tunnel, daemon
        except (WebFailed, RemoteUnavailable, OSError) as exc:
            print(f"openvaala: {exc}; trying again", file=sys.stderr, flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), next(delays))
    return None


def _open_browser(remote: Remote, here: str, code: str) -> None:
    from openvaala_server.api.login_page import open_in_browser, write_page
    from openvaala_server.store.paths import DataDir

    page = write_page(DataDir.resolve().root, f"http://{here}", code)
    open_in_browser(page, f"http://{here}/ ({remote.host}'s daemon, forwarded by ssh)")
    print("Keep this running while you use it; Ctrl-C ends the forward.", flush=True)


@dataclass
class Tunnel:
    process: subprocess.Popen[bytes]
    socket: str  # its local end, in a directory of this user's only


async def _forward(remote: Remote, local: str) -> tuple[Tunnel, str, socket.socket]:
    """The bridge (which starts the daemon there and names its address; the sign-in code is
    asked for on it), and `ssh -N -L` from the socket `local` to that address, once `local`
    answers."""
    dialer = Dialer(remote)
    sock = await dialer.open()
    try:
        assert dialer.banner is not None
        daemon = dialer.banner.address
        tunnel = await _tunnel(remote, int(daemon.rpartition(":")[2]), local)
    except BaseException:
        sock.close()
        raise
    return tunnel, daemon, sock


async def _tunnel(remote: Remote, port: int, local: str) -> Tunnel:
    with contextlib.suppress(FileNotFoundError):  # a dropped forward's: ssh binds a new one
        os.unlink(local)
    process = _start_tunnel(remote, local, port)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + FORWARD_READY_S
    while not await asyncio.to_thread(_answers, local):
        if process.poll() is not None or loop.time() > deadline:
            if process.poll() is None:
                process.terminate()
            process.wait()
            said = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
            _stop(process)
            raise WebFailed(f"ssh could not forward to port {port} there: {said or 'no answer'}")
        await asyncio.sleep(0.05)  # ssh sets the listener up after it has logged in
    return Tunnel(process, local)


def _stop_on_signals() -> asyncio.Event:
    """Set on SIGINT / SIGTERM here (Ctrl-C ends the command)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _until_stopped(process: subprocess.Popen[bytes], stop: asyncio.Event) -> bool:
    """Until ssh ends (False) or `stop` is set (True)."""
    ended = asyncio.ensure_future(asyncio.to_thread(process.wait))
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait([ended, stopping], return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not ended.done():
        process.terminate()
        await ended
        return True
    return stop.is_set()


def _start_tunnel(remote: Remote, local: str, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        forward_command(remote, local, port),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # Ctrl-C is this command's to handle: it ends the forward
    )


def _answers(path: str) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(2)
            probe.connect(path)
            return True
    except OSError:
        return False


def _stop(tunnel: subprocess.Popen[bytes]) -> None:
    """End ssh (and with it the forward), and wait for it."""
    if tunnel.poll() is None:
        tunnel.terminate()
        try:
            tunnel.wait(10)
        except subprocess.TimeoutExpired:
            tunnel.kill()
            tunnel.wait()
    if tunnel.stderr is not None:
        tunnel.stderr.close()
