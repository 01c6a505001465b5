"""Export and import of conversations (docs/storage.md, "Export and import"): the runtime's side.

The bundle format and its checks are domain/bundle.py and store/bundle.py; this runs them off the
event loop, turns their refusals into protocol errors and indexes what was imported.
"""

from __future__ import annotations

import asyncio
import os
from typing import IO, TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.domain.bundle import ON_CONFLICT, BundleError
from openvaala_server.protocol import payloads as wire
from openvaala_server.store import bundle as store_bundle

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager


def _check_path(path: str, param: str) -> str:
    if not os.path.isabs(path):
        raise errors.InvalidParams(f'"{param}" must be an absolute path', param=param)
    return os.path.normpath(path)


async def _known(runtime: ConversationManager, cid: str) -> None:
    if not runtime.store.exists(cid):
        raise errors.NotFound(f"no conversation {cid}", param="conversationId")


async def export_to_file(runtime: ConversationManager, cid: str, path: str) -> wire.ExportResult:
    """Write the bundle to `path`, a new file (an existing one is never overwritten)."""
    await _known(runtime, cid)
    path = _check_path(path, "path")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise errors.InvalidParams(f"{path} already exists", param="path") from None
    except OSError as exc:
        raise errors.InvalidParams(f"cannot create {path}: {exc.strerror}", param="path") from None
    try:
        with os.fdopen(fd, "wb") as out:
            result = await export_to(runtime, cid, out)
            size = out.tell()
    except BaseException:
        os.unlink(path)
        raise
    return {**result, "path": path, "bytes": size}


async def export_to(runtime: ConversationManager, cid: str, out: IO[bytes]) -> wire.ExportSummary:
    await _known(runtime, cid)
    data_dir = runtime.store.data_dir
    try:
        manifest, missing = await asyncio.to_thread(store_bundle.export_bundle, data_dir, cid, out)
    except (OSError, ValueError) as exc:
        raise errors.StorageFailed(f"could not export conversation {cid}: {exc}") from None
    return {
        "conversationId": cid,
        "conversations": [e["conversationId"] for e in manifest["conversations"]],
        "missingAncestors": missing,
    }


async def import_from(
    runtime: ConversationManager, source: IO[bytes], cwd: str | None, on_conflict: str
) -> wire.ImportResult:
    if on_conflict not in ON_CONFLICT:
        raise errors.InvalidParams(
            f'"onConflict" must be one of {", ".join(ON_CONFLICT)}', param="onConflict"
        )
    if cwd is not None:
        cwd = _check_path(cwd, "cwd")
    try:
        result = await asyncio.to_thread(
            store_bundle.import_bundle,
            runtime.store.data_dir,
            source,
            exists=runtime.store.exists,
            on_conflict=on_conflict,
            cwd=cwd,
        )
    except BundleError as exc:
        raise errors.BundleInvalid(f"the bundle was refused, nothing was imported: {exc}") from None
    except store_bundle.ImportConflict as exc:
        raise errors.ImportConflict(str(exc), conversations=exc.ids) from None
    except OSError as exc:
        raise errors.StorageFailed(f"could not import: {exc.strerror or exc}") from None
    for cid in result.imported:
        await runtime.store_call(runtime.store.index_new(cid, result.index[cid]))
    return {
        "conversationId": result.conversation_id
        if result.conversation_id in result.imported
        else None,
        "imported": result.imported,
        "skipped": result.skipped,
        "renamed": result.renamed,
    }


async def import_from_file(
    runtime: ConversationManager, path: str, cwd: str | None, on_conflict: str
) -> wire.ImportResult:
    path = _check_path(path, "path")
    try:
        source = open(path, "rb")  # noqa: ASYNC230, SIM115 - one open; reading is in a thread
    except OSError as exc:
        raise errors.InvalidParams(f"cannot read {path}: {exc.strerror}", param="path") from None
    with source:
        return await import_from(runtime, source, cwd, on_conflict)
