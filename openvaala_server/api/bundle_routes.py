"""HTTP routes for bundles: the web UI downloads and uploads them (docs/protocol.md, "Export and
import"). Behind the same authentication and Host/Origin checks as every route (security.py)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from typing import IO

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from openvaala_server import errors
from openvaala_server.domain.bundle import MAX_TOTAL_BYTES
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.runtime import bundles
from openvaala_server.runtime.manager import ConversationManager

_CHUNK = 1 << 20
_STATUS = {"not_found": 404, "import_conflict": 409, "storage_failed": 500}


def _error(exc: errors.OpenVaalaError) -> Response:
    return JSONResponse({"error": exc.to_wire()}, status_code=_STATUS.get(exc.kind, 400))


def bundle_routes(runtime: ConversationManager) -> list[Route]:
    async def export(request: Request) -> Response:
        cid = request.path_params["cid"]
        if not is_valid_id(cid):
            return _error(errors.NotFound(f"no conversation {cid[:40]!r}"))
        spool: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the stream
        try:
            await bundles.export_to(runtime, cid, spool)
        except errors.OpenVaalaError as exc:
            spool.close()
            return _error(exc)
        except BaseException:  # cancelled (the client went away): export_to waited for its thread
            spool.close()
            raise
        spool.seek(0)

        async def stream() -> AsyncIterator[bytes]:
            try:
                while chunk := await asyncio.to_thread(spool.read, _CHUNK):
                    yield chunk
            finally:
                spool.close()

        return StreamingResponse(
            stream(),
            media_type="application/x-tar",
            headers={"Content-Disposition": f'attachment; filename="{cid}.openvaala.tar"'},
        )

    async def import_(request: Request) -> Response:
        on_conflict = request.query_params.get("onConflict", "ask")
        cwd = request.query_params.get("cwd") or None
        with tempfile.TemporaryFile() as spool:
            size = 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_TOTAL_BYTES:
                    return _error(errors.BundleInvalid("the upload is larger than any bundle"))
                await asyncio.to_thread(spool.write, chunk)
            spool.seek(0)
            try:
                result = await bundles.import_from(runtime, spool, cwd, on_conflict)
            except errors.OpenVaalaError as exc:
                return _error(exc)
        return JSONResponse(result)

    return [
        Route("/api/conversations/{cid}/export", export, methods=["GET"]),
        Route("/api/import", import_, methods=["POST"]),
    ]
