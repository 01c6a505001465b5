"""A call the user's answer kept from running ends `declined`, as Codex ends it (no output, no
exit code), not `failed`: declined by this Codex client, cancelled, or denied from another
OpenVaala client, live and read back from the history; a command that ran and failed stays
`failed` (docs/codex.md "Items")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.codex.flows import (
    answered_elsewhere,
    demo_config,
    items_of,
    module_daemon,
    run_turn,
    start_thread,
)
from tests.codex.harness import CodexClient, open_client
from tests.support.daemon import Daemon


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the module, whose agent asks before every command and every edit."""
    with module_daemon(tmp_path_factory, "declined", demo_config(approval="always")) as daemon:
        yield daemon


def _answer(decision: str) -> Any:
    return lambda message: {"decision": decision}


def _declined_command(item: dict[str, Any]) -> None:
    assert item["status"] == "declined", item
    assert item["exitCode"] is None and item["aggregatedOutput"] is None, item


async def _history(codex: CodexClient, thread: str) -> dict[str, Any]:
    """Every item of the thread as `thread/read` gives it, by id."""
    read = await codex.request("thread/read", {"threadId": thread, "includeTurns": True})
    return {i["id"]: i for turn in read["thread"]["turns"] for i in turn["items"]}


@pytest.mark.parametrize("decision", ["decline", "cancel"])
async def test_a_command_the_codex_client_refuses_ends_declined(
    asking: Daemon, decision: str
) -> None:
    codex = await open_client(asking, "websocket")
    try:
        thread = await start_thread(codex, str(asking.workdir))
        codex.answer = _answer(decision)
        _, mark = await run_turn(codex, thread, "run: echo refused")
        [refused] = items_of(codex, mark, "item/completed", "commandExecution")
        _declined_command(refused)
        _declined_command((await _history(codex, thread))[refused["id"]])
    finally:
        await codex.close()


async def test_a_file_change_the_codex_client_declines_ends_declined(asking: Daemon) -> None:
    (asking.workdir / "keep.py").write_text("a = 1\nb = 2\n")
    codex = await open_client(asking, "websocket")
    try:
        thread = await start_thread(codex, str(asking.workdir))
        codex.answer = _answer("decline")
        edit = {"path": "keep.py", "old_text": "b = 2", "new_text": "b = 3"}
        _, mark = await run_turn(codex, thread, f"call: edit_file {json.dumps(edit)}")
        [refused] = items_of(codex, mark, "item/completed", "fileChange")
        assert refused["status"] == "declined", refused
        assert "+b = 3" in refused["changes"][0]["diff"]  # what it proposed
        assert (await _history(codex, thread))[refused["id"]]["status"] == "declined"
        assert (asking.workdir / "keep.py").read_text() == "a = 1\nb = 2\n"
    finally:
        await codex.close()


async def test_a_command_denied_from_another_client_ends_declined(asking: Daemon) -> None:
    codex = await open_client(asking, "websocket")
    try:
        thread = await start_thread(codex, str(asking.workdir))
        _, mark = await answered_elsewhere(asking, codex, thread, "run: echo hi", "deny")
        [refused] = items_of(codex, mark, "item/completed", "commandExecution")
        _declined_command(refused)
    finally:
        await codex.close()


async def test_a_command_that_ran_and_failed_stays_failed(asking: Daemon) -> None:
    codex = await open_client(asking, "websocket")
    try:
        thread = await start_thread(codex, str(asking.workdir))
        codex.answer = _answer("accept")
        _, mark = await run_turn(codex, thread, "run: exit 3")
        [ran] = items_of(codex, mark, "item/completed", "commandExecution")
        assert ran["status"] == "failed" and ran["exitCode"] == 3, ran
    finally:
        await codex.close()
