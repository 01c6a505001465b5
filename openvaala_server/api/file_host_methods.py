"""`files/host`, `files/respond` and `files/output` (docs/protocol.md): a client that holds a
conversation's files (an editor) serves the file tools' reads and writes, and runs its commands
(runtime/file_hosts.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.api.connection import Connection
from openvaala_server.protocol import file_payloads as fp
from openvaala_server.protocol import jsonrpc, validate
from openvaala_server.protocol import methods as m
from openvaala_server.protocol.json_types import JsonMapping, JsonObject
from openvaala_server.protocol.params import Params

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]
TEXT_MAX = 64 * 1024 * 1024  # characters of one file's text (the frame limit is lower)
ERROR_MAX = 2000  # characters of the reason a host gives
OUTPUT_MAX = 1024 * 1024  # characters of one files/output (an editor keeps about as many)
# An exit code as terminals report it: negative for a process a signal killed (-9: SIGKILL, as
# Python and ACP clients give it), up to a Windows DWORD (docs/protocol.md, "Files held by an
# editor").
EXIT_CODE_MIN, EXIT_CODE_MAX = -(2**31), 2**32 - 1


def _notify(conn: Connection, method: str, params: JsonMapping) -> None:
    conn.deliver(jsonrpc.notification(method, params).decode())


def file_host_methods(runtime: ConversationManager) -> dict[str, Handler]:
    async def host(conn: Connection, p: Params) -> fp.FilesHostResult:
        cid = p.id("conversationId")
        terminal = p.boolean("terminal", False)
        files = p.boolean("files", True)
        await runtime.open(cid)  # an unknown conversation is `not_found`
        hosts = runtime.file_hosts
        if hosts.host(cid, conn, partial(_notify, conn), terminal, files):
            conn.on_close.append(partial(hosts.release, conn))
        return {"hosted": True}

    async def respond(conn: Connection, p: Params) -> fp.FilesRespondResult:
        request_id = p.id("requestId")
        try:
            _checked_answer(p)
        except errors.InvalidParams as exc:
            # The tool waiting for it fails now with the reason, not after the time-out.
            refused: JsonObject = {
                "requestId": request_id,
                "error": f"its answer was refused: {exc}",
            }
            with contextlib.suppress(errors.NotFound):
                runtime.file_hosts.respond(conn, refused)
            raise
        runtime.file_hosts.respond(conn, p.raw)
        return {"accepted": True}

    async def output(conn: Connection, p: Params) -> fp.FilesRespondResult:
        request_id = p.id("requestId")
        text = p.string("output", max_len=OUTPUT_MAX)
        runtime.file_hosts.output(conn, request_id, text)
        return {"accepted": True}

    return {m.FILES_HOST: host, m.FILES_RESPOND: respond, m.FILES_OUTPUT: output}


def _checked_answer(p: Params) -> None:
    validate.check(fp.FilesRespondParams, p.raw)  # what the dispatcher checks for the others
    p.string("error", None, max_len=ERROR_MAX)
    for key in ("text", "output"):
        p.string(key, None, max_len=TEXT_MAX)
    p.integer("exitCode", None, minimum=EXIT_CODE_MIN, maximum=EXIT_CODE_MAX)
    p.string("signal", None, max_len=100)
