"""A command run in an editor's terminal reports its output while it runs (`files/output`,
runtime/file_hosts.py): each piece goes where the shell tool streams it, in order; once the run
is answered (or for a request that is not a run of this client), a piece is `not_found`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openvaala_server import errors
from openvaala_server.runtime.file_hosts import FileHosts
from tests.server.runtime.test_file_hosts import CID, Editor


async def test_output_reaches_the_stream_while_the_run_waits(tmp_path: Path) -> None:
    hosts, editor, other = FileHosts(), Editor(), Editor()
    hosts.host(CID, editor, editor.send, terminal=True)
    terminal = hosts.terminal_for(CID)
    assert terminal is not None
    streamed: list[str] = []
    run = asyncio.create_task(terminal.run(["make"], tmp_path, {}, 60, "call", streamed.append))
    await editor.arrived.wait()
    request_id = str(editor.asked[0][1]["requestId"])

    hosts.output(editor, request_id, "building\n")
    hosts.output(editor, request_id, "linking\n")
    assert streamed == ["building\n", "linking\n"] and not run.done()
    with pytest.raises(errors.NotFound):  # another client's output is not this run's
        hosts.output(other, request_id, "forged\n")

    hosts.respond(editor, {"requestId": request_id, "output": "building\nlinking\n", "exitCode": 0})
    assert (await run).output == "building\nlinking\n"
    with pytest.raises(errors.NotFound):  # answered: nothing runs any more
        hosts.output(editor, request_id, "late\n")
    assert streamed == ["building\n", "linking\n"]
