"""The runtime's background work is owned by its supervisor (issue 25; docs/design.md,
"Structured concurrency"): a manual compaction, an early compaction being prepared, the loading
of a history are activities of `ConversationManager.tasks`, so leaving the runtime cancels them
and waits for them — nothing is left running, and a request waiting for one gets its answer.
"""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

from openvaala_server.config import parse_config
from openvaala_server.models.base import ModelRequest, TextDelta
from openvaala_server.runtime.manager import ConversationManager
from openvaala_server.store.paths import DataDir
from tests.server.runtime.conftest import CONFIG, WAIT_S, Core, make_runtime, running
from tests.support.memory_store import MemoryStore
from tests.support.scripted_model import Script


class HeldSummary:
    """A compaction call that is held (never answered) and says when it has arrived."""

    def __init__(self, script: Script) -> None:
        self.arrived = asyncio.Event()
        script.reply(TextDelta("Summ"), asyncio.Event(), when=self._accept)

    def _accept(self, request: ModelRequest) -> bool:
        if request.purpose != "compaction":
            return False
        self.arrived.set()
        return True

    async def called(self) -> None:
        await asyncio.wait_for(self.arrived.wait(), WAIT_S)


def _names(runtime: ConversationManager) -> list[str]:
    return sorted(activity.name for activity in runtime.tasks.activities)


async def test_leaving_the_runtime_during_a_manual_compaction_ends_it(tmp_path: Path) -> None:
    before = asyncio.all_tasks()
    script = Script()
    store = MemoryStore(DataDir(tmp_path / "home"))
    cwd = tmp_path / "work"
    cwd.mkdir()
    config = parse_config(tomllib.loads(CONFIG))
    async with running(make_runtime(config, store, script)) as runtime:
        core = Core(runtime, store, script, cwd)
        conv, _events = await core.new()
        script.text("One.")
        await core.turn(conv, "first")
        script.text("Two.")
        await core.turn(conv, "second")
        held = HeldSummary(script)  # the summary is still being written at shutdown
        request = asyncio.create_task(runtime.compact_now(conv.conversation_id))
        await held.called()
        assert f"compaction-{conv.conversation_id}" in _names(runtime)
    # The runtime is gone (shutdown, then its supervisor left): the compaction was cancelled
    # and awaited, and the request waiting for it was answered.
    assert await asyncio.wait_for(request, WAIT_S) == {"compacted": False, "reason": "interrupted"}
    assert script.calls[-1].cancelled
    assert not conv.root.compacting
    assert asyncio.all_tasks() - before == {asyncio.current_task()} - before


async def test_an_early_compaction_being_prepared_is_the_runtimes_and_ends_with_it(
    tmp_path: Path,
) -> None:
    before = asyncio.all_tasks()
    script = Script()
    store = MemoryStore(DataDir(tmp_path / "home"))
    cwd = tmp_path / "work"
    cwd.mkdir()
    early = CONFIG.replace(
        'tools = ["read_file", "write_file", "update_plan", "spawn_agent"]\n',
        'tools = ["read_file", "write_file", "update_plan", "spawn_agent"]\n'
        "early_compaction = 0.3\n",
    )
    config = parse_config(tomllib.loads(early))
    assert config.agents["default"].early_compaction == 0.3
    held = HeldSummary(script)  # still preparing at shutdown
    async with running(make_runtime(config, store, script)) as runtime:
        core = Core(runtime, store, script, cwd)
        conv, _events = await core.new()
        # Each reply reports a context past the early threshold (0.3 of 7000), below the
        # compaction threshold: as the session goes idle, a summary is prepared.
        for n in range(6):
            script.reply(TextDelta(f"Reply {n}."), usage=(2500 + 100 * n, 10))
            await core.turn(conv, "word " * 800)
            if held.arrived.is_set():
                break
        await held.called()
        preparing = conv.root.preparing
        assert preparing is not None and preparing in runtime.tasks.activities
        assert preparing.name.startswith("early-compaction-")
    # Leaving the runtime cancelled the preparation and waited for it: its end ran (it is no
    # longer "preparing") and no task of it is left.
    assert preparing.finished and conv.root.preparing is None
    assert script.calls[-1].cancelled
    assert asyncio.all_tasks() - before == {asyncio.current_task()} - before
