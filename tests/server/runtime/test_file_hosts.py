"""The registry of editors holding conversations' files (runtime/file_hosts.py): a request waits
for its host's answer; a host that goes away fails what waited on it at once and hosts nothing
more (the tools use the disk again); one that never answers fails the call saying so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openvaala_server import errors
from openvaala_server.runtime.file_hosts import FileHosts
from openvaala_server.tools.base import HostFailed

CID = "c" * 32


class Editor:
    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, object]]] = []
        self.arrived = asyncio.Event()

    def send(self, method: str, params: object) -> None:
        assert isinstance(params, dict)
        self.asked.append((method, params))
        self.arrived.set()


async def test_a_read_is_answered_by_the_host(tmp_path: Path) -> None:
    hosts, editor = FileHosts(), Editor()
    assert hosts.host(CID, editor, editor.send)
    files = hosts.for_conversation(CID, tmp_path)
    assert files is not None and files.holds(tmp_path / "a.txt")
    assert not files.holds(tmp_path.parent / "elsewhere.txt")
    read = asyncio.create_task(files.read(tmp_path / "a.txt"))
    await editor.arrived.wait()
    method, params = editor.asked[0]
    assert (method, params["op"], params["path"]) == (
        "files/requested",
        "read",
        str(tmp_path / "a.txt"),
    )
    hosts.respond(editor, {"requestId": str(params["requestId"]), "text": "buffer text"})
    assert await read == "buffer text"
    with pytest.raises(errors.NotFound):  # answered already
        hosts.respond(editor, {"requestId": str(params["requestId"]), "text": "again"})


async def test_a_host_that_leaves_fails_its_requests_and_hosts_nothing_more(tmp_path: Path) -> None:
    hosts, editor = FileHosts(), Editor()
    hosts.host(CID, editor, editor.send)
    files = hosts.for_conversation(CID, tmp_path)
    assert files is not None
    write = asyncio.create_task(files.write(tmp_path / "a.txt", "new"))
    await editor.arrived.wait()
    hosts.release(editor)
    with pytest.raises(HostFailed, match="went away"):
        await write
    assert hosts.for_conversation(CID, tmp_path) is None


async def test_a_host_that_never_answers_fails_the_call(tmp_path: Path) -> None:
    hosts, editor = FileHosts(timeout_s=0.01), Editor()
    hosts.host(CID, editor, editor.send)
    files = hosts.for_conversation(CID, tmp_path)
    assert files is not None
    with pytest.raises(HostFailed, match="did not answer"):
        await files.read(tmp_path / "a.txt")


async def test_an_interrupted_run_tells_the_host_to_stop_it(tmp_path: Path) -> None:
    hosts, editor = FileHosts(), Editor()
    hosts.host(CID, editor, editor.send, terminal=True)
    terminal = hosts.terminal_for(CID)
    assert terminal is not None
    run = asyncio.create_task(
        terminal.run(["sleep", "600"], tmp_path, {}, 600, "call", lambda _text: None)
    )
    await editor.arrived.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (_, started), (_, stop) = editor.asked
    assert (started["op"], stop["op"]) == ("run", "cancel")
    assert stop["requestId"] == started["requestId"]


def test_one_client_hosts_each_conversation_as_it_asked(tmp_path: Path) -> None:
    # One connection (one `openvaala acp`) hosting two conversations, differently: hosting the
    # second does not change what it serves for the first.
    hosts, editor = FileHosts(), Editor()
    other = "d" * 32
    assert hosts.host(CID, editor, editor.send, terminal=True, files=True)
    assert not hosts.host(other, editor, editor.send, terminal=False, files=False)
    assert hosts.terminal_for(CID) is not None and hosts.for_conversation(CID, tmp_path)
    assert hosts.terminal_for(other) is None and hosts.for_conversation(other, tmp_path) is None
    hosts.release(editor)
    assert hosts.terminal_for(CID) is None and hosts.for_conversation(CID, tmp_path) is None
