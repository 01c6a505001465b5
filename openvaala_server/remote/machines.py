"""A machine whose daemon takes a bundle: this one (over loopback TCP with its token) or another
(through ssh and its bridge). `export --remote`, `import --remote` and `move` go through these
(docs/remote.md, "Bundles between machines")."""

from __future__ import annotations

import asyncio
import socket
import urllib.parse
from dataclasses import dataclass
from typing import Any

from openvaala_server.client import Client
from openvaala_server.client.conversation_ids import resolve
from openvaala_server.client.daemon import ensure_server
from openvaala_server.client.http_exchange import Answer, exchange
from openvaala_server.client.remote import Dialer, Remote, on_remote
from openvaala_server.protocol import codec


class TransferFailed(Exception):
    """The daemon refused the bundle or could not make one (the message is its own)."""


@dataclass
class Machine:
    remote: Remote | None  # None: this machine

    @property
    def name(self) -> str:
        return self.remote.host if self.remote is not None else "this machine"

    async def _open(self) -> tuple[socket.socket, str, str | None, str]:
        """A connection to the daemon there: (socket, Host, token, the remote home or "")."""
        if self.remote is None:
            address, token = await asyncio.to_thread(ensure_server)
            host, _, port = address.rpartition(":")
            sock = await asyncio.to_thread(socket.create_connection, (host, int(port)), 10)
            return sock, address, token, ""
        dialer = Dialer(self.remote)
        sock = await dialer.open()
        # The bridge puts the daemon's own Host and token in place of these.
        return sock, "localhost", None, dialer.resolve(None)

    async def resolve(self, typed: str) -> str:
        """The conversation id a (prefix of an) id names there."""
        async with await Client.connect(
            client_name="openvaala-move", reconnect=False, remote=self.remote
        ) as client:
            return await resolve(client, typed)

    async def export(self, cid: str) -> bytes:
        sock, host, token, _ = await self._open()
        target = f"/api/conversations/{urllib.parse.quote(cid)}/export"
        answer = await exchange(sock, "GET", target, host=host, token=token)
        _check(answer, f"export {cid} from {self.name}")
        return answer.body

    async def import_(self, bundle: bytes, cwd: str | None, on_conflict: str) -> dict[str, Any]:
        """Import there, in `cwd`: a path of that machine (here: absolute; there: relative to
        the remote home, as `--remote`'s `:dir`)."""
        sock, host, token, home = await self._open()
        where = on_remote(home, cwd) if self.remote else (cwd or "")
        query = urllib.parse.urlencode({"onConflict": on_conflict, "cwd": where})
        answer = await exchange(
            sock, "POST", f"/api/import?{query}", bundle, host=host, token=token
        )
        _check(answer, f"import into {self.name}")
        result: dict[str, Any] = codec.parse(answer.body)
        return result


def _check(answer: Answer, doing: str) -> None:
    if answer.status == 200:
        return
    try:
        error = codec.parse(answer.body)["error"]
        kind = str((error.get("data") or {}).get("kind") or "error")  # errors.py's wire shape
        message = f"{kind}: {error.get('message', '')}"
    except (codec.JSONDecodeError, KeyError, TypeError, AttributeError):
        kind, message = "", f"HTTP {answer.status}"
    if kind == "import_conflict":  # no terminal question here: the flag is the way to answer
        message += "; pass --on-conflict keep-both or --on-conflict skip"
    raise TransferFailed(f"could not {doing}: {message}")
