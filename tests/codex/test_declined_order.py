"""A command declined from a Codex client is told in the order Codex's own app-server tells it
(codex-cli 0.171, checked against the real `codex` with a provider faked at the wire): the
command's item starts (`inProgress`) before the approval question, and after the answer it
completes `declined`, with no output and no exit code. The Codex TUI draws that, with its own
app-server as with OpenVaala, as "You canceled the request to run …" followed by the command's
cell "Exited (status 1) … (no output)": that line is Codex's own rendering of a declined command,
not something OpenVaala adds (docs/codex.md "Approvals")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.codex.flows import demo_config, module_daemon, run_turn, start_thread
from tests.codex.harness import open_client
from tests.support.daemon import Daemon


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with module_daemon(tmp_path_factory, "declined-order", demo_config(approval="always")) as d:
        yield d


@pytest.mark.parametrize("decision", ["decline", "cancel"])
async def test_a_declined_command_starts_is_asked_then_completes_declined(
    asking: Daemon, decision: str
) -> None:
    codex = await open_client(asking, "websocket")
    try:
        thread = await start_thread(codex, str(asking.workdir))
        asked_at: list[tuple[int, str]] = []

        def answer(message: Any) -> Any:
            asked_at.append((len(codex.notes), message["params"]["itemId"]))
            return {"decision": decision}

        codex.answer = answer
        _, mark = await run_turn(codex, thread, "run: echo refused")
        [(asked, item_id)] = asked_at
        seen = [
            (i, n["method"], n["params"]["item"]["status"])
            for i, n in enumerate(codex.notes)
            if i >= mark
            and n["method"] in ("item/started", "item/completed")
            and n["params"]["item"]["type"] == "commandExecution"
            and n["params"]["item"]["id"] == item_id
        ]
    finally:
        await codex.close()
    assert [(method, status) for _, method, status in seen] == [
        ("item/started", "inProgress"),
        ("item/completed", "declined"),
    ]
    started, completed = seen[0][0], seen[1][0]
    assert started < asked <= completed  # started before the question, completed after it
