"""Export and import of conversations (docs/storage.md, "Export and import"): the runtime's side.

The bundle format and its checks are domain/bundle.py and store/bundle.py; this runs them off the
event loop, turns their refusals into protocol errors and indexes what was imported.

A thread cannot be cancelled: when the request is (its client went away), the awaiting side still
waits for the thread to end before it returns, so the file the thread writes or reads is closed
after it, never under it; an import that got as far as moving conversations into place still
indexes them. Then the cancellation goes on (docs/design.md, "Structured concurrency").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, TypeVar

import anyio
import anyio.lowlevel

from openvaala_server import errors
from openvaala_server.config import Config
from openvaala_server.domain.bundle import ON_CONFLICT, BundleError
from openvaala_server.domain.inheritance import wider
from openvaala_server.protocol import payloads as wire
from openvaala_server.runtime.agent_chain import own_permissions, own_tools
from openvaala_server.runtime.typed_paths import absolute_path

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager
    from openvaala_server.store import bundle as store_bundle

T = TypeVar("T")


async def _to_the_end(work: Awaitable[T]) -> tuple[asyncio.Future[T], BaseException | None]:
    """`work` run to its end even if the caller is cancelled meanwhile: it (done), and the
    cancellation that arrived, to be raised once the caller has finished what must be finished."""
    future = asyncio.ensure_future(work)
    cancelled: BaseException | None = None
    # Shielded from the connection's cancel scope (anyio delivers it again at every wake-up, a
    # busy loop for as long as the thread runs; it reaches the caller at its next await), and
    # a task's own cancel() is caught and kept.
    with anyio.CancelScope(shield=True):
        while not future.done():
            try:
                await asyncio.wait([future])
            except asyncio.CancelledError as exc:  # waited for again: the thread runs on
                cancelled = exc
    return future, cancelled


async def _finished(work: Awaitable[T]) -> T:
    """`work`'s result, once it ended; a cancellation of the caller is raised after that."""
    future, cancelled = await _to_the_end(work)
    await anyio.lowlevel.checkpoint_if_cancelled()  # the connection's scope, cancelled meanwhile
    if cancelled is not None:
        if not future.cancelled():
            future.exception()  # retrieved: it is the cancellation that goes on
        raise cancelled
    return future.result()


async def _known(runtime: ConversationManager, cid: str) -> None:
    if not runtime.store.exists(cid):
        raise errors.NotFound(f"no conversation {cid}", param="conversationId")


async def export_to_file(runtime: ConversationManager, cid: str, path: str) -> wire.ExportResult:
    """Write the bundle to `path`, a new file (an existing one is never overwritten)."""
    await _known(runtime, cid)
    path = absolute_path(path, "path")
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
    # Imported here, not at every start (docs/design.md, "Daemon start-up (issue 40)").
    from openvaala_server.store import bundle as store_bundle

    try:
        manifest, missing = await _finished(
            asyncio.to_thread(store_bundle.export_bundle, data_dir, cid, out)
        )
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
    cwd = _import_cwd(cwd)
    # Imported here, not at every start (docs/design.md, "Daemon start-up (issue 40)").
    from openvaala_server.store import bundle as store_bundle

    work, cancelled = await _to_the_end(
        asyncio.to_thread(
            store_bundle.import_bundle,
            runtime.store.data_dir,
            source,
            exists=runtime.store.exists,
            on_conflict=on_conflict,
            cwd=cwd,
            agent_for=trusted_agent(runtime.config),
        )
    )
    try:
        if cancelled is not None and work.exception() is not None:
            raise cancelled
        result = work.result()
    except BundleError as exc:
        raise errors.BundleInvalid(f"the bundle was refused, nothing was imported: {exc}") from None
    except store_bundle.ImportConflict as exc:
        raise errors.ImportConflict(str(exc), conversations=exc.ids) from None
    except OSError as exc:
        raise errors.StorageFailed(f"could not import: {exc.strerror or exc}") from None
    # In place now: indexed even if the request was cancelled meanwhile, else they would be
    # on disk and never listed until a reindex.
    indexed, cancelled_again = await _to_the_end(_index(runtime, result))
    indexed.result()
    stop = cancelled or cancelled_again
    if stop is not None:
        raise stop
    await anyio.lowlevel.checkpoint_if_cancelled()
    return {
        "conversationId": result.conversation_id
        if result.conversation_id in result.imported
        else None,
        "imported": result.imported,
        "skipped": result.skipped,
        "renamed": result.renamed,
        "grantsDropped": result.grants_dropped,
        "agentsReset": result.agents_reset,
        "cwd": cwd,
    }


def _import_cwd(cwd: str | None) -> str:
    """The working directory an import gives its conversations: the one the request names, an
    existing directory. Never the one the bundle names: that directory becomes the sandbox's
    writable area, and a bundle naming `~` made `~/.bashrc` a file "inside the workspace"
    (docs/design.md, "An import's working directory")."""
    if cwd is None:
        raise errors.InvalidParams(
            '"cwd" is required: an imported conversation works in the directory you give it, '
            "never in one its bundle names",
            param="cwd",
        )
    cwd = absolute_path(cwd, "cwd")
    if not os.path.isdir(cwd):
        raise errors.CwdMissing(f"the working directory {cwd} does not exist", cwd=cwd)
    return cwd


def trusted_agent(config: Config) -> Callable[[str], str]:
    """What an imported conversation may run as, for each agent its bundle names: that agent
    when it is configured here and asks for no more than the default agent — permissions,
    limits and tools (domain/inheritance.wider) — else the default agent. A bundle must not
    choose the widest agent configured here (docs/security.md, "Checkpoints and bundles"), nor
    a name configured nowhere yet: an agent of that name added later (or by a reload) would
    take the conversation over with whatever it is given then."""
    default = config.default_agent
    ceiling = own_permissions(config, default)
    ceiling_tools = own_tools(config, default)

    def agent_for(name: str) -> str:
        if name in config.agents and not wider(
            own_permissions(config, name), ceiling, own_tools(config, name), ceiling_tools
        ):
            return name
        return default

    return agent_for


async def _index(runtime: ConversationManager, result: store_bundle.ImportResult) -> None:
    for cid in result.imported:
        await runtime.store_call(runtime.store.index_new(cid, result.index[cid]))


async def import_from_file(
    runtime: ConversationManager, path: str, cwd: str | None, on_conflict: str
) -> wire.ImportResult:
    path = absolute_path(path, "path")
    try:
        source = open(path, "rb")  # noqa: ASYNC230, SIM115 - one open; reading is in a thread
    except OSError as exc:
        raise errors.InvalidParams(f"cannot read {path}: {exc.strerror}", param="path") from None
    with source:
        return await import_from(runtime, source, cwd, on_conflict)
