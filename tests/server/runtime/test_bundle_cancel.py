"""An export or import whose request is cancelled (its client went away) while its thread works:
the thread never writes into a descriptor the daemon has closed and given to another file, the
request ends only once the thread has, and conversations already moved into place are indexed."""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import anyio
import pytest
from starlette.requests import Request

from openvaala_server.api import bundle_routes
from openvaala_server.config import parse_config
from openvaala_server.runtime import bundles
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store import bundle as sb
from openvaala_server.store import bundle_copy
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import created, message

T = TypeVar("T")


class _Runtime:
    """What the bundle service uses of a ConversationManager."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.config = parse_config({}, None)  # which agents an import may keep

    async def store_call(self, call: Awaitable[T]) -> T:
        return await call


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    data = DataDir(tmp_path / "home")
    data.ensure()
    opened = await Store.open(data)
    yield opened
    await opened.close()


async def _conversation(store: Store) -> str:
    c = created("x")
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("hi" * 1000)])
    return str(c["conversationId"])


class _Gate:
    """Holds every member copy (`copy_range`) until opened: the thread is mid-bundle."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()
        real = bundle_copy.copy_range

        def held(*args: Any) -> int:
            self.entered.set()
            self.open.wait(30)
            return real(*args)

        monkeypatch.setattr(bundle_copy, "copy_range", held)

    async def reached(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 30)


def _finished_flag(monkeypatch: pytest.MonkeyPatch, name: str) -> threading.Event:
    """Set once the store's `name` (export_bundle, import_bundle) has returned or raised."""
    finished = threading.Event()
    real = getattr(sb, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return real(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(sb, name, wrapped)
    return finished


async def test_an_export_thread_never_writes_into_a_reused_descriptor(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's side: the file object is closed under the export (as a cancelled request's
    `with` closes it) and its number given to another file."""
    cid = await _conversation(store)
    gate = _Gate(monkeypatch)
    fd = os.open(tmp_path / "out.tar", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    out = os.fdopen(fd, "wb")
    failed: list[BaseException] = []

    def export() -> None:
        try:
            sb.export_bundle(store.data_dir, cid, out)
        except BaseException as exc:  # the closed file object, at its end
            failed.append(exc)

    thread = threading.Thread(target=export)
    thread.start()
    victim = tmp_path / "victim.jsonl"
    try:
        await gate.reached()
        out.close()
        vfd = os.open(victim, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        assert vfd == fd  # the number the export was given
    finally:
        gate.open.set()
        await asyncio.to_thread(thread.join, 30)
    os.close(vfd)
    assert victim.read_bytes() == b""


async def test_a_cancelled_export_ends_after_its_thread(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = await _conversation(store)
    gate = _Gate(monkeypatch)
    finished = _finished_flag(monkeypatch, "export_bundle")
    path = tmp_path / "out.tar"
    runtime = cast(ConversationManager, _Runtime(store))
    task = asyncio.create_task(bundles.export_to_file(runtime, cid, str(path)))
    try:
        await gate.reached()
        task.cancel()
        asyncio.get_running_loop().call_later(0.2, gate.open.set)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()  # its file was closed after the thread, never under it
        assert not path.exists()
    finally:
        gate.open.set()
        await asyncio.to_thread(finished.wait, 30)


async def test_an_export_whose_cancel_scope_is_cancelled_ends_after_its_thread(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the daemon cancels a request: its connection's cancel scope."""
    cid = await _conversation(store)
    gate = _Gate(monkeypatch)
    finished = _finished_flag(monkeypatch, "export_bundle")
    path = tmp_path / "out.tar"
    runtime = cast(ConversationManager, _Runtime(store))
    try:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(bundles.export_to_file, runtime, cid, str(path))
                await gate.reached()
                scope.cancel()
                asyncio.get_running_loop().call_later(0.2, gate.open.set)
        assert scope.cancelled_caught
        assert finished.is_set()
        assert not path.exists()
    finally:
        gate.open.set()
        await asyncio.to_thread(finished.wait, 30)


async def test_the_http_export_closes_its_spool_when_cancelled(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = await _conversation(store)
    gate = _Gate(monkeypatch)
    finished = _finished_flag(monkeypatch, "export_bundle")
    spools: list[IO[bytes]] = []
    real = tempfile.TemporaryFile

    def spool() -> IO[bytes]:
        spools.append(real())
        return spools[-1]

    monkeypatch.setattr(tempfile, "TemporaryFile", spool)
    routes = bundle_routes.bundle_routes(cast(ConversationManager, _Runtime(store)))
    export = next(r for r in routes if r.path.endswith("/export")).endpoint
    request = Request({"type": "http", "method": "GET", "path_params": {"cid": cid}})
    task = asyncio.create_task(export(request))
    try:
        await gate.reached()
        task.cancel()
        gate.open.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [s.closed for s in spools] == [True]
    finally:
        gate.open.set()
        await asyncio.to_thread(finished.wait, 30)
        for s in spools:
            s.close()


async def test_a_cancelled_import_still_lists_what_it_moved_into_place(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = await _conversation(store)
    bundle = tmp_path / "b.tar"
    with open(bundle, "wb") as out:  # noqa: ASYNC230 - a small file, before the test starts
        sb.export_bundle(store.data_dir, cid, out)
    await store.delete_conversation(cid)
    gate = _Gate(monkeypatch)
    finished = _finished_flag(monkeypatch, "import_bundle")
    runtime = cast(ConversationManager, _Runtime(store))
    task = asyncio.create_task(bundles.import_from_file(runtime, str(bundle), str(tmp_path), "ask"))
    try:
        await gate.reached()
        task.cancel()
        asyncio.get_running_loop().call_later(0.2, gate.open.set)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished.is_set()
    finally:
        gate.open.set()
        await asyncio.to_thread(finished.wait, 30)
    listed, _ = await store.list_conversations()
    assert [c["conversationId"] for c in listed] == [cid]
