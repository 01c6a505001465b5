"""`GET /attachments/<conversationId>/<sha256>`: one image of a conversation, for thumbnails.

Authenticated like every route (the security middleware runs first: token or cookie, Host and
Origin). The conversation id and the hash are checked before either becomes a path; anything
else, or an image that conversation does not hold, is 404 (docs/security.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from openvaala_server.domain import images
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.store import attachments
from openvaala_server.store.paths import DataDir, is_real_dir, is_real_file


def find(data_dir: DataDir, cid: str, sha: str) -> tuple[bytes, str] | None:
    """The bytes and media type of the conversation's image `sha`, or None (blocking)."""
    if not is_valid_id(cid) or not images.is_sha256(sha):
        return None
    conversation = data_dir.conversation_dir(cid)
    if not is_real_dir(conversation) or not is_real_dir(attachments.directory(conversation)):
        return None
    for media_type in images.MEDIA_TYPES:
        ref = images.ImageRef(sha256=sha, mediaType=media_type, size=0)
        if is_real_file(attachments.path_of(conversation, ref)):
            data = attachments.load(conversation, ref)
            return None if data is None else (data, media_type)
    return None


def endpoint(data_dir: DataDir) -> Callable[[Request], Awaitable[Response]]:
    async def attachment(request: Request) -> Response:
        cid = str(request.path_params.get("cid", ""))
        sha = str(request.path_params.get("sha", ""))
        found = await asyncio.to_thread(find, data_dir, cid, sha)
        if found is None:
            return PlainTextResponse("no such attachment", 404)
        data, media_type = found
        return Response(data, media_type=media_type)

    return attachment
